"""The compile engine: primitive functions lowered to loop IR through ``topi``, cached.

Each primitive (fused) function is lowered by calling every operator's ``compute`` on tensor
expressions, scheduled with the default CPU schedule of its anchor (``topi.x86``), and lowered
to a ``PrimFunc``. Functions are cached by :class:`CacheKey` (the function's structural hash,
equality resolving collisions, with the device type and the target), so a model's repeated
blocks compile once; the cache counts its hits and misses. A schedule reads its tuning
configuration from the AutoTVM dispatch context in force (``apply_history_best``), so the key
holds that context too: a kernel lowered under one set of tuning records is never returned
under another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import te, tir
from ..autotvm.task.dispatcher import DispatchContext
from ..ffi.errors import TVMValueError
from ..ffi.registry import get_global_func
from ..runtime.module import Module
from ..target import Target
from ..tir.function import PrimFunc
from ..topi.x86 import schedule_default
from .attrs import Attrs
from .expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from .functor import post_order
from .op import get_op
from .structural import structural_equal, structural_hash
from .ty import TensorType

__all__ = ["CacheKey", "CompileEngine", "LoweredFunc", "lower_primitive"]


@dataclass(frozen=True, slots=True)
class LoweredFunc:
    """A primitive function lowered to the kernel ``name`` (``num_outputs`` result tensors)."""

    name: str
    prim_func: PrimFunc
    num_outputs: int


def _scalar_tensor(node: Constant) -> Any:
    value = node.data.reshape(()).item()
    dtype = str(node.data.dtype)
    shape = node.data.shape
    return te.compute(shape or (), lambda *i: tir.const(value, dtype), name="scalar")


def lower_primitive(  # noqa: PLR0912 - one branch per node kind
    func: Function, name: str, device_type: int = 1
) -> LoweredFunc:
    """Lower ``func`` (a fused group) to the PrimFunc of kernel ``name``, taking arrays on
    ``device_type`` (host memory: the kernel runs on the host CPU).
    """
    inputs: list[Any] = []
    env: dict[int, Any] = {}
    for i, param in enumerate(func.params):
        ty = param.type_annotation
        if not isinstance(ty, TensorType):
            raise TVMValueError(f"{name}: parameter {param.name} is a tuple; only tensors")
        env[id(param)] = te.placeholder(ty.shape, ty.dtype, f"p{i}")
        inputs.append(env[id(param)])
    node: Expr
    for node in post_order(func.body):
        if id(node) in env:
            continue
        if isinstance(node, Var):
            raise TVMValueError(f"{name}: free variable {node.name}")
        if isinstance(node, Constant):
            if node.data.size != 1:
                raise TVMValueError(f"{name}: constants inside a kernel must be scalars")
            env[id(node)] = _scalar_tensor(node)
        elif isinstance(node, Call):
            if not isinstance(node.op, str):
                raise TVMValueError(f"{name}: a primitive function calls another function")
            opdef = get_op(node.op)
            if opdef.compute is None:
                raise TVMValueError(f"{node.op}: the operator has no compute to compile it with")
            env[id(node)] = opdef.compute(
                [env[id(a)] for a in node.args], node.attrs, node.checked_type
            )
        elif isinstance(node, Tuple):
            env[id(node)] = [env[id(f)] for f in node.fields]
        else:
            assert isinstance(node, TupleGetItem)
            env[id(node)] = env[id(node.tuple_value)][node.index]
    result = env[id(func.body)]
    outs = list(result) if isinstance(result, (list, tuple)) else [result]
    outs = [_materialized(t, inputs) for t in outs]
    sch = schedule_default(outs)
    prim = te.lower_schedule(sch, [*inputs, *outs], name)
    if device_type != 1:
        prim = prim.with_attr("device_types", (device_type,))
    return LoweredFunc(name, prim, len(outs))


def _materialized(tensor: Any, inputs: list[Any]) -> Any:
    """An output that is an input (or a scalar stage) gets a copy stage of its own."""
    if any(tensor is t for t in inputs) or not isinstance(tensor.op, te.ComputeOp):
        return te.compute(tensor.shape, tensor, name="copy")
    return tensor


def _kernel_base_name(func: Function) -> str:
    """``fused_`` and the function's ``hint`` (its operators), as a C identifier."""
    hint = str(func.attrs.get("hint", "") or "kernel")
    return "fused_" + re.sub(r"[^0-9A-Za-z_]", "_", hint)[:80]


@dataclass(frozen=True, slots=True, eq=False)
class CacheKey:
    """TVM's ``CCacheKey``: a primitive function and what else its kernel depends on.

    Keys hash by :func:`~pytvm.graph.structural.structural_hash` of the function and compare by
    :func:`~pytvm.graph.structural.structural_equal` (a collision of hashes costs one
    comparison), together with the device type the kernel's arrays live on, the target whose
    vector width and cores the schedules read, and the AutoTVM dispatch context the schedules
    read their configuration from (compared by identity: each ``apply_history_best`` context
    lowers its own kernels). The ``hint`` attribute only names the kernel, so it is left out.
    """

    func: Function
    device_type: int
    target: str
    context: object = None
    hash_: int = field(init=False)

    def __post_init__(self) -> None:
        if "hint" in self.func.attrs:
            attrs = Attrs(tuple((k, v) for k, v in self.func.attrs.items_ if k != "hint"))
            object.__setattr__(self, "func", Function(self.func.params, self.func.body, attrs))
        own = (structural_hash(self.func), self.device_type, self.target, id(self.context))
        object.__setattr__(self, "hash_", hash(own))

    def __hash__(self) -> int:
        return self.hash_

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CacheKey)
            and self.hash_ == other.hash_
            and self.device_type == other.device_type
            and self.target == other.target
            and self.context is other.context
            and structural_equal(self.func, other.func)
        )


@dataclass
class CompileEngine:
    """Lowers primitive functions for one target, once per distinct structure.

    Every distinct structure gets one kernel name (``fused_<operators>``, then ``_1``, ``_2``,
    ... for further structures with the same operators); :meth:`kernel_name` gives it without
    lowering, so a memory plan names kernels as the build does.
    """

    target: Target
    hits: int = 0
    misses: int = 0
    _cache: dict[CacheKey, LoweredFunc] = field(default_factory=dict)
    _named: dict[CacheKey, str] = field(default_factory=dict)
    _names: set[str] = field(default_factory=set)
    #: Runtime modules of external compilers (``relay.ext.<name>``), imported into the library.
    external_modules: list[Module] = field(default_factory=list)
    _external: dict[int, str] = field(default_factory=dict)

    def kernel(self, call: Call, device_type: int = 1) -> str:
        """The symbol the graph calls for ``call``: an external compiler's, or a lowered kernel."""
        func = call.op
        assert isinstance(func, Function)
        compiler = func.attrs.get("Compiler")
        if compiler:
            return self._external_symbol(func, str(compiler))
        return self.lower(call, device_type).name

    def kernel_name(self, call: Call, device_type: int = 1) -> str:
        """The symbol :meth:`kernel` returns for ``call``, without lowering or compiling it."""
        func = call.op
        assert isinstance(func, Function)
        compiler = func.attrs.get("Compiler")
        if compiler:
            return _global_symbol(func, str(compiler))
        return self._name(self._key(func, device_type), func)

    def _key(self, func: Function, device_type: int) -> CacheKey:
        active = Target.current(allow_none=True)  # what the schedules read
        target = "" if active is None else str(active)
        return CacheKey(func, device_type, target, DispatchContext.current)

    def _name(self, key: CacheKey, func: Function) -> str:
        name = self._named.get(key)
        if name is None:
            base = _kernel_base_name(func)
            name, n = base, 1
            while name in self._names:
                name, n = f"{base}_{n}", n + 1
            self._names.add(name)
            self._named[key] = name
        return name

    def _external_symbol(self, func: Function, compiler: str) -> str:
        if id(func) in self._external:
            return self._external[id(func)]
        symbol = _global_symbol(func, compiler)
        codegen = get_global_func(f"relay.ext.{compiler}", allow_missing=True)
        if codegen is None:
            raise TVMValueError(
                f"no external code generator for compiler {compiler!r}: register a global "
                f"function 'relay.ext.{compiler}' taking the function and returning a module"
            )
        module = codegen(func)
        if not isinstance(module, Module) or not module.implements_function(symbol):
            raise TVMValueError(
                f"relay.ext.{compiler} returned {type(module).__name__}, not a module with the "
                f"function {symbol!r}"
            )
        self.external_modules.append(module)
        self._external[id(func)] = symbol
        return symbol

    def lower(self, call: Call, device_type: int = 1) -> LoweredFunc:
        """The kernel for ``call``'s primitive function on ``device_type`` (lowered now, or
        from the cache).
        """
        func = call.op
        assert isinstance(func, Function)
        key = self._key(func, device_type)
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        lowered = lower_primitive(func, self._name(key, func), device_type)
        self._cache[key] = lowered
        return lowered

    @property
    def functions(self) -> list[LoweredFunc]:
        """Every kernel lowered so far, in order."""
        return list(self._cache.values())


def _global_symbol(func: Function, compiler: str) -> str:
    symbol = str(func.attrs.get("global_symbol", "") or "")
    if not symbol:
        raise TVMValueError(f"a function for external compiler {compiler!r} has no global_symbol")
    return symbol
