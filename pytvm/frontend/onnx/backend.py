"""ONNX's backend interface over pytvm (``onnx.backend.base.Backend``), as
``onnxruntime.backend`` offers it: ``prepare(model, device="CPU")`` returns a rep whose
``run(inputs)`` returns the outputs; ``run_model``; ``supports_device``.

A model is imported and compiled once per content (the SHA-256 of its bytes, the device and
the options): preparing the same model again returns the cached executable. Where a node needs
the value of a graph input at import time (a shape, axes or pads fed as an input), the model
is specialized to the values of those inputs at ``run`` and cached per value.

The executable comes from :func:`_executable`, the one place that decides how a graph runs:
``executor="graph"`` (the default) compiles it with :func:`pytvm.graph.build` for ``target``
(default: the current target, else ``llvm``) and runs it on the graph executor;
``executor="interpreter"`` runs it with the reference interpreter. Other keyword arguments of
``prepare`` go to :func:`pytvm.frontend.from_onnx` (``shape_dict``, ``dtype``, ...).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from onnx import ModelProto, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from ...ffi import cpu
from ...ffi.errors import TVMValueError
from ...graph import IRModule
from ...graph.interpreter import interpret
from .errors import DynamicValueError
from .importer import from_onnx, load_model
from .specialize import ValueSpecializedModule

__all__ = [
    "PytvmBackend",
    "PytvmBackendRep",
    "cached_models",
    "is_compatible",
    "prepare",
    "run_model",
    "supports_device",
]

#: Runs a prepared model: inputs by name to the outputs in the graph's order.
Executable = Callable[[Mapping[str, np.ndarray]], list[np.ndarray]]

_CACHE: dict[str, Executable] = {}
_CACHE_LOCK = threading.Lock()


EXECUTORS = ("graph", "interpreter")


def _executable(
    mod: IRModule,
    params: Mapping[str, np.ndarray],
    device: str,
    executor: str = "graph",
    target: Any = None,
) -> Executable:
    """How an imported model runs on ``device``: compiled for the graph executor, or by the
    reference interpreter.
    """
    if executor == "interpreter":
        return _interpreted(mod, params)
    if executor != "graph":
        raise TVMValueError(f"executor {executor!r} is not one of {EXECUTORS}")
    from ...graph import build
    from ...runtime.graph_executor import GraphModule

    lib = build(mod, target=target, params=dict(params))
    module = GraphModule(lib["default"](cpu(0)))
    shapes, dtypes = module.get_input_info()
    count = module.get_num_outputs()
    lock = threading.Lock()  # one executor: one run at a time

    def run(inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        with lock:
            for name, value in inputs.items():
                if name in shapes:  # inputs no output depends on are not in the graph
                    module.set_input(name, np.array(value, dtype=dtypes[name], order="C"))
            module.run()
            return [module.get_output(i).numpy() for i in range(count)]

    return run


def _interpreted(mod: IRModule, params: Mapping[str, np.ndarray]) -> Executable:
    func = mod["main"]
    weights = dict(params)

    def run(inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        out = interpret(func, {**inputs, **weights})
        return [np.asarray(o) for o in out] if isinstance(out, tuple) else [np.asarray(out)]

    return run


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


def _cached(key: str, make: Callable[[], Executable]) -> Executable:
    with _CACHE_LOCK:
        found = _CACHE.get(key)
    if found is not None:
        return found
    made = make()
    with _CACHE_LOCK:
        return _CACHE.setdefault(key, made)


def _device_kind(device: str) -> str:
    kind = Device(device).type
    if kind != DeviceType.CPU:
        raise TVMValueError(f"pytvm's ONNX backend runs on CPU, not on {device!r}")
    return "CPU"


class PytvmBackendRep(BackendRep):
    """A prepared model: ``run(inputs)`` with inputs in the graph's order or by name."""

    def __init__(
        self,
        model: ModelProto,
        device: str = "CPU",
        executor: str = "graph",
        target: Any = None,
        **kwargs: Any,
    ) -> None:
        self.model = model
        self.device = _device_kind(device)
        if executor not in EXECUTORS:
            raise TVMValueError(f"executor {executor!r} is not one of {EXECUTORS}")
        self.executor, self.target = executor, target
        self.options = kwargs
        setting = repr((self.device, executor, str(target), sorted(kwargs.items())))
        self._setting = setting.encode()
        self._bytes = model.SerializeToString()
        inits = {i.name for i in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in inits]
        self.output_names = [o.name for o in model.graph.output]
        self._frozen: list[str] = []
        self._run: Executable | None = None
        try:
            self._run = self._prepare(self.model, _digest(self._bytes, self._setting))
        except DynamicValueError as err:
            self._frozen = [n for n in err.graph_inputs if n in self.input_names]
            if not self._frozen:
                raise

    def _prepare(self, model: ModelProto, key: str) -> Executable:
        def make() -> Executable:
            mod, params = from_onnx(model, **self.options)
            if isinstance(mod, ValueSpecializedModule):  # specialized per value at run
                raise mod.required_error("the ONNX backend")
            return _executable(mod, params, self.device, self.executor, self.target)

        return _cached(key, make)

    def _specialized(self, feed: Mapping[str, np.ndarray]) -> Executable:
        """The model with the graph inputs it needs as values turned into initializers."""
        values = [np.asarray(feed[n]).copy(order="C") for n in self._frozen]
        parts = [self._bytes, self._setting]
        for name, v in zip(self._frozen, values, strict=True):
            parts += [name.encode(), str(v.dtype).encode(), repr(v.shape).encode(), v.tobytes()]
        key = _digest(*parts)
        model = ModelProto()
        model.CopyFrom(self.model)
        for name, v in zip(self._frozen, values, strict=True):
            model.graph.initializer.append(numpy_helper.from_array(v, name))
        try:
            return self._prepare(model, key)
        except DynamicValueError as err:
            more = sorted(set(err.graph_inputs) - set(self._frozen))
            if not more:
                raise
            self._frozen += more
            return self._specialized(feed)

    def _feed(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            feed = {str(k): np.asarray(v) for k, v in inputs.items()}
        else:
            items = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(items) != len(self.input_names):
                raise TVMValueError(
                    f"the model takes {len(self.input_names)} input(s) {self.input_names}, "
                    f"got {len(items)}"
                )
            feed = {n: np.asarray(v) for n, v in zip(self.input_names, items, strict=True)}
        missing = [n for n in self.input_names if n not in feed]
        if missing:
            raise TVMValueError(
                f"no value for input(s) {missing}; the model takes {self.input_names}"
            )
        return feed

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """The outputs for ``inputs`` (a list in the graph's input order, a dict by name, or
        one array).
        """
        feed = self._feed(inputs)
        run = self._run if self._run is not None else self._specialized(feed)
        graph_inputs = {n: v for n, v in feed.items() if n not in self._frozen}
        return tuple(run(graph_inputs))


class PytvmBackend(Backend):
    """``onnx.backend.base.Backend`` running models with pytvm."""

    @classmethod
    def is_compatible(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether ``device`` is one pytvm runs on (operators are checked by ``prepare``)."""
        return cls.supports_device(device)

    @classmethod
    def prepare(
        cls, model: ModelProto | str | bytes, device: str = "CPU", **kwargs: Any
    ) -> PytvmBackendRep:
        """Import ``model`` (a ModelProto, a path or bytes) and make it runnable on ``device``
        (``executor="graph"`` compiled, or ``"interpreter"``; ``target``; and
        :func:`~pytvm.frontend.from_onnx`'s options).
        """
        return PytvmBackendRep(load_model(model), device, **kwargs)

    @classmethod
    def run_model(
        cls, model: ModelProto | str | bytes, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[np.ndarray, ...]:
        """Prepare ``model`` and run it once on ``inputs``."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether pytvm runs models on ``device`` (``"CPU"``)."""
        try:
            return bool(Device(device).type == DeviceType.CPU)
        except (ValueError, KeyError, AttributeError):
            return False


prepare = PytvmBackend.prepare
run_model = PytvmBackend.run_model
supports_device = PytvmBackend.supports_device
is_compatible = PytvmBackend.is_compatible


def cached_models() -> int:
    """How many prepared models the cache holds."""
    with _CACHE_LOCK:
        return len(_CACHE)
