"""The compile engine: primitive functions lowered to loop IR through ``topi``, cached.

Each primitive (fused) function is lowered by calling every operator's ``compute`` on tensor
expressions, scheduled with the default CPU schedule of its anchor (``topi.x86``), and lowered
to a ``PrimFunc``. Functions are cached by their structure and the target, so a model's
repeated blocks compile once; the cache counts its hits and misses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import te, tir
from ..ffi.errors import TVMValueError
from ..ffi.registry import get_global_func
from ..runtime.module import Module
from ..target import Target
from ..tir.function import PrimFunc
from ..topi.x86 import schedule_default
from .expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from .functor import post_order
from .op import get_op
from .printer import astext
from .ty import TensorType

__all__ = ["CompileEngine", "LoweredFunc", "lower_primitive"]


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


def _kernel_name(func: Function) -> str:
    hint = str(func.attrs.get("hint", "") or "kernel")
    return "fused_" + re.sub(r"[^0-9A-Za-z_]", "_", hint)[:80]


@dataclass
class CompileEngine:
    """Lowers primitive functions for one target, once per distinct structure."""

    target: Target
    hits: int = 0
    misses: int = 0
    _cache: dict[str, LoweredFunc] = field(default_factory=dict)
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

    def _external_symbol(self, func: Function, compiler: str) -> str:
        if id(func) in self._external:
            return self._external[id(func)]
        symbol = str(func.attrs.get("global_symbol", "") or "")
        if not symbol:
            raise TVMValueError(
                f"a function for external compiler {compiler!r} has no global_symbol"
            )
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
        key = f"device {device_type}\n" + _structural_key(func)
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        base = _kernel_name(func)
        name, n = base, 1
        while name in self._names:
            name, n = f"{base}_{n}", n + 1
        self._names.add(name)
        lowered = lower_primitive(func, name, device_type)
        self._cache[key] = lowered
        return lowered

    @property
    def functions(self) -> list[LoweredFunc]:
        """Every kernel lowered so far, in order."""
        return list(self._cache.values())


def _structural_key(func: Function) -> str:
    """Equal for functions of the same operators, attributes, types and scalar constants."""
    text = astext(Function(func.params, func.body, func.attrs.with_values(hint="")))
    return re.sub(r"/\* [^*]*? \*/ /\* ty=", "/* ty=", text)
