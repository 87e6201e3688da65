"""The per-element work of resizing over any number of spatial axes: where an output
coordinate reads in the input (``coordinate_transformation_mode``), and nearest, linear and
cubic interpolation between the input elements around it.

An output coordinate ``x`` maps to an input coordinate by the mode (``in``/``out`` the
extents): ``half_pixel``: ``(x + 0.5) * in / out - 0.5``; ``pytorch_half_pixel``: the same, or 0
when ``out == 1``; ``align_corners``: ``x * (in - 1) / (out - 1)``; ``asymmetric``:
``x * in / out``; ``tf_half_pixel_for_nn``: ``(x + 0.5) * in / out``; ``tf_crop_and_resize``:
``start * (in - 1) + x * (end - start) * (in - 1) / (out - 1)`` over a region of interest;
``half_pixel_symmetric``: ``half_pixel`` shifted to keep the image centred when ``out`` was
rounded from a scale. Values are interpolated in float32 and cast to the output type; reads
are clamped to the image.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...tir.expr import ExprLike, PrimExpr, const, convert
from ...tir.op import any as _any
from ...tir.op import ceil, floor, if_then_else, round
from ...tir.op import max as emax
from ...tir.op import min as emin
from .._shape import const_int

__all__ = [
    "COORDINATE_MODES",
    "ROUNDING_METHODS",
    "AxisMap",
    "interpolate",
    "source_coord",
]

COORDINATE_MODES = (
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
    "half_pixel_symmetric",
)
ROUNDING_METHODS = ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_F32 = "float32"
_EPSILON = 1e-5  # TVM's nudge before floor/ceil, so 2.9999999 rounds as 3


def _f(v: ExprLike) -> PrimExpr:
    return convert(v).astype(_F32) if not isinstance(v, float) else const(v, _F32)


@dataclass(frozen=True, slots=True)
class AxisMap:
    """How output coordinates of one spatial axis map to the input: input and output
    extents, the mode, and (for ``tf_crop_and_resize``) the region ``start``/``end`` as
    fractions of the image; ``scale`` (output over input) replaces ``out / size`` where a
    caller gave the scale rather than the size (ONNX ``Resize``).
    """

    size: PrimExpr
    out: PrimExpr
    mode: str
    start: ExprLike = 0.0
    end: ExprLike = 1.0
    scale: float | None = None

    def integer_ratio(self) -> int | None:
        """``out / size`` when both are constants and it is a whole number (asymmetric
        nearest then reads ``x // ratio``, as TVM does).
        """
        size, out = const_int(self.size), const_int(self.out)
        if self.scale or size is None or out is None or size <= 0 or out % size:
            return None
        return out // size


def source_coord(x: PrimExpr, axis: AxisMap) -> PrimExpr:  # noqa: PLR0911 - one return per mode
    """The input coordinate (float32) that output coordinate ``x`` reads."""
    xf = x.astype(_F32)
    size, out = _f(axis.size), _f(axis.out)
    ratio = const(1.0 / axis.scale, _F32) if axis.scale else size / out
    mode = axis.mode
    if mode == "half_pixel":
        return (xf + const(0.5, _F32)) * ratio - const(0.5, _F32)
    if mode == "align_corners":
        if axis.scale:  # ONNX: the unrounded resized length
            span = _f(axis.size) * const(axis.scale, _F32) - const(1.0, _F32)
        else:
            span = out - const(1.0, _F32)
        zero = const(0.0, _F32)
        return if_then_else(span > zero, xf * (size - const(1.0, _F32)) / span, zero)
    if mode == "asymmetric":
        return xf * ratio
    if mode == "pytorch_half_pixel":
        shifted = (xf + const(0.5, _F32)) * ratio - const(0.5, _F32)
        return if_then_else(out > const(1.0, _F32), shifted, const(0.0, _F32))
    if mode == "tf_half_pixel_for_nn":
        return (xf + const(0.5, _F32)) * ratio
    if mode == "tf_crop_and_resize":
        start, end = _f(axis.start), _f(axis.end)
        last = size - const(1.0, _F32)
        inside = start * last + xf * (end - start) * last / (out - const(1.0, _F32))
        centre = const(0.5, _F32) * (start + end) * last
        return if_then_else(out > const(1.0, _F32), inside, centre)
    # half_pixel_symmetric
    s = axis.scale or None
    if s is None:
        adjust: PrimExpr = const(1.0, _F32)
    else:
        adjust = out / (const(s, _F32) * size)
    offset = size / const(2.0, _F32) * (const(1.0, _F32) - adjust)
    return offset + (xf + const(0.5, _F32)) * ratio - const(0.5, _F32)


def nearest_index(v: PrimExpr, method: str) -> PrimExpr:
    """The input index (int32) nearest coordinate ``v`` by ``method``."""
    if method == "round_prefer_floor":
        r = ceil(v - const(0.5, _F32))
    elif method == "round_prefer_ceil":
        r = floor(v + const(0.5, _F32))
    elif method == "floor":
        r = floor(v + const(_EPSILON, _F32))
    elif method == "ceil":
        r = ceil(v - const(_EPSILON, _F32))
    else:
        r = round(v)
    return r.astype("int32")


def _clamp(i: PrimExpr, size: PrimExpr) -> PrimExpr:
    return emax(emin(i, convert(size).astype("int32") - 1), const(0, "int32"))


def _lerp(a: PrimExpr, b: PrimExpr, t: PrimExpr) -> PrimExpr:
    return a * (const(1.0, _F32) - t) + b * t


def _cubic_weights(t: PrimExpr, alpha: float) -> list[PrimExpr]:
    a = const(alpha, _F32)
    t2, t3 = t * t, t * t * t
    one, two, three = const(1.0, _F32), const(2.0, _F32), const(3.0, _F32)
    return [
        a * (t3 - two * t2 + t),
        (a + two) * t3 - (three + a) * t2 + one,
        -(a + two) * t3 + (three + two * a) * t2 - a * t,
        -a * t3 + a * t2,
    ]


def interpolate(
    read: Callable[[Sequence[PrimExpr]], PrimExpr],
    coords: Sequence[PrimExpr],
    sizes: Sequence[PrimExpr],
    method: str,
    rounding: str,
    alpha: float = -0.5,
    exclude_outside: bool = False,
    ratios: Sequence[int | None] | None = None,
    outputs: Sequence[PrimExpr] | None = None,
) -> PrimExpr:
    """The float32 value at input ``coords`` (one per spatial axis, outermost first) by
    ``method`` (``nearest``, ``linear`` or ``cubic``); ``read(indices)`` reads the input at
    clamped int32 indices. For nearest, an axis with a whole ``ratios[i]`` reads
    ``outputs[i] // ratio``.
    """
    n = len(coords)
    if method == "nearest":
        idx = []
        for i, (c, size) in enumerate(zip(coords, sizes, strict=True)):
            ratio = ratios[i] if ratios else None
            if ratio is not None and outputs is not None:
                idx.append(outputs[i].astype("int32") // ratio)
            else:
                idx.append(_clamp(nearest_index(c, rounding), size))
        return read(idx).astype(_F32)
    bases = [floor(c) for c in coords]
    fracs = [c - b for c, b in zip(coords, bases, strict=True)]
    ints = [b.astype("int32") for b in bases]
    taps = 2 if method == "linear" else 4
    first = 0 if method == "linear" else -1

    def weights(axis: int) -> list[PrimExpr]:
        if method == "linear":
            return [const(1.0, _F32) - fracs[axis], fracs[axis]]
        w = _cubic_weights(fracs[axis], alpha)
        if not exclude_outside:
            return w
        size = convert(sizes[axis]).astype("int32")
        w = [
            if_then_else(
                _any(ints[axis] + first + k < 0, ints[axis] + first + k > size - 1),
                const(0.0, _F32),
                wk,
            )
            for k, wk in enumerate(w)
        ]
        total = w[0] + w[1] + w[2] + w[3]
        return [wk / total for wk in w]

    def level(axis: int, prefix: list[PrimExpr]) -> PrimExpr:
        """Interpolate along ``axis`` (innermost first) with the outer indices fixed."""
        if axis == n:
            return read(prefix).astype(_F32)
        pts = [
            level(axis + 1, [*prefix, _clamp(ints[axis] + first + k, sizes[axis])])
            for k in range(taps)
        ]
        if method == "linear":
            return _lerp(pts[0], pts[1], fracs[axis])
        w = weights(axis)
        return pts[0] * w[0] + pts[1] * w[1] + pts[2] * w[2] + pts[3] * w[3]

    return level(0, [])
