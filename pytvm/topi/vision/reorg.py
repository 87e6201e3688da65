"""``reorg``: YOLO's reorganization of ``[N, C, H, W]`` into ``[N, C * s², H / s, W / s]``."""

from __future__ import annotations

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from .. import tag
from .._shape import const_int, op_error
from ..transform import reshape

__all__ = ["reorg"]


def reorg(data: Tensor, stride: int) -> Tensor:
    """TVM's (darknet's) ``reorg``: with ``oc = C / s²`` and the input read as
    ``[N, oc, H * s, W * s]``, element ``(n, k, j, i)`` of a ``[N, C, H, W]`` intermediate is
    the value at ``(n, k % oc, j * s + (k / oc) / s, i * s + (k / oc) % s)``; the result is that
    intermediate reshaped to ``[N, C * s², H / s, W / s]``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 4, 6, 6), name="x")
    >>> [str(d) for d in topi.vision.reorg(x, 2).shape]
    ['1', '16', '3', '3']
    """
    op = "reorg"
    if data.ndim != 4:  # noqa: PLR2004
        raise op_error(op, "input rank", data.ndim, "4 (NCHW)")
    dims = [const_int(d) for d in data.shape]
    if any(d is None for d in dims):
        raise op_error(op, "input shape", [str(d) for d in data.shape], "constant dimensions")
    n, c, h, w = (d or 0 for d in dims)
    s = stride
    if s < 1 or c % (s * s) or h % s or w % s:
        raise op_error(op, "stride", stride, f"s with s² dividing {c} and s dividing {h}, {w}")
    oc = c // (s * s)
    src = reshape(data, [n, oc, h * s, w * s])

    def body(b: Var, k: Var, j: Var, i: Var) -> PrimExpr:
        q = k // oc
        return src(b, k % oc, j * s + q // s, i * s + q % s)

    out = compute(data.shape, body, name="reorg", tag=tag.INJECTIVE)
    return reshape(out, [const(n), const(c * s * s), const(h // s), const(w // s)])
