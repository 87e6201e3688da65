"""``correlation_nchw``: FlowNet's correlation of two feature maps over a grid of
displacements.
"""

from __future__ import annotations

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import abs as _abs
from .. import tag
from .._shape import const_shape, op_error
from .padding import pad

__all__ = ["correlation_nchw"]


def correlation_nchw(
    data1: Tensor,
    data2: Tensor,
    kernel_size: int,
    max_displacement: int,
    stride1: int,
    stride2: int,
    padding: int,
    is_multiply: bool,
) -> Tensor:
    """Output channel ``q`` of ``[N, (2r + 1)^2, OH, OW]`` (``r = max_displacement // stride2``)
    compares the ``kernel_size`` patch of ``data1`` at ``(y * stride1 + max_displacement, ...)``
    with the patch of ``data2`` displaced by ``q``'s grid offset times ``stride2``: products
    (``is_multiply``) or absolute differences, averaged over the patch and the channels.
    ``OH = ceil((H + 2 * padding - 2 * border) / stride1)`` with
    ``border = max_displacement + (kernel_size - 1) // 2``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> a, b = te.placeholder((1, 3, 10, 10)), te.placeholder((1, 3, 10, 10))
    >>> [str(d) for d in topi.nn.correlation_nchw(a, b, 1, 2, 1, 1, 2, True).shape]
    ['1', '25', '10', '10']
    """
    op = "correlation_nchw"
    n, c, h, w = const_shape(op, "data1", data1, 4)
    if const_shape(op, "data2", data2, 4) != [n, c, h, w]:
        raise op_error(op, "data2 shape", [str(d) for d in data2.shape], f"{[n, c, h, w]}")
    if min(kernel_size, stride1, stride2) < 1 or kernel_size % 2 == 0 or padding < 0:
        raise op_error(
            op, "window", (kernel_size, stride1, stride2), "odd kernel, positive strides"
        )
    border = max_displacement + (kernel_size - 1) // 2
    radius = max_displacement // stride2
    grid = 2 * radius + 1
    oh = (h + 2 * padding - 2 * border + stride1 - 1) // stride1
    ow = (w + 2 * padding - 2 * border + stride1 - 1) // stride1
    if oh < 1 or ow < 1:
        raise op_error(op, "max_displacement", max_displacement, "a border within the input")
    lo, hi = [0, 0, padding, padding], [0, 0, padding, padding]
    p1 = pad(data1, lo, hi, name="pad_data1") if padding else data1
    p2 = pad(data2, lo, hi, name="pad_data2") if padding else data2
    rc = reduce_axis((0, c), name="rc")
    ry = reduce_axis((0, kernel_size), name="ry")
    rx = reduce_axis((0, kernel_size), name="rx")

    def body(b: Var, q: Var, i: Var, j: Var) -> PrimExpr:
        y1, x1 = i * stride1 + max_displacement, j * stride1 + max_displacement
        y2 = y1 + (q // grid - radius) * stride2
        x2 = x1 + (q % grid - radius) * stride2
        a = p1[b, rc.var, y1 + ry.var, x1 + rx.var]
        v = p2[b, rc.var, y2 + ry.var, x2 + rx.var]
        return _sum(a * v if is_multiply else _abs(a - v), axis=[rc, ry, rx])  # type: ignore[no-any-return]

    total = compute((n, grid * grid, oh, ow), body, name="correlation", tag=tag.COMM_REDUCE)
    scale = const(1.0 / float(kernel_size * kernel_size * c), data1.dtype)
    return compute(
        total.shape, lambda *i: total(*i) * scale, name="T_correlation", tag=tag.ELEMWISE
    )
