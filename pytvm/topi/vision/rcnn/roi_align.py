"""``roi_align_nchw``: average or max of bilinear samples over each bin of each region of
interest, as ONNX Runtime's (and ONNX's) ``RoiAlign`` computes it.

Each output bin ``(ph, pw)`` of a region takes ``grid_h * grid_w`` samples (``sample_ratio``
per axis, or ``ceil(region extent / pooled extent)`` when it is not positive, which depends on
the region). A sample outside ``[-1, extent]`` reads nothing (zero); inside, it is the
bilinear interpolation of the four nearest pixels (clamped to the image). ``avg`` divides the
sum by the sample count; ``max`` takes the largest of the four weighted pixels of each sample
and the largest over the samples, ONNX Runtime's definition (a sample outside counts as 0).

A region-dependent grid is walked as a window of static extent: samples are at most ``1/2``
apart when there are two or more (``grid = ceil(bin)``, so ``bin / grid >= 1/2``), so at most
``2 * (extent + 1) + 1`` of them fall inside ``[-1, extent]``; the window starts at the first
of them and masks the samples past the grid, so the result is exact.
"""

from __future__ import annotations

from collections.abc import Sequence

from ....te.operation import compute, reduce_axis
from ....te.reduction import max as _max
from ....te.reduction import sum as _sum
from ....te.tensor import Tensor
from ....tir import op as tirop
from ....tir.expr import PrimExpr, Select, Var, const
from ... import tag
from ..._shape import const_int, op_error

__all__ = ["roi_align_nchw"]


class _Axis:
    """One axis (height or width) of one region: its start, bin size and sample grid."""

    def __init__(
        self, lo: PrimExpr, hi: PrimExpr, pooled: int, ratio: int, aligned: bool, dtype: str
    ) -> None:
        size = hi - lo
        if not aligned:  # a region is at least one pixel
            size = tirop.max(size, const(1.0, dtype))
        self.start = lo
        self.bin = size / const(float(pooled), dtype)
        if ratio > 0:
            self.grid: PrimExpr = const(ratio, "int32")
        else:
            self.grid = tirop.ceil(self.bin).astype("int32")
        self.grid_f = self.grid.astype(dtype)

    def first(self, p: PrimExpr, dtype: str, windowed: bool) -> PrimExpr:
        """The first sample index of bin ``p`` the window covers (one early, for rounding)."""
        if not windowed:
            return const(0, "int32")
        base = self.start + p.astype(dtype) * self.bin
        step = self.bin / tirop.max(self.grid_f, const(1.0, dtype))
        t = (const(-1.0, dtype) - base) / tirop.max(step, const(1e-30, dtype)) - 0.5
        t = tirop.min(tirop.max(t, const(-1.0, dtype)), self.grid_f)  # no overflow in the cast
        return tirop.max(tirop.ceil(t).astype("int32") - 1, const(0, "int32"))

    def coord(self, p: PrimExpr, i: PrimExpr, dtype: str) -> PrimExpr:
        g = tirop.max(self.grid_f, const(1.0, dtype))
        return self.start + p.astype(dtype) * self.bin + (i.astype(dtype) + 0.5) * self.bin / g


def _corner(v: PrimExpr, extent: PrimExpr, dtype: str) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
    """``(low, high, fraction)`` of coordinate ``v`` (already at least 0) on an axis."""
    last = extent - 1
    low = tirop.floor(v).astype("int32")
    edge = low >= last
    lo = Select(edge, last, low)
    hi = Select(edge, last, low + 1)
    frac = Select(edge, const(0.0, dtype), v - low.astype(dtype))
    return lo, hi, frac


class _Sampler:
    """The samples of every output bin: the body of the reduction and of the result."""

    def __init__(
        self,
        data: Tensor,
        rois: Tensor,
        pooled: tuple[int, int],
        spatial_scale: float,
        ratio: int,
        aligned: bool,
        window: tuple[int, int],
    ) -> None:
        self.data, self.rois, self.pooled = data, rois, pooled
        self.scale, self.ratio, self.aligned = spatial_scale, ratio, aligned
        self.windowed = ratio <= 0
        self.window = window
        self.ry = reduce_axis((0, window[0]), name="ry")
        self.rx = reduce_axis((0, window[1]), name="rx")

    def axes(self, n: Var) -> tuple[_Axis, _Axis]:
        dtype = self.data.dtype
        offset = 0.5 if self.aligned else 0.0

        def at(k: int) -> PrimExpr:
            scaled = self.rois(n, const(k)).astype(dtype) * const(self.scale, dtype)
            return scaled - const(offset, dtype)

        ax_h = _Axis(at(2), at(4), self.pooled[0], self.ratio, self.aligned, dtype)
        ax_w = _Axis(at(1), at(3), self.pooled[1], self.ratio, self.aligned, dtype)
        return ax_h, ax_w

    def sample(self, kind: str, n: Var, c: Var, ph: Var, pw: Var) -> tuple[PrimExpr, PrimExpr]:
        """``(value, in the grid)`` of the sample at window position ``(ry, rx)``."""
        data, dtype = self.data, self.data.dtype
        height, width = data.shape[2], data.shape[3]
        ax_h, ax_w = self.axes(n)
        iy = ax_h.first(ph, dtype, self.windowed) + self.ry.var
        ix = ax_w.first(pw, dtype, self.windowed) + self.rx.var
        y, x = ax_h.coord(ph, iy, dtype), ax_w.coord(pw, ix, dtype)
        in_grid = (iy < ax_h.grid) & (ix < ax_w.grid)
        inside = (
            in_grid
            & (y >= const(-1.0, dtype))
            & (y <= height.astype(dtype))
            & (x >= const(-1.0, dtype))
            & (x <= width.astype(dtype))
        )
        zero = const(0.0, dtype)
        y0, y1, ly = _corner(tirop.max(y, zero), height, dtype)
        x0, x1, lx = _corner(tirop.max(x, zero), width, dtype)
        hy, hx = const(1.0, dtype) - ly, const(1.0, dtype) - lx
        b = self.rois(n, const(0)).astype("int32")
        b = Select((b >= 0) & (b < data.shape[0]), b, const(0, "int32"))
        terms = [
            hy * hx * data(b, c, y0, x0),
            hy * lx * data(b, c, y0, x1),
            ly * hx * data(b, c, y1, x0),
            ly * lx * data(b, c, y1, x1),
        ]
        if kind == "avg":
            value = terms[0] + terms[1] + terms[2] + terms[3]
        else:
            value = tirop.max(tirop.max(terms[0], terms[1]), tirop.max(terms[2], terms[3]))
        return Select(inside, value, zero), in_grid

    def reduce(self, kind: str, n: Var, c: Var, ph: Var, pw: Var) -> PrimExpr:
        value, in_grid = self.sample(kind, n, c, ph, pw)
        axes = [self.ry, self.rx]
        if kind == "avg":
            return _sum(value, axis=axes)  # type: ignore[no-any-return]
        lowest = tirop.min_value(self.data.dtype)
        return _max(Select(in_grid, value, lowest), axis=axes)  # type: ignore[no-any-return]

    def finish(self, kind: str, v: PrimExpr, n: Var, ph: Var, pw: Var) -> PrimExpr:
        dtype = self.data.dtype
        ax_h, ax_w = self.axes(n)
        count = ax_h.grid * ax_w.grid
        if kind == "avg":
            return v / tirop.max(count, const(1, "int32")).astype(dtype)
        if not self.windowed:
            return v
        # the grid's samples outside the window are outside the image: they count as 0
        covered = self._covered(ax_h, ph, self.window[0]) * self._covered(ax_w, pw, self.window[1])
        zero = const(0.0, dtype)
        return Select(count <= 0, zero, Select(covered < count, tirop.max(v, zero), v))

    def _covered(self, ax: _Axis, p: PrimExpr, extent: int) -> PrimExpr:
        first = ax.first(p, self.data.dtype, True)
        return tirop.max(tirop.min(ax.grid - first, const(extent, "int32")), const(0, "int32"))


def roi_align_nchw(
    data: Tensor,
    rois: Tensor,
    pooled_size: int | Sequence[int],
    spatial_scale: float,
    mode: str | bytes = "avg",
    sample_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """RoiAlign of ``data`` ``[N, C, H, W]`` over ``rois`` ``[R, 5]`` rows of
    ``(batch index, x1, y1, x2, y2)``; the result is ``[R, C, pooled_h, pooled_w]``.
    ``aligned`` shifts the scaled corners by half a pixel (ONNX's ``half_pixel``) and lets a
    region be smaller than a pixel.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 2, 8, 8), name="x")
    >>> r = te.placeholder((3, 5), name="r")
    >>> [str(d) for d in topi.vision.rcnn.roi_align_nchw(x, r, 2, 1.0, "avg", 2).shape]
    ['3', '2', '2', '2']
    """
    op = "roi_align_nchw"
    kind = mode.decode() if isinstance(mode, bytes) else str(mode)
    if kind not in ("avg", "max"):
        raise op_error(op, "mode", kind, "'avg' or 'max'")
    if data.ndim != 4 or rois.ndim != 2 or const_int(rois.shape[1]) != 5:  # noqa: PLR2004
        got = (data.ndim, [str(d) for d in rois.shape])
        raise op_error(op, "shapes", got, "4-d data and [R, 5] rois")
    pooled = (
        (pooled_size, pooled_size)
        if isinstance(pooled_size, int)
        else (int(pooled_size[0]), int(pooled_size[1]))
    )
    hc, wc = const_int(data.shape[2]), const_int(data.shape[3])
    if hc is None or wc is None:
        raise op_error(op, "data shape", [str(d) for d in data.shape], "static H and W")
    if sample_ratio <= 0:
        window = (2 * (hc + 1) + 3, 2 * (wc + 1) + 3)
    else:
        window = (sample_ratio, sample_ratio)
    s = _Sampler(data, rois, pooled, spatial_scale, sample_ratio, aligned, window)
    shape = [rois.shape[0], data.shape[1], const(pooled[0]), const(pooled[1])]
    reduced = compute(
        shape,
        lambda n, c, ph, pw: s.reduce(kind, n, c, ph, pw),
        name=f"T_roi_align_{kind}_reduce",
        tag=tag.COMM_REDUCE,
    )
    return compute(
        shape,
        lambda n, c, ph, pw: s.finish(kind, reduced(n, c, ph, pw), n, ph, pw),
        name="T_roi_align",
        tag=tag.INJECTIVE,
    )
