"""The window a 2-d NCHW convolution slides: stride, dilation, padding, output size, taps.

``padding`` is an int, ``(pad_h, pad_w)`` or ``(top, left, bottom, right)``; stride and
dilation an int or a pair. Output row ``y`` reads input row ``y * stride_h + ry * dilation_h``
of the padded input at kernel tap ``ry`` (a reduce axis over the kernel height; ``rx`` likewise
over the width), so the padded input (a stage named ``pad_temp``) has
``(H + top + bottom - ((KH - 1) * dilation_h + 1)) // stride_h + 1`` output rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...te.operation import reduce_axis
from ...te.tensor import Tensor
from ...tir.expr import IterVar, PrimExpr
from .._shape import op_error, pair
from .padding import pad

__all__ = ["ConvWindow", "conv_output_size", "conv_window", "padding4"]

_PADS = 4


def padding4(op: str, padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """``(top, left, bottom, right)`` from an int, a pair or a 4-sequence."""
    vals = [padding] if isinstance(padding, int) else list(padding)
    if len(vals) == 1:
        vals = vals * 4
    elif len(vals) == 2:  # noqa: PLR2004
        vals = vals * 2
    if len(vals) != _PADS or not all(isinstance(v, int) and v >= 0 for v in vals):
        raise op_error(op, "padding", padding, "non-negative int(s): 1, 2 or 4 of them")
    return vals[0], vals[1], vals[2], vals[3]


def conv_output_size(op: str, axis: str, size: int, pads: int, k: int, d: int, s: int) -> int:
    """Output extent of a window ``k`` dilated ``d`` stepping ``s`` over ``size + pads``."""
    out = (size + pads - ((k - 1) * d + 1)) // s + 1
    if out < 1:
        raise op_error(
            op, f"kernel {axis}", k, f"a dilated window that fits the padded input ({size + pads})"
        )
    return out


@dataclass(frozen=True, slots=True)
class ConvWindow:
    """The parsed window of convolution ``op``: its kernel taps ``ry``, ``rx`` and accumulator
    type ``dtype`` (``out_dtype``, else the input's).
    """

    op: str
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int, int, int]
    dtype: str
    ry: IterVar
    rx: IterVar

    def output_size(self, h: int, w: int) -> tuple[int, int]:
        """``(OH, OW)`` over an ``h x w`` input (raises when the dilated kernel does not fit)."""
        top, left, bottom, right = self.padding
        (kh, kw), (sh, sw), (dh, dw) = self.kernel, self.stride, self.dilation
        oh = conv_output_size(self.op, "height", h, top + bottom, kh, dh, sh)
        ow = conv_output_size(self.op, "width", w, left + right, kw, dw, sw)
        return oh, ow

    def padded(self, data: Tensor) -> Tensor:
        """``data [N, C, H, W]`` padded as a stage named ``pad_temp``; ``data`` when unpadded."""
        top, left, bottom, right = self.padding
        if not (top or left or bottom or right):
            return data
        return pad(data, (0, 0, top, left), (0, 0, bottom, right), name="pad_temp")

    def taps(self, y: PrimExpr, x: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        """The padded input's row and column that output ``(y, x)`` reads at tap ``(ry, rx)``."""
        (sh, sw), (dh, dw) = self.stride, self.dilation
        return y * sh + self.ry.var * dh, x * sw + self.rx.var * dw


def conv_window(
    op: str,
    data: Tensor,
    kernel: tuple[int, int],
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
    stride_attr: str = "stride",
) -> ConvWindow:
    """The window of ``op`` over ``data`` with a ``kernel = (KH, KW)`` kernel.

    Checks stride, dilation and padding in that order, naming ``op`` and the attribute
    (``stride_attr`` for the stride).

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.nn.conv_window import conv_window
    >>> x = te.placeholder((1, 3, 9, 9), name="x")
    >>> win = conv_window("conv", x, (3, 3), 2, (1, 1, 0, 0), 1)
    >>> win.padding, win.output_size(9, 9), win.dtype
    ((1, 1, 0, 0), (4, 4), 'float32')
    >>> [str(i) for i in win.taps(te.var("y"), te.var("x"))]
    ['((y * 2) + ry)', '((x * 2) + rx)']
    """
    stride_hw = pair(op, stride_attr, stride)
    dilation_hw = pair(op, "dilation", dilation)
    pads = padding4(op, padding)
    kh, kw = kernel
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    dtype = out_dtype or data.dtype
    return ConvWindow(op, kernel, stride_hw, dilation_hw, pads, dtype, ry, rx)
