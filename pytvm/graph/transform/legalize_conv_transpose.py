"""LegalizeConvTranspose: a transposed convolution becomes one ordinary convolution and a pixel
shuffle (the sub-pixel decomposition), so it runs on the CPU's convolution kernels.

Along an axis with stride ``s``, kernel ``k`` and dilation ``d`` (a dilated kernel of
``K = (k - 1) * d + 1`` taps, the ``d - 1`` between each two zero), output position
``t = q * s + r`` of the uncropped transposed convolution (``r`` its phase, ``0 <= r < s``)
gathers ``x[q - m] * w[m * s + r]`` over ``m`` in ``[0, T)``, ``T = ceil(K / s)`` (taps past
``K`` are zero). That is a correlation of ``x`` padded by ``T - 1`` with the kernel
``v[r][j] = w[(T - 1 - j) * s + r]``: every phase is an output channel of one convolution. So

``nn.conv2d_transpose(x [N, C, H, W], w [C, F/g, KH, KW], groups=g)`` becomes

1. ``w2 [F * sh * sw, C/g, TH, TW]``: ``w`` dilated, zero-padded to ``T * s`` taps, its taps
   split into ``(T, s)``, the ``T`` reversed and the phases moved to the output channels
   (channel ``(o, rh, rw)``, ``o`` outermost); graph operators (``reshape``, ``nn.pad``,
   ``take``, ``transpose``) that :mod:`.fold_constant` computes at build time when ``w`` is
   constant, and that run per call otherwise;
2. ``z = nn.conv2d(x, w2, strides=1, padding=T-1 before and up to the needed rows after,
   groups=g)``, which the strategy table runs as a packed, pointwise, depthwise or grouped
   convolution like any other;
3. ``nn.subpixel_shuffle``: ``y[n, o, q * sh + rh, p * sw + rw] = z[n, (o, rh, rw), q, p]``,
   cropped to the rows and columns ``padding`` and ``output_padding`` keep: one injective
   kernel (with a following bias or activation fused), scheduled phase by phase
   (``topi.x86.subpixel_shuffle``).

Only the output rows the crop keeps are computed (up to ``T - 1`` rows of overlap and a
rounding to whole phases). A stride of 1 needs no shuffle: the convolution with the flipped
kernel is the whole answer. Calls with a symbolic shape or a ``data_layout`` other than NCHW
are left to ``topi.nn.conv2d_transpose_nchw``.
"""

from __future__ import annotations

import numpy as np

from ...ir.transform import Pass, PassContext, map_functions
from ...topi.nn.conv_window import padding4
from ..expr import Call, Expr, Function, call, const
from ..functor import rewrite_function
from ..module import IRModule
from ..ty import TensorType

__all__ = ["LegalizeConvTranspose", "legalize_conv_transpose", "subpixel_axis"]

_NCHW = 4


def _pair(value: object, default: int) -> tuple[int, int]:
    if value is None or value == "":
        return default, default
    vals = [value] if isinstance(value, int) else list(value)  # type: ignore[call-overload]
    return (int(vals[0]), int(vals[0])) if len(vals) == 1 else (int(vals[0]), int(vals[1]))


def subpixel_axis(
    size: int, stride: int, kernel: int, dilation: int, pads: tuple[int, int], out_pad: int
) -> tuple[int, int, int, int, int]:
    """The sub-pixel plan of one axis: ``(taps, pad_before, pad_after, crop, out)``.

    ``taps`` is ``T``, the convolution's kernel extent; ``pad_before``/``pad_after`` its
    padding of the input; ``crop`` the first kept position of the shuffled output; ``out`` the
    transposed convolution's output extent.

    Examples
    --------
    >>> subpixel_axis(160, 2, 4, 1, (1, 1), 0)  # kernel 4, stride 2, padding 1
    (2, 1, 1, 1, 320)
    """
    full = (size - 1) * stride + (kernel - 1) * dilation + 1 + out_pad
    out = full - pads[0] - pads[1]
    taps = -(-((kernel - 1) * dilation + 1) // stride)
    first = min(pads[0] // stride, taps - 1)  # the first phase block computed
    last = max(-(-(pads[0] + out) // stride), size)  # one past the last (pad_after >= 0)
    return taps, taps - 1 - first, last - size, pads[0] - first * stride, out


def _subpixel_kernel(
    w: Expr, groups: int, strides: tuple[int, int], dilation: tuple[int, int], taps: list[int]
) -> Expr:
    """``w [C, F/g, KH, KW]`` as the convolution kernel ``[F * sh * sw, C/g, TH, TW]``."""
    ty = w.checked_type
    assert isinstance(ty, TensorType)
    c, fg, kh, kw = (int(d) for d in ty.shape)
    (sh, sw), (dh, dw), (th, tw) = strides, dilation, taps
    if dh > 1 or dw > 1:  # dh - 1 zero taps after each tap, the last ones cut
        w = call("reshape", w, newshape=(c, fg, kh, 1, kw, 1))
        gaps = ((0, 0), (0, 0), (0, 0), (0, dh - 1), (0, 0), (0, dw - 1))
        w = call("nn.pad", w, pad_width=gaps, pad_value=0.0)
        w = call("reshape", w, newshape=(c, fg, kh * dh, kw * dw))
        kh, kw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        w = call("strided_slice", w, begin=(0, 0, 0, 0), end=(c, fg, kh, kw))
    if th * sh > kh or tw * sw > kw:
        tail = ((0, 0), (0, 0), (0, th * sh - kh), (0, tw * sw - kw))
        w = call("nn.pad", w, pad_width=tail, pad_value=0.0)
    cg = c // groups
    w = call("reshape", w, newshape=(groups, cg, fg, th, sh, tw, sw))
    if th > 1:
        w = call("take", w, const(np.arange(th - 1, -1, -1, dtype="int32")), axis=3)
    if tw > 1:
        w = call("take", w, const(np.arange(tw - 1, -1, -1, dtype="int32")), axis=5)
    w = call("transpose", w, axes=(0, 2, 4, 6, 1, 3, 5))  # [g, F/g, sh, sw, C/g, TH, TW]
    return call("reshape", w, newshape=(groups * fg * sh * sw, cg, th, tw))


def _static_shape(expr: Expr) -> tuple[int, ...] | None:
    ty = expr.checked_type
    if not isinstance(ty, TensorType) or len(ty.shape) != _NCHW:
        return None
    if not all(isinstance(d, (int, np.integer)) for d in ty.shape):
        return None
    return tuple(int(d) for d in ty.shape)


def _legalize(node: Expr) -> Expr | None:
    if not isinstance(node, Call) or node.op != "nn.conv2d_transpose":
        return None
    attrs = node.attrs
    if attrs.get("data_layout") not in (None, "", "NCHW"):
        return None
    x, w = node.args
    xs, ws = _static_shape(x), _static_shape(w)
    if xs is None or ws is None:
        return None
    _, _, h, wd = xs
    _, _, kh, kw = ws
    groups = int(attrs.get("groups") or 1)
    strides = _pair(attrs.get("strides"), 1)
    dilation = _pair(attrs.get("dilation"), 1)
    out_pad = _pair(attrs.get("output_padding"), 0)
    top, left, bottom, right = padding4("nn.conv2d_transpose", attrs.get("padding") or 0)
    plan_h = subpixel_axis(h, strides[0], kh, dilation[0], (top, bottom), out_pad[0])
    plan_w = subpixel_axis(wd, strides[1], kw, dilation[1], (left, right), out_pad[1])
    (th, pt, pb, crop_h, oh), (tw, pl, pr, crop_w, ow) = plan_h, plan_w
    kernel = _subpixel_kernel(w, groups, strides, dilation, [th, tw])
    conv_attrs = {"strides": (1, 1), "padding": (pt, pl, pb, pr), "dilation": (1, 1)}
    if attrs.get("out_dtype"):
        conv_attrs["out_dtype"] = attrs["out_dtype"]
    z = call("nn.conv2d", x, kernel, name=node.name, groups=groups, **conv_attrs)
    qh, qw = h + pt + pb - th + 1, wd + pl + pr - tw + 1
    if (strides, crop_h, crop_w, oh, ow) == ((1, 1), 0, 0, qh, qw):
        return z
    return call(
        "nn.subpixel_shuffle",
        z,
        name=node.name,
        factors=strides,
        begin=(crop_h, crop_w),
        out_size=(oh, ow),
    )


def _legalize_function(func: Function) -> Function:
    if func.attrs.get("Primitive") or func.attrs.get("Compiler"):
        return func
    return rewrite_function(func, _legalize)


def legalize_conv_transpose(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Rewrite every static NCHW ``nn.conv2d_transpose`` as a convolution and a pixel shuffle."""
    del ctx
    return map_functions(mod, _legalize_function)


LegalizeConvTranspose = Pass("LegalizeConvTranspose", 1, legalize_conv_transpose)
