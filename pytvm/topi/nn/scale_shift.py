"""Per-channel ``x * scale + shift`` in NCHW, NHWC and NCHWc (TVM's ``topi.nn.mapping``)."""

from __future__ import annotations

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import op_error

__all__ = ["scale_shift_nchw", "scale_shift_nchwc", "scale_shift_nhwc"]


def _check(op: str, data: Tensor, ndim: int, scale: Tensor, shift: Tensor, rank: int) -> None:
    if data.ndim != ndim:
        raise op_error(op, "input rank", data.ndim, str(ndim))
    if scale.ndim != rank or shift.ndim != rank:
        raise op_error(op, "scale/shift rank", (scale.ndim, shift.ndim), str(rank))


def scale_shift_nchw(Input: Tensor, Scale: Tensor, Shift: Tensor) -> Tensor:
    """``Input [N, C, H, W] * Scale[c] + Shift[c]``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x, s = te.placeholder((1, 3, 2, 2)), te.placeholder((3,))
    >>> topi.nn.scale_shift_nchw(x, s, s).op.tag
    'broadcast'
    """
    _check("scale_shift_nchw", Input, 4, Scale, Shift, 1)

    def body(b: Var, c: Var, i: Var, j: Var) -> PrimExpr:
        value: PrimExpr = Input[b, c, i, j] * Scale[c] + Shift[c]
        return value

    return compute(Input.shape, body, name="ScaleShift", tag=tag.BROADCAST)


def scale_shift_nhwc(Input: Tensor, Scale: Tensor, Shift: Tensor) -> Tensor:
    """``Input [N, H, W, C] * Scale[c] + Shift[c]``."""
    _check("scale_shift_nhwc", Input, 4, Scale, Shift, 1)

    def body(b: Var, i: Var, j: Var, c: Var) -> PrimExpr:
        value: PrimExpr = Input[b, i, j, c] * Scale[c] + Shift[c]
        return value

    return compute(Input.shape, body, name="ScaleShift", tag=tag.BROADCAST)


def scale_shift_nchwc(Input: Tensor, Scale: Tensor, Shift: Tensor) -> Tensor:
    """``Input [N, C/c, H, W, c] * Scale[cc, cb] + Shift[cc, cb]``."""
    _check("scale_shift_nchwc", Input, 5, Scale, Shift, 2)

    def body(b: Var, cc: Var, i: Var, j: Var, cb: Var) -> PrimExpr:
        value: PrimExpr = Input[b, cc, i, j, cb] * Scale[cc, cb] + Shift[cc, cb]
        return value

    return compute(Input.shape, body, name="ScaleShift", tag=tag.BROADCAST)
