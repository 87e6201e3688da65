"""Transposed convolutions of 1-d and 3-d NC* data, grouped or not, and the grouped 2-d one:
``conv1d_transpose_ncw``, ``group_conv1d_transpose_ncw``, ``conv3d_transpose_ncdhw``,
``group_conv3d_transpose_ncdhw``, ``group_conv2d_transpose_nchw``.

As :mod:`.conv2d_transpose`: each output element gathers the input elements whose strided
window covers it (``i * s + k == y + pad_before`` per spatial axis), with no dilated copy.
``kernel`` is ``[C, O / groups, K...]``; the output extent is
``(in - 1) * s - pad_before - pad_after + K + output_padding``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_int, op_error
from .conv2d_transpose import conv2d_transpose_nchw
from .utils import get_pad_tuple_generic

__all__ = [
    "conv1d_transpose_ncw",
    "conv3d_transpose_ncdhw",
    "group_conv1d_transpose_ncw",
    "group_conv2d_transpose_nchw",
    "group_conv3d_transpose_ncdhw",
]


def _ints(op: str, attr: str, value: int | Sequence[int], n: int, least: int) -> list[int]:
    vals = [value] * n if isinstance(value, int) else list(value)
    out = [const_int(v) for v in vals]
    if len(out) != n or any(v is None or v < least for v in out):
        raise op_error(op, attr, value, f"{n} ints >= {least}")
    return [v for v in out if v is not None]


def _transpose_nd(
    op: str,
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: Any,
    out_dtype: str | None,
    output_padding: int | Sequence[int],
    groups: int,
    kind: str,
) -> Tensor:
    n_sp = data.ndim - 2
    dims = [const_int(d) for d in data.shape]
    kdims = [const_int(d) for d in kernel.shape]
    if n_sp < 1 or kernel.ndim != data.ndim or None in dims or None in kdims:
        raise op_error(op, "shapes", (str(data.shape), str(kernel.shape)), "constant N, C, K...")
    d = [v for v in dims if v is not None]
    k = [v for v in kdims if v is not None]
    channels, per_group_out = d[1], k[1]
    if groups < 1 or channels % groups or k[0] != channels:
        raise op_error(op, "groups", groups, f"a divisor of the {channels} input channels")
    st = _ints(op, "strides", strides, n_sp, 1)
    opad = _ints(op, "output_padding", output_padding, n_sp, 0)
    befores, afters = get_pad_tuple_generic(padding, k[2:])
    if any(p >= s for p, s in zip(opad, st, strict=True)):
        raise op_error(op, "output_padding", output_padding, "values below the strides")
    outs = [
        (d[2 + i] - 1) * st[i] - int(befores[i]) - int(afters[i]) + k[2 + i] + opad[i]
        for i in range(n_sp)
    ]
    if min(outs) < 1:
        raise op_error(op, "padding", padding, f"a positive output size (got {outs})")
    per_group_in = channels // groups
    rc = reduce_axis((0, per_group_in), name="rc")
    rk = [reduce_axis((0, k[2 + i]), name=f"rk{i}") for i in range(n_sp)]
    dtype = out_dtype or data.dtype

    def body(*idx: Var) -> PrimExpr:
        b, o, pos = idx[0], idx[1], idx[2:]
        chan = rc.var if groups == 1 else o // per_group_out * per_group_in + rc.var
        at: list[PrimExpr] = []
        conds = []
        for i, p in enumerate(pos):
            t = p + int(befores[i]) - rk[i].var
            at.append(t // st[i])
            conds += [t >= 0, t // st[i] < d[2 + i]]
            if st[i] > 1:
                conds.append(t % st[i] == 0)
        a = data(b, chan, *at).astype(dtype)
        w = kernel(chan, o % per_group_out if groups > 1 else o, *[r.var for r in rk])
        value = if_then_else(_all(*conds), a * w.astype(dtype), const(0, dtype))
        return _sum(value, axis=[rc, *rk])  # type: ignore[no-any-return]

    shape = [d[0], per_group_out * groups, *outs]
    return compute(shape, body, name=op, tag=kind)


def conv1d_transpose_ncw(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    out_dtype: str | None,
    output_padding: int | Sequence[int],
) -> Tensor:
    """Transposed convolution of ``data [N, C, W]`` with ``kernel [C, O, KW]``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 4, 5), name="x")
    >>> w = te.placeholder((4, 3, 3), name="w")
    >>> [str(d) for d in topi.nn.conv1d_transpose_ncw(x, w, 2, 1, "float32", 1).shape]
    ['1', '3', '10']
    """
    return group_conv1d_transpose_ncw(data, kernel, stride, padding, out_dtype, output_padding, 1)


def group_conv1d_transpose_ncw(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    out_dtype: str | None,
    output_padding: int | Sequence[int],
    groups: int,
) -> Tensor:
    """Grouped transposed convolution: ``kernel [C, O / groups, KW]``."""
    op = "conv1d_transpose_ncw" if groups == 1 else "group_conv1d_transpose_ncw"
    kind = tag.CONV1D_TRANSPOSE_NCW if groups == 1 else tag.GROUP_CONV1D_TRANSPOSE_NCW
    return _transpose_nd(op, data, kernel, stride, padding, out_dtype, output_padding, groups, kind)


def conv3d_transpose_ncdhw(
    Input: Tensor,
    Filter: Tensor,
    strides: int | Sequence[int],
    padding: Any,
    out_dtype: str | None,
    output_padding: int | Sequence[int],
) -> Tensor:
    """Transposed convolution of ``Input [N, C, D, H, W]`` with ``Filter [C, O, KD, KH, KW]``."""
    return group_conv3d_transpose_ncdhw(
        Input, Filter, strides, padding, out_dtype, output_padding, 1
    )


def group_conv3d_transpose_ncdhw(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: Any,
    out_dtype: str | None,
    output_padding: int | Sequence[int],
    groups: int,
) -> Tensor:
    """Grouped 3-d transposed convolution: ``kernel [C, O / groups, KD, KH, KW]``."""
    op = "conv3d_transpose_ncdhw" if groups == 1 else "group_conv3d_transpose_ncdhw"
    kind = tag.CONV3D_TRANSPOSE_NCDHW if groups == 1 else tag.GROUP_CONV3D_TRANSPOSE_NCDHW
    return _transpose_nd(
        op, data, kernel, strides, padding, out_dtype, output_padding, groups, kind
    )


def group_conv2d_transpose_nchw(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    out_dtype: str | None,
    output_padding: int | Sequence[int],
    groups: int,
) -> Tensor:
    """Grouped 2-d transposed convolution: ``kernel [C, O / groups, KH, KW]``."""
    if isinstance(padding, str):
        kh, kw = const_int(kernel.shape[2]), const_int(kernel.shape[3])
        (top, left), (bottom, right) = get_pad_tuple_generic(padding, [kh, kw])
        padding = (int(top), int(left), int(bottom), int(right))
    return conv2d_transpose_nchw(
        data, kernel, stride, padding, out_dtype, output_padding, groups=groups
    )
