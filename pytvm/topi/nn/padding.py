"""Constant padding of a tensor (``topi.nn.pad``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import ExprLike, PrimExpr, Var, const, convert
from ...tir.op import all as _all
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_int, op_error

__all__ = ["pad"]


def pad(
    data: Tensor,
    pad_before: Sequence[ExprLike],
    pad_after: Sequence[ExprLike] | None = None,
    pad_value: float = 0.0,
    name: str = "PadInput",
    attrs: Mapping[str, Any] | None = None,
) -> Tensor:
    """``data`` with ``pad_before[k]`` / ``pad_after[k]`` elements of ``pad_value`` around axis k.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((2, 3), name="A")
    >>> [str(d) for d in topi.nn.pad(A, (0, 1), (0, 2)).shape]
    ['2', '6']
    """
    nd = data.ndim
    after = list(pad_before) if pad_after is None else list(pad_after)
    before = list(pad_before)
    if len(before) != nd or len(after) != nd:
        raise op_error("pad", "pad_before/pad_after", (before, after), f"{nd} values each")
    for v in (*before, *after):
        c = const_int(v)
        if c is not None and c < 0:
            raise op_error("pad", "pad_before/pad_after", (before, after), "non-negative values")
    pb = [convert(v) for v in before]
    pa = [convert(v) for v in after]
    shape = [d + b + a for d, b, a in zip(data.shape, pb, pa, strict=True)]

    def body(*idx: Var) -> PrimExpr:
        conds: list[PrimExpr] = []
        src: list[PrimExpr] = []
        for k in range(nd):
            no_before, no_after = const_int(pb[k]) == 0, const_int(pa[k]) == 0
            src.append(idx[k] if no_before else idx[k] - pb[k])
            if not no_before:
                conds.append(idx[k] >= pb[k])
            if not no_after:
                conds.append(idx[k] < data.shape[k] + pb[k])
        value = data(*src)
        if not conds:
            return value
        return if_then_else(_all(*conds), value, const(pad_value, data.dtype))

    return compute(shape, body, name=name, tag=tag.INJECTIVE + ",pad", attrs=attrs)
