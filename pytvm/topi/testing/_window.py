"""The sliding window every convolution reference shares: stretching, padding and correlating
channels-first arrays.

:func:`correlate` computes ``out[n, f, *o] = sum(x_padded[n, c, *(o * stride + k * dilation)]
* w[f, c, *k])`` over the channels ``c`` of ``f``'s group and the kernel taps ``k``, in float64
(or int64 for integer inputs), one numpy contraction per kernel tap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...ffi.errors import TVMValueError

__all__ = ["Array", "accumulator", "correlate", "dilate_python", "ints", "pad_axes"]

Array = npt.NDArray[Any]


def ints(value: int | Sequence[int], n: int, what: str) -> tuple[int, ...]:
    """``value`` (an int or ``n`` ints) as ``n`` ints."""
    vals = [value] * n if isinstance(value, (int, np.integer)) else list(value)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    if len(vals) != n:
        raise TVMValueError(f"{what} {value!r} has {len(vals)} values; expected 1 or {n}")
    return tuple(int(v) for v in vals)


def accumulator(*arrays: Array) -> type[Any]:
    """The type to sum ``arrays`` in: int64 for integers and booleans, else float64."""
    if all(np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_ for a in arrays):
        return np.int64
    return np.float64


def dilate_python(
    input_np: Array,
    strides: Sequence[int],
    dilation_value: float = 0.0,
    out_dtype: Any = None,
) -> Array:
    """``input_np`` with ``strides[i] - 1`` copies of ``dilation_value`` between neighbours on
    axis ``i`` (TVM's ``topi.testing.dilate_python``).
    """
    if len(strides) != input_np.ndim:
        raise TVMValueError(
            f"dilate_python: {len(strides)} strides for a {input_np.ndim}-d input; "
            "give one per axis"
        )
    shape = [(d - 1) * s + 1 if d else 0 for d, s in zip(input_np.shape, strides, strict=True)]
    out = np.full(shape, dilation_value, dtype=out_dtype or input_np.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = input_np
    return out


def pad_axes(x: Array, first_axis: int, before: Sequence[int], after: Sequence[int]) -> Array:
    """``x`` zero-padded on the axes from ``first_axis`` on; a negative amount crops."""
    widths = [(0, 0)] * x.ndim
    cuts = [slice(None)] * x.ndim
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        axis = first_axis + i
        widths[axis] = (max(b, 0), max(a, 0))
        cuts[axis] = slice(max(-b, 0), x.shape[axis] - max(-a, 0))
    return np.pad(x[tuple(cuts)], widths)


def correlate(
    data: Array,
    weight: Array,
    strides: Sequence[int],
    before: Sequence[int],
    after: Sequence[int],
    dilation: Sequence[int] | None = None,
    groups: int = 1,
) -> Array:
    """Grouped correlation of ``data [N, C, *S]`` with ``weight [F, C // groups, *K]``.

    Returns ``[N, F, *O]`` in the accumulator type, ``O = (S + before + after - ((K - 1) *
    dilation + 1)) // stride + 1``.
    """
    n, c = data.shape[:2]
    f, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    dims = len(kernel)
    dilation = tuple(dilation) if dilation is not None else (1,) * dims
    if c != cg * groups or f % groups:
        raise TVMValueError(
            f"correlate: {c} input channels and {f} filters of {cg} channels do not split into "
            f"{groups} groups; expected channels == {cg} * groups and filters divisible by groups"
        )
    acc = accumulator(data, weight)
    x = pad_axes(data.astype(acc), 2, before, after)
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation, strict=True)]
    out_size = [(x.shape[2 + i] - spans[i]) // strides[i] + 1 for i in range(dims)]
    if min(out_size, default=1) < 1:
        raise TVMValueError(
            f"correlate: the dilated kernel {spans} does not fit the padded input {x.shape[2:]}"
        )
    xg = x.reshape(n, groups, cg, *x.shape[2:])
    wg = weight.astype(acc).reshape(groups, f // groups, cg, *kernel)
    out = np.zeros((n, groups, f // groups, *out_size), dtype=acc)
    for tap in np.ndindex(*kernel):
        window = tuple(
            slice(t * d, t * d + (o - 1) * s + 1, s)
            for t, d, o, s in zip(tap, dilation, out_size, strides, strict=True)
        )
        patch = xg[(slice(None), slice(None), slice(None), *window)]
        out += np.einsum("ngc...,gfc->ngf...", patch, wg[(Ellipsis, *tap)])
    return out.reshape(n, f, *out_size)
