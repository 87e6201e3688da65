"""NCHW convolution strided along the width over the input split into column phases:
``conv2d_nchw_phases``.

With a column stride ``s`` an output row reads every ``s``-th input column, so the direct
convolution's vectors along the output row would gather their inputs. Here the padded input is
first rearranged into phases of its columns, ``[N, C, Hp, P, Wq]`` with phase ``p`` holding
columns ``p, p + s, p + 2s, ...`` (``P``: the ``s`` phases, or fewer when the dilated kernel
is narrower than the stride; a stage named ``pad_phases``, tagged as a padding stage), so tap
``rx`` of output column ``x`` reads phase ``rx * dw % s`` at column ``x + rx * dw // s``:
consecutive output columns read consecutive values. The convolution stage has
``conv2d_nchw``'s axes, reduction and tag, so the direct schedule runs it unchanged. Rows keep
their stride (a row is read whole or not at all).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import const_shape, op_error
from .conv_window import conv_window
from .padding import pad

__all__ = ["conv2d_nchw_phases"]

_NCHW = 4


def conv2d_nchw_phases(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of ``data [N, C, H, W]`` with ``kernel [F, C, KH, KW]`` (one group), the
    padded input read through its column phases; the same values as ``conv2d_nchw``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 9, 9), name="x")
    >>> w = te.placeholder((8, 3, 3, 3), name="w")
    >>> y = topi.nn.conv2d_nchw_phases(x, w, 2, 1, 1)
    >>> [str(d) for d in y.shape], [str(d) for d in y.op.input_tensors[0].shape]
    (['1', '8', '5', '5'], ['1', '3', '11', '2', '6'])
    """
    op = "conv2d_nchw_phases"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    f, kc, kh, kw = const_shape(op, "kernel", kernel, _NCHW)
    if kc != c:
        raise op_error(op, "kernel input channels", kc, f"the input's channels {c}")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    oh, ow = win.output_size(h, w)
    top, left, bottom, right = win.padding
    (sh, sw), (dh, dw) = win.stride, win.dilation
    # Phase columns the taps reach: output columns plus the kernel's reach in phase columns;
    # phases past the kernel's dilated width are never read (a 1x1 kernel reads one).
    wq = ow + (kw - 1) * dw // sw
    phases_read = min(sw, (kw - 1) * dw + 1)
    # Padded to whole phase rows (the columns past the padded input are zeros no tap reads).
    extra = max(0, (wq - 1) * sw + phases_read - (w + left + right))
    src = pad(data, (0, 0, top, left), (0, 0, bottom, right + extra), name="pad_temp")

    def phase(b: Var, ch: Var, y: Var, p: Var, j: Var) -> PrimExpr:
        return src(b, ch, y, j * sw + p)

    hp = h + top + bottom
    phases = compute(
        (n, c, hp, phases_read, wq), phase, name="pad_phases", tag=tag.INJECTIVE + ",pad"
    )
    dtype, ry, rx = win.dtype, win.ry, win.rx
    rc = reduce_axis((0, c), name="rc")

    def body(b: Var, ff: Var, y: Var, x: Var) -> PrimExpr:
        tap = rx.var * dw
        a = phases(b, rc.var, y * sh + ry.var * dh, tap % sw, x + tap // sw)
        k = kernel(ff, rc.var, ry.var, rx.var)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[rc, ry, rx])  # type: ignore[no-any-return]

    return compute((n, f, oh, ow), body, name="conv2d_nchw", tag=tag.CONV2D_NCHW)
