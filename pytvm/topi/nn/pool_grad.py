"""``pool_grad``: the gradient of 2-D max or average pooling with respect to its input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import comm_reducer
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Select, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else, min_value
from ...tir.op import max as emax
from .. import tag
from .._shape import op_error
from .pool_window import POOL_TYPES, PoolAxis, constant_shape, pool_axes, pool_windows, taps_in

__all__ = ["pool_grad"]


def _first_max(data: Tensor, axes: list[int], wins: list[PoolAxis], out_shape: list[int]) -> Any:
    """Per window, the row-major tap number of its first maximum inside the input (-1: none)."""
    rs = [reduce_axis((0, w.kernel), name=f"rv{i}") for i, w in enumerate(wins)]

    def combine(acc: tuple[Var, Var], new: tuple[Var, Var]) -> tuple[PrimExpr, PrimExpr]:
        take = (new[0] >= 0) & ((acc[0] < 0) | (new[1] > acc[1]))
        return Select(take, new[0], acc[0]), Select(take, new[1], acc[1])

    def identity(ti: str, tv: str) -> tuple[PrimExpr, PrimExpr]:
        return const(-1, ti), min_value(tv)

    reducer = comm_reducer(combine, identity, name="argmax_window")

    def window(*idx: Var) -> Any:
        at: list[PrimExpr] = list(idx)
        inside = []
        tap: PrimExpr = const(0)
        for a, w, r in zip(axes, wins, rs, strict=True):
            at[a] = w.start(idx[a]) + r.var
            inside += [at[a] >= 0, at[a] < w.size]
            tap = tap * w.kernel + r.var
        ok = _all(*inside)
        index = if_then_else(ok, tap, const(-1))
        value = if_then_else(ok, data(*at), min_value(data.dtype))
        return reducer((index, value), axis=rs)

    best = compute(out_shape, window, name="pool_grad_argmax", tag=tag.COMM_REDUCE_IDX)
    return best[0]


def pool_grad(
    grads: Tensor,
    data: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    pool_type: str,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    layout: str = "NCHW",
) -> Tensor:
    """The gradient of :func:`pool2d` (dilation 1) for ``data`` given ``grads`` of its output.

    Max pooling routes each window's gradient to the window's first maximum; average pooling
    spreads it evenly over what the window's divisor counts.
    """
    op = "pool_grad"
    if pool_type not in POOL_TYPES:
        raise op_error(op, "pool_type", pool_type, "'max' or 'avg'")
    axes = pool_axes(op, data, layout, 2)
    shape = constant_shape(op, data)
    wins = pool_windows(op, [shape[a] for a in axes], kernel, stride, (1, 1), padding, ceil_mode)
    out_shape = list(shape)
    for a, w in zip(axes, wins, strict=True):
        out_shape[a] = w.out
    if constant_shape(op, grads) != out_shape:
        raise op_error(op, "grads shape", [str(d) for d in grads.shape], f"{out_shape}")
    argmax = _first_max(data, axes, wins, out_shape) if pool_type == "max" else None
    rs = [reduce_axis((0, -(-w.kernel // w.stride)), name=f"rw{i}") for i, w in enumerate(wins)]
    dtype = grads.dtype

    def gradient(*idx: Var) -> PrimExpr:
        at: list[PrimExpr] = list(idx)
        valid = []
        tap: PrimExpr = const(0)
        count: PrimExpr = const(1)
        for a, w, r in zip(axes, wins, rs, strict=True):
            o = (idx[a] + w.before) // w.stride - r.var
            offset = idx[a] + w.before - o * w.stride
            valid += [o >= 0, o < w.out, offset < w.kernel]
            at[a] = o
            tap = tap * w.kernel + offset
            lo, hi = (-w.before, w.size + w.after) if count_include_pad else (0, w.size)
            count = count * taps_in(w.start(o), w, lo, hi)
        if argmax is None:
            share = grads(*at) / emax(count, const(1)).astype(dtype)
            value = if_then_else(_all(*valid), share, const(0, dtype))
        else:
            routed = if_then_else(argmax(*at) == tap, grads(*at), const(0, dtype))
            value = if_then_else(_all(*valid), routed, const(0, dtype))
        return _sum(value, axis=rs)  # type: ignore[no-any-return]

    kind = tag.POOL_GRAD_MAX if pool_type == "max" else tag.POOL_GRAD_AVG
    return compute(shape, gradient, name="T_pool_grad", tag=kind)
