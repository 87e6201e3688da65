"""``scatter_nd`` and ``scatter_elements``: ``data`` with ``updates`` written (or combined)
at the positions ``indices`` name.

Each output element looks at every update that targets it (a reduction over the updates), so
repeated indices combine in order: ``"update"`` keeps the last one, ``"add"``/``"mul"`` sum or
multiply all of them into ``data``'s value, ``"min"``/``"max"`` keep the extreme.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..te.operation import compute, reduce_axis
from ..te.reduction import comm_reducer
from ..te.reduction import max as _max
from ..te.reduction import min as _min
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir.expr import IterVar, PrimExpr, Select, Var, const
from ..tir.op import all as _all
from ..tir.op import if_then_else, max_value, min_value
from . import tag
from ._shape import const_int, normalize_axis, op_error

__all__ = ["scatter_elements", "scatter_nd"]

MODES = ("update", "add", "mul", "min", "max")
_prod = comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")


def _combine(
    data: Tensor,
    out_index: Sequence[Var],
    hits: PrimExpr,
    value: PrimExpr,
    linear: PrimExpr,
    axes: list[IterVar],
    mode: str,
) -> tuple[PrimExpr, str]:
    """The reduction over the updates for one output element, and how to apply it."""
    dtype = data.dtype
    if mode == "add":
        return _sum(Select(hits, value, const(0, dtype)), axis=axes), mode
    if mode == "mul":
        return _prod(Select(hits, value, const(1, dtype)), axis=axes), mode
    if mode == "min":
        return _min(Select(hits, value, max_value(dtype)), axis=axes), mode
    if mode == "max":
        return _max(Select(hits, value, min_value(dtype)), axis=axes), mode
    return _max(Select(hits, linear, const(-1)), axis=axes), mode


def _apply(base: PrimExpr, combined: PrimExpr, mode: str) -> PrimExpr:
    if mode == "add":
        return base + combined
    if mode == "mul":
        return base * combined
    if mode == "min":
        return Select(combined < base, combined, base)
    return Select(combined > base, combined, base)


def scatter_nd(data: Tensor, indices: Tensor, updates: Tensor, mode: str = "update") -> Tensor:
    """``data`` with ``updates[y..., x...]`` combined into
    ``data[indices[0, y...], ..., indices[M - 1, y...], x...]`` (``indices`` is ``[M, Y...]``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> d = te.placeholder((2, 2), name="d")
    >>> i = te.placeholder((2, 3), "int64", "i")
    >>> u = te.placeholder((3,), name="u")
    >>> [str(x) for x in topi.scatter_nd(d, i, u, "add").shape]
    ['2', '2']
    """
    op = "scatter_nd"
    if mode not in MODES:
        raise op_error(op, "mode", mode, f"one of {MODES}")
    m = const_int(indices.shape[0]) if indices.ndim else None
    if m is None or m > data.ndim:
        raise op_error(op, "indices shape", str(indices.shape), f"[M <= {data.ndim}, Y...]")
    ys = list(indices.shape[1:])
    if updates.ndim != len(ys) + data.ndim - m:
        raise op_error(op, "updates rank", updates.ndim, f"{len(ys) + data.ndim - m}")
    axes = [reduce_axis((0, d), name=f"y{k}") for k, d in enumerate(ys)]

    def linear() -> PrimExpr:
        flat: PrimExpr = const(0)
        for a, d in zip(axes, ys, strict=True):
            flat = flat * d + a.var
        return flat

    def reduce_body(*o: Var) -> PrimExpr:
        y = [a.var for a in axes]
        hits = _all(*[indices(const(k), *y).astype("int32") == o[k] for k in range(m)])
        value = updates(*y, *o[m:])
        reduced, _ = _combine(data, o, hits, value, linear(), axes, mode)
        return reduced

    if not axes:
        raise op_error(op, "indices shape", str(indices.shape), "at least one update")
    combined = compute(data.shape, reduce_body, name="T_scatter_nd_reduce", tag=tag.COMM_REDUCE)

    def body(*o: Var) -> PrimExpr:
        base, c = data(*o), combined(*o)
        if mode != "update":
            return _apply(base, c, mode)
        at: list[PrimExpr] = []
        rest = c
        for d in reversed(ys):
            at.append(rest % d)
            rest = rest // d
        at.reverse()
        safe = [Select(c >= 0, v, const(0)) for v in at]
        return if_then_else(c >= 0, updates(*safe, *o[m:]), base)

    return compute(data.shape, body, name="T_scatter_nd", tag=tag.INJECTIVE)


def scatter_elements(
    data: Tensor, indices: Tensor, updates: Tensor, axis: int = 0, reduction: str = "update"
) -> Tensor:
    """``data`` with ``updates[p]`` combined into ``data`` at ``p`` with its ``axis``
    coordinate replaced by ``indices[p]`` (negative indices count from the end); ``indices``
    and ``updates`` share a shape.
    """
    op = "scatter_elements"
    modes = {"update": "update", "add": "add", "mul": "mul", "min": "min", "max": "max"}
    if reduction not in modes:
        raise op_error(op, "reduction", reduction, f"one of {tuple(modes)}")
    ax = normalize_axis(op, axis, data.ndim)
    if indices.ndim != data.ndim or updates.ndim != data.ndim:
        raise op_error(op, "indices/updates rank", (indices.ndim, updates.ndim), f"{data.ndim}")
    r = reduce_axis((0, indices.shape[ax]), name="r")
    n = data.shape[ax]
    partial = [
        k for k in range(data.ndim)
        if k != ax and const_int(indices.shape[k]) != const_int(data.shape[k])
    ]  # fmt: skip

    def reduce_body(*o: Var) -> PrimExpr:
        p: list[PrimExpr] = list(o)
        p[ax] = r.var
        inside = [o[k] < indices.shape[k] for k in partial]
        safe = [Select(_all(*inside), v, const(0)) if inside else v for v in p]
        target = indices(*safe).astype("int32")
        target = Select(target < 0, target + n, target)
        hits = _all(target == o[ax], *inside)
        reduced, _ = _combine(data, o, hits, updates(*safe), r.var, [r], reduction)
        return reduced

    combined = compute(data.shape, reduce_body, name="T_scatter_reduce", tag=tag.COMM_REDUCE)

    def body(*o: Var) -> PrimExpr:
        base, c = data(*o), combined(*o)
        if reduction != "update":
            return _apply(base, c, reduction)
        at: list[PrimExpr] = list(o)
        at[ax] = Select(c >= 0, c, const(0))
        safe = [Select(c >= 0, v, const(0)) for v in at]
        return if_then_else(c >= 0, updates(*safe), base)

    return compute(data.shape, body, name="T_scatter_elements", tag=tag.INJECTIVE)
