"""CPU schedule of ``conv2d_nchw_pointwise``: tiles of output channels x pixel vectors.

A tile is ``fb`` output channels (unrolled) by one vector of pixels: ``fb`` vector
accumulators, as many as the target's vector registers hold beside the input vector and the
broadcast kernel value; it accumulates over the input channels (one input vector load and
``fb`` kernel broadcasts per step), then is stored along the pixels with the fused elementwise
work. Tiles run in parallel, output-channel blocks outermost so their kernel rows stay in
cache. The pixels must be a whole number of vectors (:func:`conv2d_pointwise_fits`).

Knobs (AutoTVM, templates ``<row>.x86``; the fallback is the choice above): ``tile_oc`` output
channels a tile (divisors of the channels up to the vector registers less two), ``tile_pixels``
vectors of pixels a tile (1 to 4 dividing the plane's vectors), ``unroll_ic`` input channels
of the reduction unrolled (1, 2 or 4 dividing the channels). A point whose tile holds more
accumulators than that raises ``TVMValueError`` (an instantiation error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...autotvm.task.space import ConfigEntity
from ...ffi.errors import TVMValueError
from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import divisors, extent, fuse_parallel, product, vector_registers
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import CONV2D_NCHW_POINTWISE
from . import tunable

__all__ = ["conv2d_pointwise_applies", "conv2d_pointwise_fits", "schedule_conv2d_nchw_pointwise"]

#: Share of the vector registers that hold accumulators (as in the packed convolution).
_ACCUMULATOR_SHARE = 0.75
#: The most pixel vectors a tile and input channels an unrolled reduction step the knobs offer.
_MAX_PIXEL_VECTORS = 4
_MAX_UNROLL_IC = 4


def conv2d_pointwise_fits(pixels: int, dtype: str) -> bool:
    """Whether a plane of ``pixels`` is a whole number (at least one) of the target's vectors
    of ``dtype``, as the pointwise schedule's tiles need.

    Examples
    --------
    >>> from pytvm.target import Target
    >>> from pytvm.topi.x86 import conv2d_pointwise_fits
    >>> with Target("c -mattr=+avx512f"):
    ...     conv2d_pointwise_fits(28 * 28, "float32"), conv2d_pointwise_fits(14 * 14, "float32")
    (True, False)
    """
    lanes = vector_lanes(dtype)
    return lanes >= 2 and pixels >= lanes and pixels % lanes == 0  # noqa: PLR2004


def conv2d_pointwise_applies(
    data_shape: Sequence[int],
    kernel_shape: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    groups: int,
    dtype: str,
) -> bool:
    """Whether an NCHW convolution is pointwise (1x1 kernel, stride 1, no padding, one group)
    on planes of whole vectors: then ``conv2d_nchw_pointwise`` computes it on this target.
    """
    return (
        groups == 1
        and len(data_shape) == len(kernel_shape) == 4  # noqa: PLR2004
        and tuple(kernel_shape[2:]) == (1, 1)
        and tuple(strides) == (1, 1)
        and not any(padding)
        and conv2d_pointwise_fits(int(data_shape[2]) * int(data_shape[3]), dtype)
    )


def _channel_block(channels: int | None, dtype: str) -> int:
    cap = max(1, int(vector_registers(dtype) * _ACCUMULATOR_SHARE))
    if channels is None:
        return 1
    return max(d for d in range(1, min(cap, channels) + 1) if channels % d == 0)


def _tile_knobs(cfg: Any, conv: ComputeOp, dtype: str) -> tuple[int, int, int]:
    """``(fb, pixel vectors, unrolled input channels)`` of a tile from the knobs of ``cfg``
    (declared here; their fallback: ``_channel_block``, one vector, no unrolling).
    """
    lanes = vector_lanes(dtype)
    channels, pixels = extent(conv.axis[1]), extent(conv.axis[2]) or lanes
    cap = max(1, vector_registers(dtype) - 2)
    fb = tunable.knob(cfg, "tile_oc", divisors(channels, cap), _channel_block(channels, dtype))
    vectors = tunable.knob(
        cfg, "tile_pixels", divisors(pixels // max(1, lanes), _MAX_PIXEL_VECTORS), 1
    )
    unroll_ic = tunable.knob(
        cfg,
        "unroll_ic",
        [d for d in divisors(extent(conv.reduce_axis[0]), _MAX_UNROLL_IC) if d & (d - 1) == 0],
        1,
    )
    if fb * vectors > cap and isinstance(cfg, ConfigEntity):  # a point, not the space
        raise TVMValueError(
            f"conv2d_nchw_pointwise schedule: a tile of {fb} channels x {vectors} pixel "
            f"vectors holds {fb * vectors} vector accumulators; the target has at most {cap}: "
            "a smaller tile_oc or tile_pixels"
        )
    return fb, vectors, unroll_ic


def _schedule_tiles(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = conv.output(0).dtype  # the accumulators' (the fused output may be requantized)
    lanes = vector_lanes(dtype)
    fb, vectors, unroll_ic = _tile_knobs(tunable.config(out), conv, dtype)
    cache = s.cache_write(conv.output(0), "local")
    s[conv].compute_inline()
    stage = s[out.op]
    n, f, y, x = stage.op.axis
    pixels = stage.fuse(y, x)
    fo, fi = stage.split(f, factor=fb)
    po, pi = stage.split(pixels, factor=lanes * vectors)
    stage.reorder(n, fo, po, fi, pi)
    work = product([*(extent(a) for a in conv.axis), *(extent(r) for r in conv.reduce_axis)])
    tile = fuse_parallel(stage, [n, fo, po], work)
    stage.unroll(fi)
    if vectors > 1:
        pv, pi = stage.split(pi, factor=lanes)
        stage.unroll(pv)
    stage.vectorize(pi)
    s[cache].compute_at(stage, tile)
    cn, cf, cp = s[cache].op.axis
    (rc,) = s[cache].op.reduce_axis
    if unroll_ic > 1:
        rc, ri = s[cache].split(rc, factor=unroll_ic)
        s[cache].reorder(cn, rc, ri, cf, cp)
        s[cache].unroll(ri)
    else:
        s[cache].reorder(cn, rc, cf, cp)
    s[cache].unroll(cf)
    if vectors > 1:
        cv, cp = s[cache].split(cp, factor=lanes)
        s[cache].unroll(cv)
    s[cache].vectorize(cp)


def _carrier(conv: ComputeOp, outputs: Sequence[Tensor]) -> Tensor | None:
    if len(outputs) != 1 or not is_inlinable(outputs[0].op):
        return None
    out = outputs[0]
    n, f, pixels = (const_int(d) for d in conv.output(0).shape)
    dims = [const_int(d) for d in out.shape]
    if len(dims) != 4 or dims[:2] != [n, f] or None in dims[2:]:  # noqa: PLR2004
        return None
    return out if dims[2] * dims[3] == pixels else None  # type: ignore[operator]


def schedule_conv2d_nchw_pointwise(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv2d_nchw_pointwise`` and the elementwise stages after it."""
    return schedule_anchored(outs, CONV2D_NCHW_POINTWISE, _carrier, _schedule_tiles)
