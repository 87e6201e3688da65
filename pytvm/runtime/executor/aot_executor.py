"""TVM v0.18's ``AotModule``: the host side of an AOT executor module.

The module (``tvm.aot_executor.create(...)`` on a device, e.g. through
``pytvm.micro.Session.create_aot_executor``) holds the model's static input and output buffers
and offers ``get_num_inputs``, ``get_num_outputs``, ``get_input_index(name)``,
``get_input_name(i)``, ``get_input_info(i)`` / ``get_output_info(i)`` (``"name|dtype|d0,d1"``),
``set_input(index, tensor)``, ``get_input(index, out)``, ``get_output(index, out)`` and
``run``. Tensors cross as arrays on the executor's device: this wrapper stages numpy values in
one device array per input (allocated on first use) and returns outputs as new arrays on that
device.

As in TVM, ``get_input(key)`` returns the input's array itself: its staging array, loaded with
the model's current input, and copied back into the model before each ``run`` until the input
is set again (so ``get_input("x").copyfrom(data)`` then ``run()`` runs on ``data``).

Examples
--------
>>> with tvm.micro.Session(project.transport()) as sess:          # doctest: +SKIP
...     executor = sess.create_aot_executor()
...     executor.set_input("input", np.zeros((1, 3, 32, 32), "float32"))
...     executor.run()
...     executor.get_output(0).numpy().shape
(1, 10)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ffi import Device, cpu
from ...ffi.errors import TVMKeyError, TVMTypeError, TVMValueError
from ..module import Module
from ..ndarray import NDArray, empty

__all__ = ["AotExecutor", "AotModule", "TensorSpec"]

#: Fields of the executor's tensor info text: name, dtype, shape.
_INFO_FIELDS = 3


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """An input or output of the model as the executor reports it."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    @staticmethod
    def parse(text: str) -> TensorSpec:
        """Read the executor's ``"name|dtype|d0,d1,..."``."""
        parts = text.rsplit("|", _INFO_FIELDS - 1)
        if len(parts) != _INFO_FIELDS:
            raise TVMValueError(
                f"AOT executor tensor info {text!r} is not 'name|dtype|d0,d1,...'; the device "
                "runs an executor of another version"
            )
        name, dtype, dims = parts
        shape = tuple(int(d) for d in dims.split(",")) if dims else ()
        return TensorSpec(name, dtype, shape)


class AotModule:
    """Wraps an AOT executor module (TVM v0.18's ``tvm.runtime.executor.AotModule``).

    Parameters
    ----------
    module : Module
        The executor module (``tvm.aot_executor.create`` returns it).
    device : Device, optional
        Where the module's arrays live (a session's ``device``); default ``cpu(0)``.
    """

    def __init__(self, module: Module | AotModule, device: Device | None = None) -> None:
        if isinstance(module, AotModule):  # TVM scripts wrap what create_aot_executor returns
            device = module.device if device is None else device
            module = module.module
        self.module: Module = module
        self.device: Device = cpu(0) if device is None else device
        mod = self.module
        self._set_input = mod["set_input"]
        self._get_input = mod["get_input"]
        self._get_output = mod["get_output"]
        self._run = mod["run"]
        self._num_inputs = int(mod["get_num_inputs"]())
        self._num_outputs = int(mod["get_num_outputs"]())
        info_in, info_out = mod["get_input_info"], mod["get_output_info"]
        self._inputs = [TensorSpec.parse(str(info_in(i))) for i in range(self._num_inputs)]
        self._outputs = [TensorSpec.parse(str(info_out(i))) for i in range(self._num_outputs)]
        self._staged: dict[int, NDArray] = {}
        #: Inputs whose staging array was handed out by get_input: copied in before each run.
        self._handed_out: set[int] = set()

    # ------------------------------------------------------------------ description

    def get_num_inputs(self) -> int:
        """The number of inputs of the model."""
        return self._num_inputs

    def get_num_outputs(self) -> int:
        """The number of outputs of the model."""
        return self._num_outputs

    def get_input_index(self, name: str) -> int:
        """The index of the input called ``name``; -1 when the model has none (as TVM)."""
        return int(self.module["get_input_index"](name))

    def get_input_name(self, index: int) -> str:
        """The name of input ``index``."""
        return self._input_spec(index).name

    def get_input_info(self) -> tuple[dict[str, tuple[int, ...]], dict[str, str]]:
        """``(shape_dict, dtype_dict)`` of the inputs, keyed by name (as TVM)."""
        return {s.name: s.shape for s in self._inputs}, {s.name: s.dtype for s in self._inputs}

    def get_output_info(self) -> tuple[dict[str, tuple[int, ...]], dict[str, str]]:
        """``(shape_dict, dtype_dict)`` of the outputs, keyed by name."""
        return {s.name: s.shape for s in self._outputs}, {s.name: s.dtype for s in self._outputs}

    @property
    def input_specs(self) -> list[TensorSpec]:
        """Name, dtype and shape of every input, in order."""
        return list(self._inputs)

    @property
    def output_specs(self) -> list[TensorSpec]:
        """Name, dtype and shape of every output, in order."""
        return list(self._outputs)

    # ------------------------------------------------------------------ execution

    def set_input(self, key: int | str | None = None, value: Any = None, **params: Any) -> None:
        """Copy ``value`` (numpy, array-like or NDArray) into input ``key`` (index or name);
        ``params`` sets more inputs by name.
        """
        if key is not None:
            if value is None:
                raise TVMValueError(f"AotModule.set_input({key!r}): no value given")
            self._set_one(self._resolve(key), value)
        for name, val in params.items():
            self._set_one(self._resolve(name), val)

    def run(self, **input_dict: Any) -> None:
        """Set the inputs given by name, then run the model once on the device."""
        if input_dict:
            self.set_input(**input_dict)
        for index in sorted(self._handed_out):
            self._set_input(index, self._staged[index])
        self._run()

    def get_input(self, index: int | str, out: NDArray | None = None) -> NDArray:
        """Input ``index`` (index or name): copied into ``out`` when given; else the input's
        own array, whose contents the next ``run`` uses (TVM's semantics).
        """
        i = self._resolve(index)
        if out is not None:
            self._get_input(i, out)
            return out
        staged = self._staging(i)
        self._get_input(i, staged)
        self._handed_out.add(i)
        return staged

    def get_output(self, index: int, out: NDArray | None = None) -> NDArray:
        """Output ``index`` as a new array on the device (or copied into ``out``)."""
        spec = self._output_spec(index)
        target = out if out is not None else empty(spec.shape, spec.dtype, self.device)
        self._get_output(int(index), target)
        return target

    # ------------------------------------------------------------------ helpers

    def _resolve(self, key: int | str) -> int:
        if isinstance(key, str):
            index = self.get_input_index(key)
            if index < 0:
                names = [s.name for s in self._inputs]
                raise TVMKeyError(f"the model has no input {key!r}; its inputs are {names}")
            return index
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TVMTypeError(f"an input is named by index or name, got {type(key).__name__}")
        self._input_spec(int(key))
        return int(key)

    def _input_spec(self, index: int) -> TensorSpec:
        if not 0 <= index < self._num_inputs:
            raise TVMValueError(
                f"input index {index} is out of range: the model has {self._num_inputs} input(s)"
            )
        return self._inputs[index]

    def _output_spec(self, index: int) -> TensorSpec:
        if not 0 <= index < self._num_outputs:
            raise TVMValueError(
                f"output index {index} is out of range: the model has {self._num_outputs} output(s)"
            )
        return self._outputs[index]

    def _staging(self, index: int) -> NDArray:
        staged = self._staged.get(index)
        if staged is None:
            spec = self._inputs[index]
            staged = self._staged[index] = empty(spec.shape, spec.dtype, self.device)
        return staged

    def _set_one(self, index: int, value: Any) -> None:
        self._handed_out.discard(index)
        if isinstance(value, NDArray) and value.device == self.device:
            self._set_input(index, value)  # the device checks its dtype and shape
            return
        spec = self._inputs[index]
        host = value.numpy() if isinstance(value, NDArray) else value
        if not isinstance(host, np.ndarray):
            host = np.asarray(host, dtype=spec.dtype)
        if host.shape != spec.shape or str(host.dtype) != spec.dtype:
            raise TVMValueError(
                f"input {spec.name!r} is {spec.dtype}{list(spec.shape)}, the value given is "
                f"{host.dtype}{list(host.shape)}; convert it (e.g. value.astype({spec.dtype!r}))"
            )
        staged = self._staging(index)
        staged.copyfrom(host)
        self._set_input(index, staged)


#: The name in this project's contracts; TVM v0.18 calls the class ``AotModule``.
AotExecutor = AotModule
