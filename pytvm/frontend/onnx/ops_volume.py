"""Three-dimensional ``Conv``, ``MaxPool``, ``AveragePool`` and ``LpPool`` as two-dimensional
operators, so they run on the tuned 2-d convolution and pooling kernels.

A 3-d convolution over ``[N, C, D, H, W]`` gathers, for each output depth, the ``KD`` input
depths its kernel reads as extra channels (``C * KD`` of them, channel-major so groups stay
contiguous) and convolves height and width with the kernel reshaped to ``[O, C/g * KD, KH,
KW]``: the output depths run as a batch of 2-d convolutions. Pooling over a box is pooling
over height and width, then over depth (a ``KD x 1`` window over ``[N, C, D, H' * W']``):
max is separable, and so is the average, since a box's count of inputs (with or without the
padding) is the product of its axes' counts. A 3-d transposed convolution runs the input depths
as a batch of 2-d transposed convolutions whose output channels are (channel, kernel depth);
each kernel depth's planes are then spread to their output depths (``stride`` apart, shifted by
``k * dilation``) and summed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...graph import Expr, Tuple
from .node import NodeContext

__all__ = ["conv3d", "conv3d_transpose", "pool3d"]


def _dims(e: Expr) -> tuple[int, ...]:
    shape: tuple[int, ...] = e.checked_type.shape  # type: ignore[union-attr]
    return shape


def _depth_windows(
    ctx: NodeContext, x: Expr, kd: int, sd: int, dd: int, pads: tuple[int, int]
) -> tuple[Expr, int]:
    """``[N, C, KD, D', H, W]``: for each kernel depth the input depths it reads per output
    depth (after the depth padding), and ``D'``.
    """
    n, c, d, h, w = _dims(x)
    if any(pads):
        pad_width = ((0, 0), (0, 0), pads, (0, 0), (0, 0))
        x = ctx.call("nn.pad", x, pad_width=pad_width, pad_value=0.0)
        d += pads[0] + pads[1]
    out = (d - dd * (kd - 1) - 1) // sd + 1
    if out < 1:
        raise ctx.error(f"the kernel's depth {kd} (dilation {dd}) exceeds the padded depth {d}")
    taps = []
    for k in range(kd):
        first = k * dd
        part = ctx.call(
            "strided_slice",
            x,
            begin=(0, 0, first, 0, 0),
            end=(n, c, first + (out - 1) * sd + 1, h, w),
            strides=(1, 1, sd, 1, 1),
        )
        taps.append(ctx.call("expand_dims", part, axis=2, num_newaxis=1))
    stacked = taps[0] if kd == 1 else ctx.call("concatenate", Tuple(tuple(taps)), axis=2)
    return stacked, out


def conv3d(
    ctx: NodeContext,
    x: Expr,
    w: Expr,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> Expr:
    """``Conv`` of a ``[N, C, D, H, W]`` input (``pads``: ONNX's ``[d0, h0, w0, d1, h1, w1]``)."""
    n, c, _, h, w_in = _dims(x)
    o, cg, kd, kh, kw = _dims(w)
    windows, depth = _depth_windows(ctx, x, kd, strides[0], dilations[0], (pads[0], pads[3]))
    planes = ctx.call("reshape", windows, newshape=(n, c * kd, depth, h, w_in))
    planes = ctx.call("transpose", planes, axes=(0, 2, 1, 3, 4))
    planes = ctx.call("reshape", planes, newshape=(n * depth, c * kd, h, w_in))
    kernel = ctx.call("reshape", w, newshape=(o, cg * kd, kh, kw))
    out = ctx.call(
        "nn.conv2d",
        planes,
        kernel,
        strides=tuple(strides[1:]),
        padding=(pads[1], pads[2], pads[4], pads[5]),
        dilation=tuple(dilations[1:]),
        groups=groups,
    )
    _, _, oh, ow = _dims(out)
    out = ctx.call("reshape", out, newshape=(n, depth, o, oh, ow))
    return ctx.call("transpose", out, axes=(0, 2, 1, 3, 4))


def pool3d(
    ctx: NodeContext,
    kind: str,
    x: Expr,
    window: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]],
    attrs: dict[str, Any],
) -> Expr:
    """``kind`` (``"max"`` or ``"avg"``) pooling of a ``[N, C, D, H, W]`` input over ``window``
    (kernel, strides, dilations, ONNX pads); ``attrs``: ``ceil_mode`` and, for an average,
    ``count_include_pad``.
    """
    kernel, strides, dilations, pads = window
    n, c, d, h, w = _dims(x)
    planes = ctx.call("reshape", x, newshape=(n, c * d, h, w))
    planes = ctx.call(
        f"nn.{kind}_pool2d",
        planes,
        pool_size=tuple(kernel[1:]),
        strides=tuple(strides[1:]),
        dilation=tuple(dilations[1:]),
        padding=(pads[1], pads[2], pads[4], pads[5]),
        **attrs,
    )
    _, _, oh, ow = _dims(planes)
    rows = ctx.call("reshape", planes, newshape=(n, c, d, oh * ow))
    rows = ctx.call(
        f"nn.{kind}_pool2d",
        rows,
        pool_size=(kernel[0], 1),
        strides=(strides[0], 1),
        dilation=(dilations[0], 1),
        padding=(pads[0], 0, pads[3], 0),
        **attrs,
    )
    depth = _dims(rows)[2]
    return ctx.call("reshape", rows, newshape=(n, c, depth, oh, ow))


def conv3d_transpose(
    ctx: NodeContext,
    x: Expr,
    w: Expr,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
) -> Expr:
    """``ConvTranspose`` of a ``[N, C, D, H, W]`` input with a ``[C, O/g, KD, KH, KW]`` kernel
    (``pads``: ONNX's ``[d0, h0, w0, d1, h1, w1]``).
    """
    n, c, depth, h, w_in = _dims(x)
    _, per_group, kd, kh, kw = _dims(w)
    o = per_group * groups
    sd, dd = strides[0], dilations[0]
    planes = ctx.call("transpose", x, axes=(0, 2, 1, 3, 4))
    planes = ctx.call("reshape", planes, newshape=(n * depth, c, h, w_in))
    kernel = ctx.call("reshape", w, newshape=(c, per_group * kd, kh, kw))
    y = ctx.call(
        "nn.conv2d_transpose",
        planes,
        kernel,
        strides=tuple(strides[1:]),
        padding=(pads[1], pads[2], pads[4], pads[5]),
        dilation=tuple(dilations[1:]),
        output_padding=tuple(output_padding[1:]),
        groups=groups,
    )
    _, _, oh, ow = _dims(y)
    y = ctx.call("reshape", y, newshape=(n, depth, o, kd, oh * ow))
    spread = (depth - 1) * sd + 1  # the input depths, stride apart
    full = spread + (kd - 1) * dd + output_padding[0]
    total: Expr | None = None
    for k in range(kd):
        part = ctx.call(
            "strided_slice", y, begin=(0, 0, 0, k, 0), end=(n, depth, o, k + 1, oh * ow)
        )
        part = ctx.call("reshape", part, newshape=(n, depth, o, oh * ow))
        part = ctx.call("transpose", part, axes=(0, 2, 1, 3))  # [N, O, D, H'W']
        if sd > 1:  # stride - 1 zeros after each depth
            part = ctx.call("expand_dims", part, axis=3, num_newaxis=1)
            gap = ((0, 0), (0, 0), (0, 0), (0, sd - 1), (0, 0))
            part = ctx.call("nn.pad", part, pad_width=gap, pad_value=0.0)
            part = ctx.call("reshape", part, newshape=(n, o, depth * sd, oh * ow))
            part = ctx.call("strided_slice", part, begin=(0, 0, 0, 0), end=(n, o, spread, oh * ow))
        shift = ((0, 0), (0, 0), (k * dd, full - spread - k * dd), (0, 0))
        part = ctx.call("nn.pad", part, pad_width=shift, pad_value=0.0)
        total = part if total is None else ctx.call("add", total, part)
    assert total is not None
    out_depth = full - pads[0] - pads[3]
    if out_depth < 1:
        raise ctx.error(f"the padding {pads[0]} + {pads[3]} leaves no output depth")
    cropped = ctx.call(
        "strided_slice", total, begin=(0, 0, pads[0], 0), end=(n, o, pads[0] + out_depth, oh * ow)
    )
    return ctx.call("reshape", cropped, newshape=(n, o, out_depth, oh, ow))
