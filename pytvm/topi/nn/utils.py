"""TVM's ``topi.nn.utils``: padding from a convolution's ``padding`` attribute, and padding
and stride read back from the shapes of built stages.

``padding`` is an int (the same on every side), one value per spatial axis (the same before
and after), two values per spatial axis (all the befores, then all the afters), or
``"VALID"`` / ``"SAME"``. ``"SAME"`` pads ``kernel - 1`` in all, the odd one before.

Examples
--------
>>> from pytvm.topi.nn.utils import get_pad_tuple, get_pad_tuple_generic
>>> get_pad_tuple(1, (3, 3))
(1, 1, 1, 1)
>>> get_pad_tuple("SAME", (4, 3))
(2, 1, 1, 1)
>>> get_pad_tuple_generic((1, 2), (3, 3))
[[1, 2], [1, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ffi.errors import TVMValueError
from ...te.tensor import Tensor
from ..utils import get_const_int

__all__ = [
    "get_pad_tuple",
    "get_pad_tuple1d",
    "get_pad_tuple3d",
    "get_pad_tuple_generic",
    "infer_pad",
    "infer_pad3d",
    "infer_stride",
]


def _totals(padding: Any, kernel: Sequence[Any], ndim: int) -> list[Any] | None:
    """Total padding per spatial axis, or None when ``padding`` gives befores and afters."""
    if isinstance(padding, (tuple, list)):
        if len(padding) == ndim:
            return [p * 2 for p in padding]
        if len(padding) == 2 * ndim:
            return None
        raise TVMValueError(
            f"padding {padding!r} has {len(padding)} values; expected {ndim} or {2 * ndim}"
        )
    if isinstance(padding, int):
        return [padding * 2] * ndim
    if padding == "VALID":
        return [0] * ndim
    if padding == "SAME":
        if len(kernel) < ndim:
            raise TVMValueError(f"kernel {kernel!r} has {len(kernel)} sizes; expected {ndim}")
        return [k - 1 for k in list(kernel)[:ndim]]
    raise TVMValueError(f"unknown padding {padding!r}; expected an int, a tuple, VALID or SAME")


def _pairs(padding: Any, kernel: Sequence[Any], ndim: int) -> list[list[Any]]:
    totals = _totals(padding, kernel, ndim)
    if totals is None:
        return [list(padding[:ndim]), list(padding[ndim:])]
    befores = [(t + 1) // 2 for t in totals]
    return [befores, [t - b for t, b in zip(totals, befores, strict=True)]]


def get_pad_tuple_generic(padding: Any, kernel: Sequence[Any]) -> list[list[Any]]:
    """``[befores, afters]``: the padding of each of the ``len(kernel)`` spatial axes."""
    return _pairs(padding, kernel, len(kernel))


def get_pad_tuple(padding: Any, kernel: Sequence[Any]) -> tuple[Any, Any, Any, Any]:
    """``(top, left, down, right)`` of a 2-d window."""
    (top, left), (down, right) = _pairs(padding, kernel, 2)
    return top, left, down, right


def get_pad_tuple1d(padding: Any, kernel: Sequence[Any]) -> tuple[Any, Any]:
    """``(left, right)`` of a 1-d window."""
    (left,), (right,) = _pairs(padding, kernel, 1)
    return left, right


def get_pad_tuple3d(padding: Any, kernel: Sequence[Any]) -> tuple[Any, Any, Any, Any, Any, Any]:
    """``(front, top, left, back, down, right)`` of a 3-d window."""
    (front, top, left), (back, down, right) = _pairs(padding, kernel, 3)
    return front, top, left, back, down, right


def infer_pad(data: Tensor, data_pad: Tensor | None) -> tuple[int, int]:
    """``(hpad, wpad)`` of an NCHW pad stage: half of what it adds to each axis."""
    if data_pad is None:
        return 0, 0
    _, _, ih, iw = data.shape
    _, _, th, tw = data_pad.shape
    return get_const_int((th - ih) // 2), get_const_int((tw - iw) // 2)


def infer_pad3d(data: Tensor, data_pad: Tensor | None, layout: str) -> tuple[int, int, int]:
    """``(dpad, hpad, wpad)``: what an ``NDHWC`` or ``NCDHW`` pad stage adds to each axis."""
    if data_pad is None:
        return 0, 0, 0
    if layout == "NDHWC":
        spatial = slice(1, 4)
    elif layout == "NCDHW":
        spatial = slice(2, 5)
    else:
        raise TVMValueError(f"infer_pad3d: layout {layout!r} is not supported; use NDHWC or NCDHW")
    d, h, w = (
        get_const_int(t - i)
        for t, i in zip(data_pad.shape[spatial], data.shape[spatial], strict=True)
    )
    return d, h, w


def infer_stride(data: Tensor, kernel: Tensor, out: Tensor) -> tuple[int, int]:
    """``(hstride, wstride)`` of an NCHW convolution from its input, kernel and output."""
    _, _, ih, iw = (get_const_int(d) for d in data.shape)
    _, _, kh, kw = (get_const_int(d) for d in kernel.shape)
    _, _, oh, ow = (get_const_int(d) for d in out.shape)
    hs = (ih - kh) // max(oh - 1, 1) + (1 if oh == 1 else 0)
    ws = (iw - kw) // max(ow - 1, 1) + (1 if ow == 1 else 0)
    return hs, ws
