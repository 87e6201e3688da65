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

__all__ = ["dynamic_strided_slice", "strided_slice", "take", "where"]

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


def _static_slice(
    a: Tensor, ax: list[int], begin: list[int], end: list[int | None], st: list[int], mode: str
) -> Tensor | None:
    """The slice with constant bounds on constant axes (numpy's rules), or None."""
    nd = a.ndim
    starts: list[PrimExpr] = [const(0)] * nd
    steps = [1] * nd
    shape = list(a.shape)
    for k, b, e, s in zip(ax, begin, end, st, strict=True):
        n = const_int(a.shape[k])
        if n is None:
            return None
        if e is None:
            e = n if s > 0 else -n - 1  # noqa: PLW2901 - to the end in the step's direction
        elif mode == "size":
            e = n if e < 0 else b + e  # noqa: PLW2901 - size becomes an end
        start, length = _slice_axis(n, b, e, s)
        starts[k], steps[k], shape[k] = const(start), s, const(length)

    def body(*idx: Var) -> PrimExpr:
        return a(*[starts[k] + idx[k] * steps[k] for k in range(nd)])

    return compute(shape, body, name="T_strided_slice", tag=tag.INJECTIVE)


def _extent(b: PrimExpr, e: PrimExpr, s: int) -> PrimExpr:
    """``ceil((e - b) / s)`` for a non-zero constant ``s``."""
    if s == 1:
        return e - b
    if s > 0:
        return (e - b + (s - 1)) // s
    return (b - e + (-s - 1)) // -s


def strided_slice(
    a: Tensor,
    begin: Sequence[ExprLike | None] | Tensor,
    end: Sequence[ExprLike | None] | Tensor,
    strides: Sequence[ExprLike] | Tensor | None = None,
    axes: Sequence[int] | None = None,
    slice_mode: str = "end",
    assume_inbound: bool = True,
) -> Tensor:
    """``a[begin:end:strides]`` per axis, with numpy's rules for negative and large values.

    ``axes`` names the axes the lists refer to (default: the first ``len(begin)`` axes);
    with ``slice_mode="size"``, ``end`` holds sizes (-1: to the end) and strides are 1; an
    ``end`` of None runs to the end. Bounds that are expressions (``tir.Var``) give an output
    of extent ``ceil((end - begin) / stride)`` read from ``begin`` on; 1-d tensors of bounds
    (one entry per leading axis) are read when the kernel runs: see
    :func:`dynamic_strided_slice`.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((10, 6), name="A")
    >>> [str(d) for d in topi.strided_slice(A, [8, 0], [1, 6], [-3, 2]).shape]
    ['3', '3']
    """
    op = "strided_slice"
    if isinstance(begin, Tensor) or isinstance(end, Tensor) or isinstance(strides, Tensor):
        if axes is not None:
            raise op_error(op, "axes", axes, "None when begin/end/strides are tensors")
        return _tensor_bounds_slice(a, begin, end, strides)
    nd = a.ndim
    if slice_mode not in ("end", "size"):
        raise op_error(op, "slice_mode", slice_mode, "'end' or 'size'")
    ax = list(range(len(begin))) if axes is None else list(axes)
    ax = [normalize_axis(op, x, nd, "axes") for x in ax]
    st: list[Any] = [1] * len(ax) if strides is None or slice_mode == "size" else list(strides)
    if strides is not None and slice_mode == "end" and len(st) == 1 and len(ax) > 1:
        st = st * len(ax)
    if not len(begin) == len(end) == len(st) == len(ax):
        raise op_error(
            op, "begin/end/strides/axes", (list(begin), list(end), st, ax), "lists of one length"
        )
    steps = [const_int(v) for v in st]
    if any(v is None or v == 0 for v in steps):
        raise op_error(op, "strides", list(st), "non-zero constant strides")
    lo = [0 if b is None else const_int(b) for b in begin]
    hi = [None if e is None else const_int(e) for e in end]
    if all(v is not None for v in lo) and all(
        e is None or v is not None for e, v in zip(end, hi, strict=True)
    ):
        static = _static_slice(a, ax, lo, hi, steps, slice_mode)  # type: ignore[arg-type]
        if static is not None:
            return static
    return _expr_slice(a, ax, begin, end, [v for v in steps if v is not None], slice_mode)


def _expr_slice(
    a: Tensor,
    ax: list[int],
    begin: Sequence[ExprLike | None],
    end: Sequence[ExprLike | None],
    steps: list[int],
    slice_mode: str,
) -> Tensor:
    """The slice whose bounds or sliced extents are expressions (taken as in bounds)."""
    starts: list[PrimExpr] = [const(0)] * a.ndim
    step_of = [1] * a.ndim
    shape = list(a.shape)
    for k, b, e, s in zip(ax, begin, end, steps, strict=True):
        n = convert(a.shape[k])
        bx = convert(0 if b is None else b)
        if e is None:
            ex = n if s > 0 else const(-1, bx.dtype)
        else:
            ex = convert(e) if slice_mode == "end" else bx + convert(e)
        starts[k], step_of[k], shape[k] = bx, s, _extent(bx, ex, s)

    def at(k: int, i: Var) -> PrimExpr:
        if k not in ax:
            return i
        return (i if step_of[k] == 1 else i * step_of[k]) + starts[k]

    def body(*idx: Var) -> PrimExpr:
        return a(*[at(k, i) for k, i in enumerate(idx)])

    return compute(shape, body, name="T_dynamic_strided_slice_with_axes", tag=tag.INJECTIVE)


def _bound_reads(a: Tensor, t: Any, default: int) -> list[PrimExpr]:
    """One expression per leading axis: a read of tensor ``t``, or a constant list's entry."""
    if isinstance(t, Tensor):
        if t.ndim != 1 or const_int(t.shape[0]) is None:
            raise op_error("strided_slice", "bound tensor shape", str(t.shape), "a 1-d constant")
        return [t(const(i, t.shape[0].dtype)) for i in range(const_int(t.shape[0]) or 0)]
    values = [default] * a.ndim if t is None else list(t)
    return [convert(v) for v in values]


def _tensor_bounds_slice(a: Tensor, begin: Any, end: Any, strides: Any) -> Tensor:
    """A slice of the leading axes by bounds read at run time; each sliced extent is a new
    variable bound by the output buffer the caller passes.
    """
    b, e, s = _bound_reads(a, begin, 0), _bound_reads(a, end, 0), _bound_reads(a, strides, 1)
    if not len(b) == len(e) == len(s) or len(b) > a.ndim:
        raise op_error("strided_slice", "bounds", (len(b), len(e), len(s)), "one length <= ndim")
    shape = [Var("dim", "int32") for _ in b] + list(a.shape[len(b) :])
    return _read_slice(a, b, s, shape, "T_strided_slice_dynamic")


def _read_slice(
    a: Tensor, b: list[PrimExpr], s: list[PrimExpr], shape: Sequence[ExprLike], name: str
) -> Tensor:
    def body(*idx: Var) -> PrimExpr:
        at: list[PrimExpr] = list(idx)
        for k, (bk, sk) in enumerate(zip(b, s, strict=True)):
            n = convert(a.shape[k])
            start: PrimExpr = Select(bk < 0, bk + n.astype(bk.dtype), bk)
            start = _min(_max(start, const(0, bk.dtype)), n.astype(bk.dtype) - 1)
            at[k] = (idx[k].astype(bk.dtype) * sk.astype(bk.dtype) + start).astype(idx[k].dtype)
        return a(*at)

    return compute(list(shape), body, name=name, tag=tag.INJECTIVE)


def dynamic_strided_slice(
    a: Tensor,
    begin: Tensor,
    end: Tensor,
    strides: Tensor,
    output_shape: Sequence[ExprLike],
) -> Tensor:
    """A slice of every axis of ``a`` by 1-d tensors of bounds read at run time, into a tensor of
    ``output_shape`` (the caller's: ``ceil((end - begin) / strides)`` clamped per axis).
    ``end`` only sizes the output, so it is not read.
    """
    if len(output_shape) != a.ndim:
        raise op_error("dynamic_strided_slice", "output_shape", output_shape, f"{a.ndim} extents")
    b, s = _bound_reads(a, begin, 0), _bound_reads(a, strides, 1)
    if not len(b) == len(s) == a.ndim or _bound_reads(a, end, 0).__len__() != a.ndim:
        raise op_error("dynamic_strided_slice", "bounds", len(b), f"{a.ndim} entries each")
    return _read_slice(a, b, s, output_shape, "T_strided_slice_dynamic")


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
