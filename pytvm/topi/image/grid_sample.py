"""Sampling on a grid of normalized coordinates (TVM's ``topi.image.affine_grid`` and
``grid_sample``, in 2-d ``NCHW`` and 3-d ``NCDHW``).

A grid point ``g`` in ``[-1, 1]`` maps to input coordinate ``(g + 1) * (n - 1) / 2`` with
``align_corners``, else ``((g + 1) * n - 1) / 2``; the border region is ``[0, n - 1]`` or
``[-0.5, n - 0.5]``. ``padding_mode`` says what a point outside reads: ``"zeros"``, the
nearest ``"border"`` element, or the point mirrored back into the border region
(``"reflection"``). Two conventions place a point before interpolating:

* ``"pytorch"`` (TVM's and PyTorch's): nearest and bilinear points are clamped (after
  mirroring) into ``[0, n - 1]``; bicubic points are not moved, only their taps are padded;
* ``"onnx"`` (ONNX Runtime's ``GridSample``): nearest points are rounded first; then a point
  outside the border region is clamped (``border``) or mirrored (``reflection``), except that
  a bicubic point with ``border`` padding stays put, as in PyTorch (ONNX's reference
  implementation clamps it; ONNX Runtime does not).

In both, each tap of the interpolation reads by the padding mode. Nearest rounds half to even;
bicubic uses Keys' kernel with ``a = -0.75``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import ExprLike, PrimExpr, Var, const, convert
from ...tir.op import all as _all
from ...tir.op import floor, if_then_else, round
from ...tir.op import max as emax
from ...tir.op import min as emin
from .. import tag
from .._shape import const_ints, op_error

__all__ = ["affine_grid", "grid_sample"]

_METHODS = ("nearest", "bilinear", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CONVENTIONS = ("pytorch", "onnx")
_LAYOUTS = {2: "NCHW", 3: "NCDHW"}


def affine_grid(data: Tensor, target_shape: Sequence[int]) -> Tensor:
    """The sampling grid ``[N, 2, H, W]`` (x then y) of the affine maps ``data [N, 2, 3]`` over
    ``target_shape = (H, W)`` points spread evenly over ``[-1, 1]`` (corners included).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> theta = te.placeholder((1, 2, 3), name="theta")
    >>> [int(d) for d in topi.image.affine_grid(theta, (4, 5)).shape]
    [1, 2, 4, 5]
    """
    op = "affine_grid"
    dims = const_ints(op, "data shape", data.shape)
    if len(dims) != 3 or dims[1:] != [2, 3]:  # noqa: PLR2004
        raise op_error(op, "data shape", dims, "[N, 2, 3]")
    h, w = (int(v) for v in target_shape)
    if h < 1 or w < 1:
        raise op_error(op, "target_shape", list(target_shape), "two positive extents")
    dtype = data.dtype

    def spread(i: PrimExpr, n: int) -> PrimExpr:
        if n == 1:
            return const(0.0, dtype)
        return i.astype(dtype) * const(2.0 / (n - 1), dtype) - const(1.0, dtype)

    def body(n: Var, k: Var, y: Var, x: Var) -> PrimExpr:
        xs, ys = spread(x, w), spread(y, h)
        return data(n, k, 0) * xs + data(n, k, 1) * ys + data(n, k, 2)

    return compute((data.shape[0], 2, h, w), body, name="affine_grid", tag=tag.INJECTIVE)


def _reflect(x: PrimExpr, lo: float, hi: float) -> PrimExpr:
    """``x`` mirrored at ``lo`` and ``hi`` until it lies between them."""
    span = hi - lo
    if span <= 0:
        return const(lo, x.dtype) + x * const(0.0, x.dtype)
    d = x - const(lo, x.dtype)
    d = if_then_else(d < const(0.0, x.dtype), -d, d)
    flips = floor(d / const(span, x.dtype))
    extra = d - flips * const(span, x.dtype)
    odd = flips.astype("int64") % 2 == 1
    return if_then_else(odd, const(hi, x.dtype) - extra, const(lo, x.dtype) + extra)


def _keeps_cubic_point(method: str, padding_mode: str, convention: str) -> bool:
    """Whether a bicubic point stays put (only its taps are padded): always in PyTorch's
    convention; with ``border`` padding in ONNX Runtime's.
    """
    return method == "bicubic" and (convention == "pytorch" or padding_mode == "border")


def _clamp(x: PrimExpr, lo: ExprLike, hi: ExprLike) -> PrimExpr:
    return emin(emax(x, convert(lo)), convert(hi))


def _unnormalize(g: PrimExpr, n: int, align_corners: bool, dtype: str) -> PrimExpr:
    """The input coordinate of normalized grid value ``g`` on an axis of extent ``n``."""
    g = g.astype(dtype)
    if align_corners:
        return (g + 1.0) * const((n - 1) / 2.0, dtype)
    return ((g + 1.0) * const(float(n), dtype) - 1.0) * const(0.5, dtype)


def _cubic_weights(t: PrimExpr, dtype: str, a: float = -0.75) -> list[PrimExpr]:
    """Keys' weights of the taps at ``-1, 0, 1, 2`` of a point ``t`` past its floor."""

    def near(v: PrimExpr) -> PrimExpr:
        return ((v * (a + 2.0) - (a + 3.0)) * v) * v + 1.0

    def far(v: PrimExpr) -> PrimExpr:
        return ((v * a - 5.0 * a) * v + 8.0 * a) * v - 4.0 * a

    one, two = const(1.0, dtype), const(2.0, dtype)
    return [far(t + one), near(t), near(one - t), far(two - t)]


def _place(
    x: PrimExpr,
    n: int,
    bounds: tuple[float, float],
    method: str,
    padding_mode: str,
    convention: str,
) -> PrimExpr:
    """The point the convention moves ``x`` (on an axis of extent ``n``) to before
    interpolating.
    """
    dtype, (lo, hi) = x.dtype, bounds
    if padding_mode == "zeros" or _keeps_cubic_point(method, padding_mode, convention):
        return x
    inside = _all(x >= const(lo, dtype), x <= const(hi, dtype))
    if convention == "pytorch":
        if padding_mode == "reflection":
            x = if_then_else(inside, x, _reflect(x, lo, hi))
        return _clamp(x, const(0.0, dtype), const(n - 1.0, dtype))
    moved = (
        _clamp(x, const(0.0, dtype), const(n - 1.0, dtype))
        if padding_mode == "border"
        else _reflect(x, lo, hi)
    )
    return if_then_else(inside, x, moved)


def _tap(
    i: PrimExpr, n: int, bounds: tuple[float, float], padding_mode: str, dtype: str
) -> tuple[PrimExpr, PrimExpr]:
    """(index to read, whether it reads the data) of integer tap ``i`` on an axis of ``n``."""
    last = const(n - 1, "int32")
    if padding_mode == "zeros":
        inside = _all(i >= const(0, "int32"), i <= last)
        return _clamp(i, const(0, "int32"), last), inside
    if padding_mode == "reflection":
        i = _reflect(i.astype(dtype), *bounds).astype("int32")
    return _clamp(i, const(0, "int32"), last), const(True, "bool")


def grid_sample(
    data: Tensor,
    grid: Tensor,
    method: str = "bilinear",
    layout: str = "NCHW",
    padding_mode: str = "zeros",
    align_corners: bool = True,
    convention: str = "pytorch",
) -> Tensor:
    """``data [N, C, *S]`` sampled at ``grid [N, len(S), *O]`` (x first: ``grid[:, 0]`` is the
    last axis) into ``[N, C, *O]``; ``method`` is ``"nearest"``, ``"bilinear"`` (trilinear in
    3-d) or ``"bicubic"``; ``convention`` as the module says (TVM's is ``"pytorch"``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 4, 4), name="x")
    >>> g = te.placeholder((1, 2, 5, 6), name="g")
    >>> [int(d) for d in topi.image.grid_sample(x, g).shape]
    [1, 3, 5, 6]
    """
    op = "grid_sample"
    nsp = data.ndim - 2
    if nsp not in _LAYOUTS or layout != _LAYOUTS[nsp]:
        raise op_error(
            op, "layout", layout, f"NCHW (4-d data) or NCDHW (5-d data), data is {data.ndim}-d"
        )
    if method not in _METHODS:
        raise op_error(op, "method", method, f"one of {_METHODS}")
    if padding_mode not in _PADDINGS:
        raise op_error(op, "padding_mode", padding_mode, f"one of {_PADDINGS}")
    if convention not in _CONVENTIONS:
        raise op_error(op, "convention", convention, f"one of {_CONVENTIONS}")
    sizes = const_ints(op, "data shape", data.shape)[2:]
    gshape = list(grid.shape)
    if grid.ndim != nsp + 2 or const_ints(op, "grid shape", gshape[:2])[1] != nsp:
        raise op_error(op, "grid shape", [str(d) for d in gshape], f"[N, {nsp}, ...]")
    dtype = data.dtype if data.dtype.startswith("float") else "float32"
    zero = const(0.0, dtype)
    bounds = [(0.0, n - 1.0) if align_corners else (-0.5, n - 0.5) for n in sizes]

    def body(*idx: Var) -> PrimExpr:
        n, c, o = idx[0], idx[1], idx[2:]
        # grid channel 0 is x (the last data axis).
        coords = [
            _unnormalize(grid(n, nsp - 1 - a, *o), sizes[a], align_corners, dtype)
            for a in range(nsp)
        ]
        if convention == "onnx" and method == "nearest":
            coords = [round(x) for x in coords]
        coords = [
            _place(x, sizes[a], bounds[a], method, padding_mode, convention)
            for a, x in enumerate(coords)
        ]
        if method == "nearest":
            picks = [
                _tap(round(x).astype("int32"), sizes[a], bounds[a], padding_mode, dtype)
                for a, x in enumerate(coords)
            ]
            value = data(n, c, *[p[0] for p in picks]).astype(dtype)
            return if_then_else(_all(*[p[1] for p in picks]), value, zero).astype(data.dtype)
        bases = [floor(x) for x in coords]
        fracs = [x - b for x, b in zip(coords, bases, strict=True)]
        if method == "bilinear":
            offsets: tuple[int, ...] = (0, 1)
            weights = [[const(1.0, dtype) - t, t] for t in fracs]
        else:
            offsets, weights = (-1, 0, 1, 2), [_cubic_weights(t, dtype) for t in fracs]
        total: PrimExpr = zero
        for pick in itertools.product(range(len(offsets)), repeat=nsp):
            reads = [
                _tap(
                    b.astype("int32") + const(offsets[k], "int32"),
                    sizes[a],
                    bounds[a],
                    padding_mode,
                    dtype,
                )
                for a, (b, k) in enumerate(zip(bases, pick, strict=True))
            ]
            value = if_then_else(
                _all(*[r[1] for r in reads]),
                data(n, c, *[r[0] for r in reads]).astype(dtype),
                zero,
            )
            for a, k in enumerate(pick):
                value = value * weights[a][k]
            total = total + value
        return total.astype(data.dtype)

    shape = [data.shape[0], data.shape[1], *gshape[2:]]
    return compute(shape, body, name="grid_sample", tag=tag.INJECTIVE)
