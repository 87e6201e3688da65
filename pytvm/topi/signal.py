"""``dft``: the discrete Fourier transform along the last axis, from its definition.

``out[..., n] = sum_k x[..., k] * exp(-+2 pi i n k / N)`` (``+`` and a factor ``1 / N`` for the
inverse), with real and imaginary parts as separate tensors. The angle is taken from
``n * k mod N`` so it stays in ``[0, 2 pi)``; float16 data is transformed in float32.
"""

from __future__ import annotations

import math

from ..te.operation import compute, reduce_axis
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir import op as tirop
from ..tir.expr import PrimExpr, Var, const
from . import tag
from ._shape import const_int, op_error

__all__ = ["dft"]


def dft(re_data: Tensor, im_data: Tensor, inverse: bool | int) -> list[Tensor]:
    """``[real, imaginary]`` parts of the (inverse) discrete Fourier transform of
    ``re_data + i * im_data`` along the last axis.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> re = te.placeholder((3, 8), name="re")
    >>> im = te.placeholder((3, 8), name="im")
    >>> [[str(d) for d in t.shape] for t in topi.dft(re, im, False)]
    [['3', '8'], ['3', '8']]
    """
    op = "dft"
    if re_data.ndim < 1 or [str(d) for d in re_data.shape] != [str(d) for d in im_data.shape]:
        raise op_error(op, "im_data shape", [str(d) for d in im_data.shape], "re_data's shape")
    if re_data.dtype != im_data.dtype:
        raise op_error(op, "im_data dtype", im_data.dtype, f"re_data's {re_data.dtype}")
    inv = bool(const_int(inverse) if not isinstance(inverse, bool) else inverse)
    n_fft = re_data.shape[-1]
    dtype = re_data.dtype
    wide = "float32" if dtype in ("float16", "bfloat16") else dtype
    sign = 1.0 if inv else -1.0
    scale = 1.0 / float(const_int(n_fft) or 1) if inv and const_int(n_fft) else None

    def term(part: str) -> Tensor:
        k = reduce_axis((0, n_fft), name="k")

        def body(*i: Var) -> PrimExpr:
            n = i[-1]
            phase = (n * k.var) % n_fft
            angle = phase.astype(wide) * const(sign * 2.0 * math.pi, wide) / n_fft.astype(wide)
            c = tirop.call_intrin(wide, "tir.cos", angle)
            s = tirop.call_intrin(wide, "tir.sin", angle)
            re = re_data(*i[:-1], k.var).astype(wide)
            im = im_data(*i[:-1], k.var).astype(wide)
            value = re * c - im * s if part == "re" else re * s + im * c
            if inv:
                value = value * (const(scale, wide) if scale else 1.0 / n_fft.astype(wide))
            return _sum(value, axis=k)  # type: ignore[no-any-return]

        out = compute(re_data.shape, body, name=f"dft_{part}", tag=tag.COMM_REDUCE)
        if wide == dtype:
            return out
        return compute(
            out.shape, lambda *i: out(*i).astype(dtype), name=f"dft_{part}_cast", tag=tag.ELEMWISE
        )

    return [term("re"), term("im")]
