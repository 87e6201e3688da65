"""Reductions: ``comm_reducer`` and the common ones (``sum``, ``max``, ``min``, ``argmax``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ffi.errors import TVMValueError
from ..tir.expr import CommReducer, ExprLike, IterVar, PrimExpr, Reduce, Select, Var, const, convert
from ..tir.op import max as _max
from ..tir.op import max_value, min_value
from ..tir.op import min as _min

__all__ = ["argmax", "argmin", "comm_reducer", "max", "min", "sum"]

Reducer = Callable[..., Any]


def comm_reducer(
    fcombine: Callable[..., Any], fidentity: Callable[..., Any], name: str = "reduce"
) -> Reducer:
    """A reduction from a combiner ``fcombine(x, y)`` and an identity ``fidentity(dtype)``.

    The returned function is called as ``reducer(expr, axis, where=None, init=None)``; ``expr``
    may be a tuple (several values reduced together, e.g. an index and a value). Called on
    values instead of an axis (``te.max(a, b)``) it combines them.

    Examples
    --------
    >>> from pytvm import te
    >>> product = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), name="prod")
    >>> A = te.placeholder((4, 8), name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: product(A[i, k], axis=k), name="B")
    >>> str(B.op.body[0])
    'prod(A[i, k], axis=[k])'
    """

    def reducer(
        expr: ExprLike | Sequence[ExprLike],
        axis: IterVar | Sequence[IterVar],
        where: ExprLike | None = None,
        init: ExprLike | Sequence[ExprLike] | None = None,
        *more: ExprLike,
    ) -> Any:
        if not isinstance(axis, (IterVar, list, tuple)):
            # Called on values (``te.max(a, b)``): combine them directly, as TVM does.
            values = [v for v in (expr, axis, where, init, *more) if v is not None]
            out = convert(values[0])  # type: ignore[arg-type]  # values, not sequences
            for v in values[1:]:
                out = convert(fcombine(out, v))
            return out
        sources = (
            tuple(convert(e) for e in expr) if isinstance(expr, Sequence) else (convert(expr),)
        )
        axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
        for a in axes:
            if not isinstance(a, IterVar):
                raise TVMValueError(f"{name}: axis must be reduce_axis IterVars, got {a!r}")
        lhs = tuple(
            Var(f"x{k}" if len(sources) > 1 else "x", s.dtype) for k, s in enumerate(sources)
        )
        rhs = tuple(
            Var(f"y{k}" if len(sources) > 1 else "y", s.dtype) for k, s in enumerate(sources)
        )
        if len(sources) == 1:
            result: Any = fcombine(lhs[0], rhs[0])
            identity: Any = fidentity(sources[0].dtype)
        else:
            result = fcombine(lhs, rhs)
            identity = fidentity(*(s.dtype for s in sources))
        results = tuple(
            convert(r) for r in (result if isinstance(result, (list, tuple)) else (result,))
        )
        identities = tuple(
            convert(i) for i in (identity if isinstance(identity, (list, tuple)) else (identity,))
        )
        combiner = CommReducer(lhs, rhs, results, identities, name)
        cond = const(True) if where is None else convert(where)
        inits: tuple[PrimExpr, ...] = ()
        if init is not None:
            inits = (
                tuple(convert(i) for i in init) if isinstance(init, Sequence) else (convert(init),)
            )
        outs = [Reduce(combiner, sources, axes, cond, k, inits) for k in range(len(sources))]
        return outs[0] if len(outs) == 1 else tuple(outs)

    reducer.__name__ = name
    reducer.__doc__ = f"The {name} reduction of ``expr`` over ``axis``."
    return reducer


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")
max = comm_reducer(_max, min_value, name="max")
min = comm_reducer(_min, max_value, name="min")


def _arg_combine(better: Callable[[PrimExpr, PrimExpr], PrimExpr]) -> Callable[..., Any]:
    def combine(x: tuple[Var, Var], y: tuple[Var, Var]) -> tuple[PrimExpr, PrimExpr]:
        keep = better(x[1], y[1])  # ties keep the accumulated (first) index, as numpy does
        return Select(keep, x[0], y[0]), Select(keep, x[1], y[1])

    return combine


#: ``argmax((index, value), axis=k)``: the index and value of the largest value.
argmax = comm_reducer(
    _arg_combine(lambda a, b: a >= b), lambda ti, tv: (const(-1, ti), min_value(tv)), "argmax"
)
#: ``argmin((index, value), axis=k)``: the index and value of the smallest value.
argmin = comm_reducer(
    _arg_combine(lambda a, b: a <= b), lambda ti, tv: (const(-1, ti), max_value(tv)), "argmin"
)
