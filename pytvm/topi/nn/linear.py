"""Matrix products: ``dense`` (weight ``[N, K]``), ``matmul``, the packed-weight ``dense_pack``
and ``batch_matmul``.

``dense_pack`` reads the weight as panels ``[N // bn, K, bn]`` so the innermost loop of the
product walks ``bn`` contiguous output columns; :func:`dense_pack_weight` is the packing stage
(a compute a schedule can place, or a graph compiler can fold into a constant).
"""

from __future__ import annotations

from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_int, op_error
from .._target import vector_lanes
from ..broadcast import broadcast_shape

__all__ = ["batch_matmul", "dense", "dense_pack", "dense_pack_weight", "matmul"]

_PACKED_NDIM = 3


def _check_k(op: str, ka: PrimExpr, kb: PrimExpr) -> None:
    ca, cb = const_int(ka), const_int(kb)
    if ca is not None and cb is not None and ca != cb:
        raise op_error(op, "reduction extents", (ca, cb), "equal K of both operands")


def _cast(v: PrimExpr, dtype: str) -> PrimExpr:
    return v if v.dtype == dtype else v.astype(dtype)


def _add_bias(op: str, out: Tensor, bias: Tensor | None) -> Tensor:
    if bias is None:
        return out
    if bias.ndim != 1 or (
        const_int(bias.shape[0]) is not None
        and const_int(bias.shape[0]) != const_int(out.shape[-1])
    ):
        raise op_error(op, "bias shape", [str(d) for d in bias.shape], f"[{out.shape[-1]}]")
    return compute(
        out.shape,
        lambda i, j: out(i, j) + _cast(bias(j), out.dtype),
        name="T_add",
        tag=tag.BROADCAST,
    )


def matmul(
    tensor_a: Tensor,
    tensor_b: Tensor,
    bias: Tensor | None = None,
    out_dtype: str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
) -> Tensor:
    """``op(A) @ op(B) (+ bias)`` for 2-d ``A`` and ``B`` (``op`` transposes when asked).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((5, 7), name="A")
    >>> B = te.placeholder((7, 3), name="B")
    >>> [str(d) for d in topi.nn.matmul(A, B).shape]
    ['5', '3']
    """
    for name, t in (("tensor_a", tensor_a), ("tensor_b", tensor_b)):
        if t.ndim != 2:  # noqa: PLR2004
            raise op_error("matmul", f"{name} rank", t.ndim, "2")
    dtype = out_dtype or tensor_a.dtype
    m, ka = (tensor_a.shape[1], tensor_a.shape[0]) if transpose_a else tensor_a.shape
    kb, n = (tensor_b.shape[1], tensor_b.shape[0]) if transpose_b else tensor_b.shape
    _check_k("matmul", ka, kb)
    k = reduce_axis((0, ka), name="k")

    def body(i: Var, j: Var) -> PrimExpr:
        a = tensor_a(k, i) if transpose_a else tensor_a(i, k)
        b = tensor_b(j, k) if transpose_b else tensor_b(k, j)
        return _sum(_cast(a, dtype) * _cast(b, dtype), axis=k)  # type: ignore[no-any-return]

    suffix = ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    kind = tag.DENSE if transpose_b else tag.MATMUL  # matmul: columns contiguous in B
    out = compute((m, n), body, name=f"T_matmul_{suffix}", tag=kind)
    return _add_bias("matmul", out, bias)


def dense(
    data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """``data @ weight.T (+ bias)``: data ``[M, K]``, weight ``[N, K]``, bias ``[N]``."""
    return matmul(data, weight, bias, out_dtype, False, True)


def default_panel_width(dtype: str) -> int:
    """The panel width ``bn`` of packed weights: two vectors of ``dtype`` on the target."""
    return 2 * vector_lanes(dtype)


def dense_pack_weight(weight: Tensor, bn: int | None = None) -> Tensor:
    """``weight [N, K]`` packed into panels ``[ceil(N / bn), K, bn]`` (zero-filled past N)."""
    if weight.ndim != 2:  # noqa: PLR2004
        raise op_error("dense_pack_weight", "weight rank", weight.ndim, "2")
    width = default_panel_width(weight.dtype) if bn is None else bn
    if width < 1:
        raise op_error("dense_pack_weight", "bn", bn, "a positive int")
    n, kk = weight.shape
    cn = const_int(n)
    if cn is None:
        raise op_error("dense_pack_weight", "N", str(n), "a constant")
    panels = -(-cn // width)

    def body(p: Var, k: Var, b: Var) -> PrimExpr:
        row = p * width + b
        if cn % width == 0:
            return weight(row, k)
        return if_then_else(row < cn, weight(row, k), const(0, weight.dtype))

    return compute((panels, kk, width), body, name="T_dense_pack_weight", tag=tag.DENSE_PACK_WEIGHT)


def dense_pack(
    data: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    out_dtype: str | None = None,
    units: int | None = None,
) -> Tensor:
    """``data @ W.T (+ bias)`` with ``W`` given packed as ``[N // bn, K, bn]`` panels.

    A 2-d weight ``[N, K]`` is packed here by :func:`dense_pack_weight` (panel width from the
    target). ``units`` is the number of output columns when the packed panels were padded
    past ``N`` (default: all columns of the panels, or N of a 2-d weight).
    """
    if data.ndim != 2:  # noqa: PLR2004
        raise op_error("dense_pack", "data rank", data.ndim, "2")
    packed = weight
    if weight.ndim == 2:  # noqa: PLR2004
        units = const_int(weight.shape[0]) if units is None else units
        packed = dense_pack_weight(weight)
    elif weight.ndim != _PACKED_NDIM:
        raise op_error("dense_pack", "weight rank", weight.ndim, "2 ([N, K]) or 3 (packed)")
    panels, kw, bn = (const_int(d) for d in packed.shape)
    if panels is None or bn is None:
        raise op_error("dense_pack", "packed weight shape", str(packed.shape), "constants")
    n = panels * bn if units is None else units
    if not 0 < n <= panels * bn:
        raise op_error("dense_pack", "units", units, f"an int in [1, {panels * bn}]")
    _check_k("dense_pack", data.shape[1], packed.shape[1])
    dtype = out_dtype or data.dtype
    k = reduce_axis((0, data.shape[1]), name="k")

    def body(i: Var, j: Var) -> PrimExpr:
        w = packed(j // bn, k, j % bn)
        return _sum(_cast(data(i, k), dtype) * _cast(w, dtype), axis=k)  # type: ignore[no-any-return]

    out = compute((data.shape[0], n), body, name="T_dense_pack", tag=tag.DENSE_PACK)
    _ = kw
    return _add_bias("dense_pack", out, bias)


def batch_matmul(
    tensor_a: Tensor,
    tensor_b: Tensor,
    oshape: Any = None,
    out_dtype: str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = True,
) -> Tensor:
    """Batched ``op(A[b]) @ op(B[b])`` of 3-d tensors; a batch of 1 broadcasts.

    By TVM's convention ``B`` is transposed by default (``[batch, N, K]``).
    """
    for name, t in (("tensor_a", tensor_a), ("tensor_b", tensor_b)):
        if t.ndim != _PACKED_NDIM:
            raise op_error("batch_matmul", f"{name} rank", t.ndim, "3")
    dtype = out_dtype or tensor_a.dtype
    ba, bb = tensor_a.shape[0], tensor_b.shape[0]
    batch = broadcast_shape("batch_matmul", [ba], [bb])[0]
    m, ka = (tensor_a.shape[2], tensor_a.shape[1]) if transpose_a else tensor_a.shape[1:]
    kb, n = (tensor_b.shape[2], tensor_b.shape[1]) if transpose_b else tensor_b.shape[1:]
    _check_k("batch_matmul", ka, kb)
    k = reduce_axis((0, ka), name="k")
    one_a, one_b = const_int(ba) == 1, const_int(bb) == 1

    def body(b: Var, i: Var, j: Var) -> PrimExpr:
        xa = const(0) if one_a else b
        xb = const(0) if one_b else b
        a = tensor_a(xa, k, i) if transpose_a else tensor_a(xa, i, k)
        w = tensor_b(xb, j, k) if transpose_b else tensor_b(xb, k, j)
        return _sum(_cast(a, dtype) * _cast(w, dtype), axis=k)  # type: ignore[no-any-return]

    shape = (batch, m, n) if oshape is None else tuple(oshape)
    kind = tag.BATCH_MATMUL if transpose_b else tag.BATCH_MATMUL_NN  # nn: columns of B
    return compute(shape, body, name="T_batch_matmul", tag=kind)
