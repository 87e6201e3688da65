"""What a hybrid script's intrinsic calls mean when it is parsed (TVM's ``hybrid.calls``).

Each handler takes the intrinsic's name and its already-parsed arguments. Loop intrinsics
return a :class:`LoopSpec` for the ``for`` statement to build; ``output_tensor``/``allocate``
return a :class:`TensorDecl` for the assignment to declare; the rest return expressions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...ffi.errors import TVMTypeError, TVMValueError
from ...target.target import Target
from ...tir import op as _op
from ...tir import stmt as S
from ...tir.expr import Call, Cast, IntImm, IterVar, PrimExpr, const, convert
from ..operation import thread_axis

__all__ = ["INTRINSICS", "LoopSpec", "TensorDecl", "call_intrinsic"]


@dataclass(frozen=True, slots=True)
class LoopSpec:
    """A loop: ``extent`` steps from ``low``, of ``kind``; ``unrolled_in_python`` for
    ``const_range``, ``thread`` for ``bind``.
    """

    low: PrimExpr
    extent: PrimExpr
    kind: S.ForKind = S.ForKind.SERIAL
    unrolled_in_python: bool = False
    thread: IterVar | None = None


@dataclass(frozen=True, slots=True)
class TensorDecl:
    """A tensor ``output_tensor``/``allocate`` declares: its shape, element type and scope."""

    shape: tuple[PrimExpr, ...]
    dtype: str
    scope: str


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise TVMValueError(f"hybrid script: {message}")


def _arity(name: str, args: Sequence[Any], low: int, high: int | None = None) -> None:
    """Check that ``name`` got between ``low`` and ``high`` (default: exactly ``low``) args."""
    top = low if high is None else high
    if not low <= len(args) <= top:
        want = str(low) if top == low else f"{low} to {top}"
        raise TVMValueError(f"hybrid script: {name}() takes {want} arguments, got {len(args)}")


_LOOP_KINDS = {
    "range": S.ForKind.SERIAL,
    "unroll": S.ForKind.UNROLLED,
    "parallel": S.ForKind.PARALLEL,
    "vectorize": S.ForKind.VECTORIZED,
    "const_range": S.ForKind.UNROLLED,
}


def _loop(name: str, args: Sequence[Any]) -> LoopSpec:
    _arity(name, args, 1, 2)  # extent, or low and high
    if len(args) == 1:
        low, high = convert(0), convert(args[0])
    else:
        low, high = convert(args[0]), convert(args[1])
    extent = high if isinstance(low, IntImm) and low.value == 0 else high - low
    return LoopSpec(low, extent, _LOOP_KINDS[name], unrolled_in_python=name == "const_range")


def _bind(name: str, args: Sequence[Any]) -> LoopSpec:
    _arity(name, args, 2)  # thread tag, extent
    _check(isinstance(args[0], str), "bind()'s first argument must be a thread tag string")
    extent = convert(args[1])
    axis = thread_axis((0, extent), args[0])
    return LoopSpec(const(0, extent.dtype), extent, thread=axis)


def _math(name: str, args: Sequence[Any]) -> PrimExpr:
    if name == "power":
        _arity(name, args, 2)
        return _op.pow(args[0], args[1])
    if name == "popcount":
        _arity(name, args, 1)
        value = convert(args[0])
        return Call(value.dtype, "tir.popcount", (value,))
    _arity(name, args, 1)
    fn: Callable[[Any], PrimExpr] = getattr(_op, name)
    return fn(args[0])


def _min_max(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 2)
    return _op.min(args[0], args[1]) if name == "min" else _op.max(args[0], args[1])


def _tensor(name: str, args: Sequence[Any]) -> TensorDecl:
    _arity(name, args, 1, 3)  # shape, dtype, scope (allocate only)
    shape = args[0] if isinstance(args[0], (tuple, list)) else (args[0],)
    for dim in shape:
        _check(isinstance(dim, (PrimExpr, int)), f"{name}(): shape {shape!r} must hold integers")
    dtype = "float32"
    if args[1:]:
        _check(isinstance(args[1], str), f"{name}(): the dtype must be a string")
        dtype = str(args[1])
        _check(dtype.startswith(("int", "uint", "float")), f"{name}(): dtype {dtype} unsupported")
    scope = "output" if name == "output_tensor" else "global"
    if args[2:]:
        _check(name != "output_tensor", "output_tensor() takes no storage scope")
        _check(isinstance(args[2], str), f"{name}(): the scope must be a string")
        scope = str(args[2])
    return TensorDecl(tuple(convert(d) for d in shape), dtype, scope)


def _len(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 1)
    value = args[0]
    if isinstance(value, (tuple, list)):
        return convert(len(value))
    shape = getattr(value, "shape", None)
    if not shape:
        raise TVMValueError(f"hybrid script: len() of {value!r}: not a sequence or a tensor")
    return convert(shape[0])


def _cast(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 1)
    value = convert(args[0])
    return value if value.dtype == name else Cast(name, value)


def _ceil_div(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 2)
    a, b = args
    return convert((a + b - 1) // b)


def _likely(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 1)
    return Call("bool", "tir.likely", (convert(args[0]),))


def _max_num_threads(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 0, 1)
    allow_none = True
    if args:
        _check(isinstance(args[0], IntImm), "max_num_threads()'s argument must be a constant")
        allow_none = bool(args[0].value)
    target = Target.current(allow_none)
    threads = getattr(target, "max_num_threads", None)
    if threads is None:
        raise TVMValueError(
            f"hybrid script: max_num_threads() needs a GPU target in scope, got {target}"
        )
    return convert(int(threads))


def _limit(name: str, args: Sequence[Any]) -> PrimExpr:
    _arity(name, args, 1)
    _check(isinstance(args[0], str), f"{name}() takes a dtype string")
    return _op.max_value(args[0]) if name == "inf" else _op.min_value(args[0])


_Handler = Callable[[str, Sequence[Any]], Any]
_CASTS = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
)  # fmt: skip

#: Intrinsic name -> its parse-time handler.
INTRINSICS: dict[str, _Handler] = {
    **dict.fromkeys(("range", "unroll", "parallel", "vectorize", "const_range"), _loop),
    "bind": _bind,
    **dict.fromkeys(
        ("sqrt", "rsqrt", "log", "exp", "tanh", "sigmoid", "power", "popcount", "round"), _math
    ),
    "min": _min_max,
    "max": _min_max,
    "output_tensor": _tensor,
    "allocate": _tensor,
    "len": _len,
    **dict.fromkeys(_CASTS, _cast),
    "ceil_div": _ceil_div,
    "likely": _likely,
    "max_num_threads": _max_num_threads,
    "inf": _limit,
    "ninf": _limit,
}


def call_intrinsic(name: str, args: Sequence[Any]) -> Any:
    """The meaning of intrinsic ``name`` applied to ``args``."""
    handler = INTRINSICS.get(name)
    if handler is None:
        raise TVMTypeError(f"hybrid script: {name}() is not an intrinsic")
    return handler(name, args)
