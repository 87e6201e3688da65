"""Numpy references of pooling (TVM's ``poolnd_python``, ``pool_grad_nchw``,
``adaptive_pool``).

A max pool never sees padding (padded points count as the dtype's lowest value, as topi
pads them); an average pool divides by the points of its window inside the padded input
(``count_include_pad``) or inside the input itself. With ``ceil_mode`` the last window may hang
over the padded input; the part outside counts for nothing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ._window import Array, ints, pad_axes

__all__ = ["adaptive_pool", "pool_grad_nchw", "poolnd_python"]

_CHANNELS_FIRST = {3: "NCW", 4: "NCHW", 5: "NCDHW"}


def _lowest(dtype: Any) -> Any:
    dt = np.dtype(dtype)
    return np.finfo(dt).min if np.issubdtype(dt, np.floating) else np.iinfo(dt).min


def _to_nc(x: Array, layout: str | None) -> Array:
    if x.ndim not in _CHANNELS_FIRST:
        raise TVMValueError(f"pooling: a {x.ndim}-d input; expected 3, 4 or 5 dimensions")
    plain = _CHANNELS_FIRST[x.ndim]
    if layout is None or layout == plain:
        return x
    if sorted(layout) != sorted(plain):
        raise TVMValueError(f"pooling: layout {layout!r} does not permute {plain!r}")
    return x.transpose([layout.index(a) for a in plain])


def _from_nc(x: Array, layout: str | None) -> Array:
    plain = _CHANNELS_FIRST[x.ndim]
    if layout is None or layout == plain:
        return x
    return x.transpose([plain.index(a) for a in layout])


def _out_size(size: int, k: int, s: int, d: int, pads: int, ceil_mode: bool) -> int:
    span = (size + pads - (k - 1) * d - 1) / s
    return int(math.ceil(span) if ceil_mode else math.floor(span)) + 1


def poolnd_python(
    np_data: Array,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    padding_before: Sequence[int],
    padding_after: Sequence[int],
    pool_type: str,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
    dtype: str = "float32",
    layout: str | None = None,
) -> Array:
    """1-, 2- or 3-d ``"max"`` or ``"avg"`` pooling of ``np_data`` in ``layout`` (channels
    first when None); the result is ``dtype``, in ``layout``. As in TVM's reference, padding
    counts as zeros in a max when ``count_include_pad`` (topi's kernels pad a max with the
    lowest value; TVM's tests add a ReLU, under which the two agree).
    """
    if pool_type not in ("max", "avg"):
        raise TVMValueError(f"poolnd_python: pool_type {pool_type!r}; expected 'max' or 'avg'")
    data = _to_nc(np_data, layout)
    dims = data.ndim - 2
    k, s, d = (
        ints(v, dims, name)
        for v, name in ((kernel, "kernel"), (strides, "strides"), (dilation, "dilation"))
    )
    pb, pa = ints(padding_before, dims, "padding"), ints(padding_after, dims, "padding")
    spatial = data.shape[2:]
    out = [_out_size(spatial[i], k[i], s[i], d[i], pb[i] + pa[i], ceil_mode) for i in range(dims)]
    # Room for the windows of the last outputs, past the padded input when ceil_mode.
    reach = [(o - 1) * st + (kk - 1) * dd + 1 for o, st, kk, dd in zip(out, s, k, d, strict=True)]
    extra = [max(0, r - (n + b + a)) for r, n, b, a in zip(reach, spatial, pb, pa, strict=True)]
    after = [a + e for a, e in zip(pa, extra, strict=True)]
    inside = pad_axes(np.ones(data.shape, dtype=bool), 2, pb, after)
    padded = _padded_region(data.shape, pb, pa, extra)
    values = pad_axes(data.astype(np.float64), 2, pb, after)
    shape = (*data.shape[:2], *out)
    if pool_type == "max":
        acc = np.full(shape, -np.inf)
    else:
        acc, count = np.zeros(shape), np.zeros(shape)
    for tap in np.ndindex(*k):
        window = (
            slice(None),
            slice(None),
            *(
                slice(t * dd, t * dd + (o - 1) * st + 1, st)
                for t, dd, o, st in zip(tap, d, out, s, strict=True)
            ),
        )
        v, m = values[window], inside[window]
        if pool_type == "max":
            # TVM's reference pads max pooling with 0 when padding counts (count_include_pad),
            # so a padding point takes part in the max; past the padding (ceil_mode) never.
            pad = np.where(padded[window], 0.0, -np.inf) if count_include_pad else -np.inf
            acc = np.maximum(acc, np.where(m, v, pad))
        else:
            acc += np.where(m, v, 0.0)
            count += padded[window] if count_include_pad else m
    if pool_type == "max":
        res = np.where(np.isinf(acc), _lowest(dtype), acc)
    else:
        res = np.divide(acc, count, out=np.zeros(shape), where=count > 0)
    return _from_nc(res.astype(dtype), layout)


def _padded_region(
    shape: Sequence[int], before: Sequence[int], after: Sequence[int], extra: Sequence[int]
) -> Array:
    """Ones over the padded input, zeros over the ``extra`` points past it."""
    ones = np.ones(
        (*shape[:2], *(n + b + a for n, b, a in zip(shape[2:], before, after, strict=True))),
        dtype=bool,
    )
    return pad_axes(ones, 2, [0] * len(extra), extra)


def pool_grad_nchw(
    a_np: Array,
    out_grad_np: Array,
    pool_size: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    pool_type: str,
    ceil_mode: bool,
    count_include_pad: bool = True,
) -> Array:
    """The gradient of 2-d NCHW pooling with respect to its input ``a_np``, given the output
    gradient ``out_grad_np``; ``padding`` is ``(top, left, bottom, right)``. A max window passes
    its gradient to its first maximum; an average window spreads it over its count.
    """
    del ceil_mode  # the output gradient's shape already says how many windows there are
    n, c, h, w = a_np.shape
    kh, kw = ints(pool_size, 2, "pool_size")
    sh, sw = ints(strides, 2, "strides")
    pt, pl, pb, pr = ints(padding, 4, "padding")
    oh, ow = out_grad_np.shape[2:]
    ph, pw = max(h + pt + pb, (oh - 1) * sh + kh), max(w + pl + pr, (ow - 1) * sw + kw)
    data = np.full((n, c, ph, pw), -np.inf)
    data[:, :, pt : pt + h, pl : pl + w] = a_np
    in_pad = np.zeros((ph, pw))
    in_pad[: h + pt + pb, : w + pl + pr] = 1
    grad = np.zeros((n, c, ph, pw))
    rows, cols = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
    for i, j in itertools.product(range(oh), range(ow)):
        win = (slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw))
        g = out_grad_np[:, :, i, j].astype(np.float64)
        if pool_type == "avg":
            region = in_pad[win] if count_include_pad else np.isfinite(data[0, 0][win])
            grad[(slice(None), slice(None), *win)] += (g / max(region.sum(), 1))[:, :, None, None]
        elif pool_type == "max":
            first = np.argmax(data[(slice(None), slice(None), *win)].reshape(n, c, -1), axis=2)
            y, x = np.unravel_index(first, (kh, kw))
            np.add.at(grad, (rows, cols, y + i * sh, x + j * sw), g)
        else:
            raise TVMValueError(f"pool_grad_nchw: pool_type {pool_type!r}; expected max or avg")
    return grad[:, :, pt : pt + h, pl : pl + w]


def _bounds(i: int, out: int, size: int) -> slice:
    return slice(i * size // out, -(-(i + 1) * size // out))


def adaptive_pool(
    np_data: Array, out_size: int | Sequence[int], pool_type: str, layout: str
) -> Array:
    """Adaptive ``"max"`` or ``"avg"`` pooling to ``out_size``: output ``i`` of an axis of
    ``n`` points pools points ``floor(i * n / out)`` up to ``ceil((i + 1) * n / out)``.
    """
    sizes = (out_size,) if isinstance(out_size, int) else tuple(out_size)
    if layout in ("NCW", "NCHW", "NCDHW"):
        data = np_data
    elif layout in ("NWC", "NHWC", "NDHWC"):
        data = np.moveaxis(np_data, -1, 1)
    else:
        raise TVMValueError(
            f"adaptive_pool: layout {layout!r}; expected NCW, NCHW, NCDHW or channels-last"
        )
    if len(sizes) != data.ndim - 2:
        raise TVMValueError(f"adaptive_pool: out_size {out_size!r} for a {data.ndim}-d input")
    op = np.mean if pool_type == "avg" else np.max
    out = np.zeros((*data.shape[:2], *sizes), dtype=np_data.dtype)
    axes = tuple(range(2, data.ndim))
    for idx in itertools.product(*(range(o) for o in sizes)):
        region: tuple[slice, ...] = tuple(
            _bounds(i, o, n) for i, o, n in zip(idx, sizes, data.shape[2:], strict=True)
        )
        where: tuple[Any, ...] = (slice(None), slice(None), *idx)
        out[where] = op(data[(slice(None), slice(None), *region)], axis=axes)
    return out if data is np_data else np.moveaxis(out, 1, -1)
