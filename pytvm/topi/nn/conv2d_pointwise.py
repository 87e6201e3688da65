"""Pointwise (1x1, stride 1, unpadded) NCHW convolution as a matrix product over pixels:
``conv2d_nchw_pointwise``.

``out[n, f, p] = sum_c kernel[f, c] * data[n, c, p]`` over the flattened pixels ``p = y * W +
x``: a pixel run is contiguous in the input and in the output, so a schedule vectorizes along
pixels and broadcasts kernel values, with no layout change of either. The product stage is
``[N, F, H * W]`` (tag ``conv2d_nchw_pointwise``); an injective stage reads it as
``[N, F, H, W]``.
"""

from __future__ import annotations

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from ...tir.op import floordiv, floormod
from .. import tag
from .._shape import const_int, op_error

__all__ = ["conv2d_nchw_pointwise"]

_NCHW = 4


def conv2d_nchw_pointwise(data: Tensor, kernel: Tensor, out_dtype: str | None = None) -> Tensor:
    """``data [N, C, H, W]`` convolved with a 1x1 ``kernel [F, C, 1, 1]`` (stride 1, no padding).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 8, 5, 6), name="x")
    >>> w = te.placeholder((16, 8, 1, 1), name="w")
    >>> [str(d) for d in topi.nn.conv2d_nchw_pointwise(x, w).shape]
    ['1', '16', '5', '6']
    """
    op = "conv2d_nchw_pointwise"
    dims = [const_int(d) for d in (*data.shape, *kernel.shape)]
    if data.ndim != _NCHW or kernel.ndim != _NCHW or None in dims:
        raise op_error(
            op, "shapes", [[str(d) for d in t.shape] for t in (data, kernel)], "constant 4-d"
        )
    n, c, h, w, f, kc, kh, kw = (d for d in dims if d is not None)
    if (kc, kh, kw) != (c, 1, 1):
        raise op_error(op, "kernel shape", [f, kc, kh, kw], f"[F, {c}, 1, 1]")
    dtype = out_dtype or data.dtype
    rc = reduce_axis((0, c), name="rc")

    def body(b: Var, ff: Var, p: Var) -> PrimExpr:
        a = data(b, rc.var, floordiv(p, w), floormod(p, w))
        return _sum(a.astype(dtype) * kernel(ff, rc.var, 0, 0).astype(dtype), axis=rc)  # type: ignore[no-any-return]

    flat = compute((n, f, h * w), body, name="conv2d_nchw_pointwise", tag=tag.CONV2D_NCHW_POINTWISE)

    def pixels(b: Var, ff: Var, y: Var, x: Var) -> PrimExpr:
        return flat(b, ff, y * w + x)

    return compute((n, f, h, w), pixels, name="conv2d_nchw_pointwise_pixels", tag=tag.INJECTIVE)
