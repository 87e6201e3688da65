"""Selecting elements: ``strided_slice``, ``take`` (gather along an axis) and ``where``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ffi.errors import OpAttributeUnImplemented
from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.expr import ExprLike, PrimExpr, Select, Var, const, convert
from ..tir.op import max as _max
from ..tir.op import min as _min
from . import tag
from ._shape import const_int, normalize_axis, op_error
from .broadcast import broadcast_shape

__all__ = ["strided_slice", "take", "where"]

_TAKE_MODES = ("fast", "clip", "wrap")


def _slice_axis(n: int, b: int, e: int, s: int) -> tuple[int, int]:
    """Start and length of ``[b:e:s]`` on an axis of ``n`` (numpy's rules, clamped)."""
    if s > 0:
        b = min(max(b + n if b < 0 else b, 0), n)
        e = min(max(e + n if e < 0 else e, 0), n)
        return b, max(0, -(-(e - b) // s))
    b = min(max(b + n if b < 0 else b, -1), n - 1)
    e = min(max(e + n if e < 0 else e, -1), n - 1)
    return b, max(0, -(-(b - e) // -s))


def strided_slice(
    a: Tensor,
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    slice_mode: str = "end",
    assume_inbound: bool = True,
) -> Tensor:
    """``a[begin:end:strides]`` per axis, with numpy's rules for negative and large values.

    ``axes`` names the axes the lists refer to (default: the first ``len(begin)`` axes);
    with ``slice_mode="size"``, ``end`` holds sizes (-1: to the end) and strides are 1.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((10, 6), name="A")
    >>> [str(d) for d in topi.strided_slice(A, [8, 0], [1, 6], [-3, 2]).shape]
    ['3', '3']
    """
    nd = a.ndim
    if slice_mode not in ("end", "size"):
        raise op_error("strided_slice", "slice_mode", slice_mode, "'end' or 'size'")
    ax = list(range(len(begin))) if axes is None else list(axes)
    ax = [normalize_axis("strided_slice", x, nd, "axes") for x in ax]
    st = [1] * len(ax) if strides is None or slice_mode == "size" else list(strides)
    if strides is not None and slice_mode == "end" and len(st) == 1 and len(ax) > 1:
        st = st * len(ax)
    if not len(begin) == len(end) == len(st) == len(ax):
        raise op_error(
            "strided_slice",
            "begin/end/strides/axes",
            (list(begin), list(end), st, ax),
            "lists of one length",
        )
    starts: list[PrimExpr] = [const(0)] * nd
    steps = [1] * nd
    shape = list(a.shape)
    for k, b, e, s in zip(ax, begin, end, st, strict=True):
        n = const_int(a.shape[k])
        if n is None:
            raise op_error("strided_slice", f"extent of axis {k}", str(a.shape[k]), "a constant")
        if s == 0:
            raise op_error("strided_slice", "strides", list(st), "non-zero strides")
        if slice_mode == "size":
            e = n if e < 0 else b + e  # noqa: PLW2901 - size becomes an end
        start, length = _slice_axis(n, b, e, s)
        starts[k], steps[k], shape[k] = const(start), s, const(length)

    def body(*idx: Var) -> PrimExpr:
        return a(*[starts[k] + idx[k] * steps[k] for k in range(nd)])

    return compute(shape, body, name="T_strided_slice", tag=tag.INJECTIVE)


def take(
    a: Tensor,
    indices: Tensor | int | Sequence[int],
    axis: int | None = None,
    batch_dims: int = 0,
    mode: str = "fast",
) -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None).

    ``mode`` says what an index outside ``[0, n)`` does: ``"clip"`` clamps it, ``"wrap"``
    wraps it (so -1 is the last element, as ONNX ``Gather`` wants), ``"fast"`` trusts it.
    """
    if mode not in _TAKE_MODES:
        raise op_error("take", "mode", mode, f"one of {_TAKE_MODES}")
    if batch_dims != 0:
        raise OpAttributeUnImplemented(f"take: batch_dims={batch_dims} is not supported (only 0)")
    src = a
    if axis is None:
        from .transform import reshape

        total = 1
        for d in a.shape:
            v = const_int(d)
            if v is None:
                raise op_error("take", "input shape", str(a.shape), "constant with axis=None")
            total *= v
        src, ax = reshape(a, [total]), 0
    else:
        ax = normalize_axis("take", axis, a.ndim)
    n = src.shape[ax]
    if isinstance(indices, Tensor):
        ishape = list(indices.shape)

        def index_at(idx: Sequence[Var]) -> PrimExpr:
            return indices(*idx)
    else:
        values = [indices] if isinstance(indices, int) else list(indices)
        ishape = [] if isinstance(indices, int) else [const(len(values))]

        def index_at(idx: Sequence[Var]) -> PrimExpr:
            out = const(values[-1])
            for k in range(len(values) - 2, -1, -1):
                out = Select(idx[0] == k, const(values[k]), out) if idx else const(values[0])
            return out

    ni = len(ishape)
    shape = [*src.shape[:ax], *ishape, *src.shape[ax + 1 :]]

    def body(*idx: Var) -> PrimExpr:
        i = index_at(idx[ax : ax + ni])
        if mode == "clip":
            i = _min(_max(i, const(0, i.dtype)), convert(n) - 1)
        elif mode == "wrap":
            i = i % convert(n)
        return src(*idx[:ax], i, *idx[ax + ni :])

    return compute(shape, body, name="T_take", tag=tag.INJECTIVE)


def where(condition: Tensor, x: Tensor | ExprLike, y: Tensor | ExprLike) -> Tensor:
    """``x`` where ``condition`` is true (non-zero), else ``y``, with numpy broadcasting."""
    parts: list[Any] = [condition, x, y]
    shape: list[PrimExpr] = []
    for p in parts:
        if isinstance(p, Tensor):
            shape = broadcast_shape("where", shape, list(p.shape))

    def read(p: Any, idx: Sequence[Var]) -> PrimExpr:
        if not isinstance(p, Tensor):
            return convert(p)
        off = len(shape) - p.ndim
        return p(
            *[
                const(0) if const_int(d) == 1 and const_int(shape[off + k]) != 1 else idx[off + k]
                for k, d in enumerate(p.shape)
            ]
        )

    def body(*idx: Var) -> PrimExpr:
        c = read(condition, idx)
        if c.dtype != "bool":
            c = c != const(0, c.dtype)
        tv, fv = read(x, idx), read(y, idx)
        if not isinstance(x, Tensor) and isinstance(y, Tensor):
            tv = const(x, fv.dtype) if isinstance(x, (int, float)) else tv
        if not isinstance(y, Tensor) and isinstance(x, Tensor):
            fv = const(y, tv.dtype) if isinstance(y, (int, float)) else fv
        if tv.dtype != fv.dtype:
            raise op_error("where", "x/y types", (tv.dtype, fv.dtype), "one type")
        return Select(c, tv, fv)

    return compute(shape, body, name="T_where", tag=tag.BROADCAST)
