"""``GraphModule`` and ``create``: TVM's Python face of a graph executor, local or remote.

``GraphModule`` wraps an executor module (what ``lib["default"](dev)`` or
``tvm.graph_executor.create`` returns) and calls its packed functions, so it works the same for an
executor in this process and one on an RPC server: inputs are copied into the executor's input
arrays (through RPC for a remote one) and outputs come back as arrays on its device.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi import Device
from ...ffi.dtype import dtype as make_dtype
from ...ffi.errors import TVMTypeError, TVMValueError
from ..module import Module
from ..ndarray import NDArray
from ..time_evaluator import BenchmarkResult

__all__ = ["GraphModule", "create", "executor_create_args"]


def executor_create_args(lib: Module, device: Device | Sequence[Device], what: str) -> list[int]:
    """Devices as TVM passes them to ``tvm.graph_executor.create``: type and id pairs, the RPC
    session mask removed; all devices remote (and ``lib`` remote) or none.
    """
    devices = [device] if isinstance(device, Device) else list(device)
    if not devices or not all(isinstance(d, Device) for d in devices):
        raise TVMTypeError(f"{what}: device must be a Device or a list of Devices, got {device!r}")
    remote = [d.is_remote for d in devices]
    if any(remote) and not all(remote):
        raise TVMValueError(f"{what}: either all or none of the devices must be RPC devices")
    if all(remote) != (lib.type_key == "rpc"):
        where = "remote" if all(remote) else "local"
        raise TVMValueError(
            f"{what}: the devices are {where} but the library is "
            f"{'remote' if lib.type_key == 'rpc' else 'local'}; load the library where it runs "
            "(remote.load_module for a server's devices)"
        )
    return [v for d in devices for v in (d.base_type, d.device_id)]


def create(graph_json_str: str, libmod: Module, device: Device | Sequence[Device]) -> GraphModule:
    """An executor of ``graph_json_str`` running ``libmod``'s kernels on ``device``, wrapped.

    For a remote ``libmod`` (``remote.load_module(...)``) with the session's devices, the
    executor is created on the server (its global ``tvm.graph_executor.create``).
    """
    if not isinstance(graph_json_str, str):
        raise TVMTypeError(
            f"create: graph_json_str must be str, got {type(graph_json_str).__name__}"
        )
    args = executor_create_args(libmod, device, "graph_executor.create")
    fcreate = libmod.global_function("tvm.graph_executor.create")
    return GraphModule(fcreate(graph_json_str, libmod, *args))


class GraphModule:
    """TVM's ``graph_executor.GraphModule``: set inputs, run, read outputs, time.

    Examples
    --------
    >>> import numpy as np, pytvm
    >>> g = ('{"nodes": [{"op": "null", "name": "x", "inputs": []}], "arg_nodes": [0],'
    ...      ' "heads": [[0, 0, 0]], "node_row_ptr": [0, 1], "attrs": {"storage_id": ["list_int",'
    ...      ' [0]], "shape": ["list_shape", [[2]]], "dltype": ["list_str", ["float32"]]}}')
    >>> m = create(g, pytvm.runtime.Module.from_functions("empty", {}), pytvm.cpu())
    >>> m.run(x=np.array([3, 4], "float32"))
    >>> m.get_output(0).numpy().tolist(), m.get_num_inputs(), m.get_num_outputs()
    ([3.0, 4.0], 1, 1)
    """

    def __init__(self, module: Module) -> None:
        if not isinstance(module, Module):
            raise TVMTypeError(f"GraphModule wraps an executor module, got {type(module).__name__}")
        self.module = module
        self._set_input = module["set_input"]
        self._run = module["run"]
        self._get_output = module["get_output"]
        self._get_input = module["get_input"]
        self._get_num_outputs = module["get_num_outputs"]
        self._get_num_inputs = module["get_num_inputs"]
        self._get_input_index = module["get_input_index"]
        self._load_params = module["load_params"]
        self._share_params = module["share_params"]

    def _copy_in(self, key: Any, value: Any) -> None:
        target = self._get_input(key)
        if not isinstance(value, NDArray):
            value = np.asarray(value)
        shape = tuple(value.shape)
        dtype = value.dtype if isinstance(value, NDArray) else str(make_dtype(value.dtype))
        if shape != target.shape or dtype != target.dtype:
            raise TVMValueError(
                f"set_input: input {key!r} expects shape {target.shape} {target.dtype}, got "
                f"{shape} {dtype}"
            )
        target.copyfrom(value)

    def set_input(self, key: int | str | None = None, value: Any = None, **params: Any) -> None:
        """Copy ``value`` into input ``key`` (name or index) and each ``name=value`` of
        ``params`` (largest first, as TVM, to ease memory on a remote device).
        """
        if key is not None:
            self._copy_in(key, value)
        for name in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k])))):
            self._copy_in(name, params[name])

    def run(self, **input_dict: Any) -> None:
        """Set the inputs given by name, then run the graph."""
        if input_dict:
            self.set_input(**input_dict)
        self._run()

    def get_num_outputs(self) -> int:
        """Number of graph outputs."""
        return int(self._get_num_outputs())

    def get_num_inputs(self) -> int:
        """Number of graph inputs (parameters included, as TVM counts them)."""
        return int(self._get_num_inputs())

    def get_input(self, index: int | str, out: NDArray | None = None) -> NDArray:
        """Input ``index`` (name or index), copied into ``out`` when given."""
        arr: NDArray = self._get_input(index)
        if out is not None:
            arr.copyto(out)
            return out
        return arr

    def get_input_index(self, name: str) -> int:
        """Index of the input ``name``, -1 if there is none."""
        return int(self._get_input_index(name))

    def get_input_info(self) -> tuple[dict[str, tuple[int, ...]], dict[str, str]]:
        """Shapes and dtypes of the inputs, by name."""
        info = json.loads(self.module["get_input_info"]())
        return {k: tuple(v) for k, v in info["shape"].items()}, dict(info["dtype"])

    def get_output(self, index: int, out: NDArray | None = None) -> NDArray:
        """Output ``index``, copied into ``out`` when given."""
        if out is not None:
            self._get_output(index, out)
            return out
        arr: NDArray = self._get_output(index)
        return arr

    def load_params(self, params_bytes: bytes | bytearray) -> None:
        """Set inputs from parameter bytes (``save_param_dict``'s format)."""
        self._load_params(bytes(params_bytes))

    def share_params(self, other: GraphModule, params_bytes: bytes | bytearray) -> None:
        """Use ``other``'s arrays for the parameters named in ``params_bytes`` (no copy)."""
        self._share_params(other.module, bytes(params_bytes))

    def __getitem__(self, key: str) -> Any:
        """The executor module's function ``key``."""
        return self.module[key]

    def benchmark(
        self,
        device: Device,
        func_name: str = "run",
        repeat: int = 5,
        number: int = 5,
        min_repeat_ms: int | None = None,
        end_to_end: bool = False,
        **kwargs: Any,
    ) -> BenchmarkResult:
        """Time ``func_name`` (``run``) where the executor lives, as TVM's ``benchmark``.

        With ``end_to_end``, each timed call also copies the inputs in (``kwargs``, arrays on
        the executor's side) and the outputs out to ``device``'s host.
        """
        min_ms = 0 if min_repeat_ms is None else int(min_repeat_ms)
        if end_to_end:
            args: list[Any] = []
            for name, value in kwargs.items():
                args += [name, value]
            timer = self.module.time_evaluator(
                "run_from_inputs", device, repeat=repeat, number=number, min_repeat_ms=min_ms
            )
            result: BenchmarkResult = timer(device.base_type, device.device_id, *args)
            return result
        if kwargs:
            self.set_input(**kwargs)
        timer = self.module.time_evaluator(
            func_name, device, repeat=repeat, number=number, min_repeat_ms=min_ms
        )
        result = timer()
        return result
