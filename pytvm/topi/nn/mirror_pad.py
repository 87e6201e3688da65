"""Padding by the tensor's own values (``topi.nn.mirror_pad``): reflected, repeated or wrapped."""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import max as emax
from ...tir.op import min as emin
from ...tir.op import truncmod
from .. import tag
from .._shape import const_int, op_error

__all__ = ["mirror_pad"]

MODES = ("REFLECT", "SYMMETRIC", "EDGE", "WRAP")


def _source(i: PrimExpr, before: int, n: int, mode: str) -> PrimExpr:
    """The input index that output index ``i`` (shifted by ``before``) reads."""
    j = i - before
    if mode == "EDGE":
        return emin(emax(j, const(0)), const(n - 1))
    if mode == "WRAP":
        return truncmod(truncmod(j, const(n)) + const(n), const(n))
    if n == 1:
        return const(0)
    # Reflection repeats with period 2(n-1) (REFLECT) or 2n (SYMMETRIC); fold into it.
    period = 2 * (n - 1) if mode == "REFLECT" else 2 * n
    k = truncmod(truncmod(j, const(period)) + const(period), const(period))
    if mode == "REFLECT":
        return emin(k, const(period) - k)
    return emin(k, const(period - 1) - k)


def mirror_pad(
    data: Tensor,
    pad_before: Sequence[int],
    pad_after: Sequence[int],
    mode: str = "SYMMETRIC",
) -> Tensor:
    """``data`` padded on each axis by its own values.

    ``mode`` is ``"REFLECT"`` (the edge element is not repeated: ``[3 2 | 1 2 3 | 2 1]``),
    ``"SYMMETRIC"`` (it is: ``[2 1 | 1 2 3 | 3 2]``), ``"EDGE"`` (the edge element repeated:
    ``[1 1 | 1 2 3 | 3 3]``) or ``"WRAP"`` (the other end: ``[2 3 | 1 2 3 | 1 2]``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((3, 4), name="A")
    >>> [str(d) for d in topi.nn.mirror_pad(A, (1, 2), (1, 0), "REFLECT").shape]
    ['5', '6']
    """
    if mode not in MODES:
        raise op_error("mirror_pad", "mode", mode, f"one of {MODES}")
    nd = data.ndim
    before, after = list(pad_before), list(pad_after)
    if len(before) != nd or len(after) != nd:
        raise op_error("mirror_pad", "pad_before/pad_after", (before, after), f"{nd} ints each")
    dims = [const_int(d) for d in data.shape]
    for k, (b, a, n) in enumerate(zip(before, after, dims, strict=True)):
        if n is None:
            raise op_error("mirror_pad", f"extent of axis {k}", str(data.shape[k]), "a constant")
        if b < 0 or a < 0:
            raise op_error("mirror_pad", "pads", (before, after), "non-negative ints")
        if mode == "REFLECT" and n == 1 and (b or a):
            raise op_error("mirror_pad", f"extent of axis {k}", n, "at least 2 to reflect")
    sizes = [n for n in dims if n is not None]
    shape = [n + b + a for n, b, a in zip(sizes, before, after, strict=True)]

    def body(*idx: Var) -> PrimExpr:
        src: list[PrimExpr] = []
        for k in range(nd):
            if before[k] == 0 and after[k] == 0:
                src.append(idx[k])
            else:
                src.append(_source(idx[k], before[k], sizes[k], mode))
        return data(*src)

    return compute(shape, body, name="T_mirror_pad", tag=tag.INJECTIVE + ",pad")
