"""Converters of ONNX's integer matrix products: ``MatMulInteger`` (int32 products of
zero-point-shifted 8-bit operands), ``QLinearMatMul`` (the product requantized:
``saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point)``) and com.microsoft's
``MatMulInteger16`` and ``QGemm`` (``alpha · op(A) @ op(B)`` of 8-bit operands plus an int32
bias, requantized or scaled to float32). Products accumulate in int32 through
``nn.dense``/``nn.batch_matmul``; a constant 2-d int8 B with zero points of 0 (per tensor or
per column) times 8-bit A of one zero point is the 8-bit integer product
(:func:`~pytvm.graph.int8_conv.int8_dense`: ``qnn.conv2d``, 8-bit dot products where the
target has them).
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from ...graph.int8_conv import int8_dense
from .node import ConverterTable, NodeContext

__all__ = ["MATMUL_INTEGER_CONVERTERS", "MATMUL_INTEGER_MICROSOFT_CONVERTERS"]


def _int_matmul(ctx: NodeContext, a: Expr, b: Expr, sa: list[int], sb: list[int]) -> Expr:
    """``a @ b`` with numpy's matmul rules, accumulated as int32 (inputs already int32)."""
    if not sa or not sb:
        raise ctx.error("a matrix product of a 0-d input")
    squeeze = []
    if len(sa) == 1:
        a, sa = ctx.call("expand_dims", a, axis=0), [1, *sa]
        squeeze.append(-2)
    if len(sb) == 1:
        b, sb = ctx.call("expand_dims", b, axis=1), [*sb, 1]
        squeeze.append(-1)
    m, k, n = sa[-2], sa[-1], sb[-1]
    if sb[-2] != k:
        raise ctx.error(f"cannot multiply shapes {sa} and {sb}")
    try:
        batch = [int(d) for d in np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]))]
    except ValueError:
        raise ctx.error(f"batch shapes of {sa} and {sb} do not broadcast") from None
    if len(sb) == 2:  # noqa: PLR2004 - one dense over every row
        rows = math.prod(sa[:-1])
        flat = ctx.call("reshape", a, newshape=(rows, k)) if len(sa) != 2 else a  # noqa: PLR2004
        out = ctx.call("nn.dense", flat, ctx.call("transpose", b, axes=(1, 0)), out_dtype="int32")
        out = ctx.call("reshape", out, newshape=(*sa[:-1], n)) if len(sa) != 2 else out  # noqa: PLR2004
    else:
        nb = math.prod(batch)

        def batched(x: Expr, shape: list[int]) -> Expr:
            if shape[:-2] != batch:
                x = ctx.call("broadcast_to", x, shape=(*batch, *shape[-2:]))
            return ctx.call("reshape", x, newshape=(nb, *shape[-2:]))

        rhs = ctx.call("transpose", batched(b, sb), axes=(0, 2, 1))
        out = ctx.call("nn.batch_matmul", batched(a, sa), rhs, transpose_b=True, out_dtype="int32")
        out = ctx.call("reshape", out, newshape=(*batch, m, n))
    if squeeze:
        rank = len(batch) + 2
        out = ctx.call("squeeze", out, axis=tuple(sorted(s % rank for s in squeeze)))
    return out


def _shifted(
    ctx: NodeContext, i: int, zp: int | None, row_axis: bool, x: Expr | None = None
) -> Expr:
    """Input ``i`` (or ``x``, an expression of its dtype) as int32 less its zero point (input
    ``zp``: a scalar, or one per row of A (``row_axis``) or per column of B).
    """
    x = ctx.call("cast", ctx.expr(i) if x is None else x, dtype="int32")
    if zp is None or not ctx.has(zp):
        return x
    if ctx.dtype(zp) != ctx.dtype(i):
        raise ctx.error(f"input {zp} (a zero point) is {ctx.dtype(zp)}, not {ctx.dtype(i)}")
    z = ctx.call("cast", ctx.expr(zp), dtype="int32")
    zshape = ctx.shape(zp)
    if math.prod(zshape) > 1:
        if len(zshape) != 1:
            raise ctx.error(f"zero point {zp} has shape {list(zshape)}; expected a scalar or 1-d")
        if row_axis:
            z = ctx.call("reshape", z, newshape=(zshape[0], 1))
    elif zshape:
        z = ctx.call("reshape", z, newshape=())
    return ctx.call("subtract", x, z)


def _check_8bit(ctx: NodeContext, *inputs: int) -> None:
    for i in inputs:
        if ctx.dtype(i) not in ("int8", "uint8"):
            raise ctx.error(f"input {i} is {ctx.dtype(i)}; expected int8 or uint8")


def _int8_matmul(
    ctx: NodeContext,
    a: int,
    a_zp: int,
    b: int,
    b_zp: int,
    x: Expr | None = None,
    weight: np.ndarray | None = None,
) -> Expr | None:
    """``(A - a_zp) @ B`` through :func:`int8_dense` when it applies (else None); ``x`` and
    ``weight`` stand for inputs ``a`` and ``b`` where given (a transposed operand).
    """
    if weight is None:
        weight = ctx.known_value(b)
    sa = list(ctx.shape(a)) if x is None else [int(d) for d in x.checked_type.shape]  # type: ignore[union-attr]
    b_zero = ctx.known_value(b_zp) if ctx.has(b_zp) else np.zeros(1, "int8")
    a_zero = ctx.known_value(a_zp) if ctx.has(a_zp) else np.zeros(1, "int8")
    if (
        weight is None
        or weight.dtype != np.int8
        or weight.ndim != 2  # noqa: PLR2004
        or len(sa) < 2  # noqa: PLR2004
        or sa[-1] != weight.shape[0]
        or b_zero is None
        or np.any(b_zero)
        or a_zero is None
        or a_zero.size != 1
        or ctx.dtype(a) not in ("uint8", "int8")
        or (ctx.has(a_zp) and ctx.dtype(a_zp) != ctx.dtype(a))
    ):
        return None
    rows = math.prod(sa[:-1])
    if x is None:
        x = ctx.expr(a)
    if len(sa) != 2:  # noqa: PLR2004
        x = ctx.call("reshape", x, newshape=(rows, sa[-1]))
    out = int8_dense(x, int(a_zero.reshape(-1)[0]), weight, ctx.name)
    if len(sa) != 2:  # noqa: PLR2004
        out = ctx.call("reshape", out, newshape=(*sa[:-1], weight.shape[1]))
    return out


def _matmul_integer(ctx: NodeContext) -> Expr:
    _check_8bit(ctx, 0, 1)
    fast = _int8_matmul(ctx, 0, 2, 1, 3)
    if fast is not None:
        return fast
    a = _shifted(ctx, 0, 2, row_axis=True)
    b = _shifted(ctx, 1, 3, row_axis=False)
    return _int_matmul(ctx, a, b, list(ctx.shape(0)), list(ctx.shape(1)))


def _scale(ctx: NodeContext, i: int, row_axis: bool) -> Expr:
    s = ctx.expr(i)
    if ctx.dtype(i) != "float32":
        s = ctx.call("cast", s, dtype="float32")
    shape = ctx.shape(i)
    if math.prod(shape) > 1 and row_axis:
        return ctx.call("reshape", s, newshape=(shape[0], 1))
    return ctx.call("reshape", s, newshape=()) if math.prod(shape) == 1 and shape else s


def _qlinear_matmul(ctx: NodeContext) -> Expr:
    """Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point."""
    _check_8bit(ctx, 0, 3)
    acc = _int8_matmul(ctx, 0, 2, 3, 5)
    if acc is None:
        a = _shifted(ctx, 0, 2, row_axis=True)
        b = _shifted(ctx, 3, 5, row_axis=False)
        acc = _int_matmul(ctx, a, b, list(ctx.shape(0)), list(ctx.shape(3)))
    scale = ctx.call("multiply", _scale(ctx, 1, True), _scale(ctx, 4, False))
    scale = ctx.call("divide", scale, _scale(ctx, 6, False))
    y = ctx.call("round", ctx.call("multiply", ctx.call("cast", acc, dtype="float32"), scale))
    out_dtype = ctx.dtype(7) if ctx.has(7) else ctx.dtype(0)
    if ctx.has(7):
        y = ctx.call("add", y, ctx.call("cast", _flat(ctx, 7), dtype="float32"))
    info = np.iinfo(np.dtype(out_dtype))
    y = ctx.call("clip", y, a_min=float(info.min), a_max=float(info.max))
    return ctx.call("cast", y, dtype=out_dtype)


def _flat(ctx: NodeContext, i: int) -> Expr:
    shape = ctx.shape(i)
    if math.prod(shape) != 1:
        raise ctx.error(f"input {i} has shape {list(shape)}; expected one value")
    return ctx.call("reshape", ctx.expr(i), newshape=()) if shape else ctx.expr(i)


def _check_qgemm_params(ctx: NodeContext, n: int) -> None:
    """Scales and zero points of QGemm: one value each, B's one or ``n`` (per column)."""
    for i, what in ((1, "a_scale"), (2, "a_zero_point"), (7, "y_scale"), (8, "y_zero_point")):
        if ctx.has(i) and math.prod(ctx.shape(i)) != 1:
            raise ctx.error(f"{what} has shape {list(ctx.shape(i))}; expected one value")
    for i, what in ((4, "b_scale"), (5, "b_zero_point")):
        if ctx.has(i) and math.prod(ctx.shape(i)) not in (1, n):
            raise ctx.error(f"{what} has shape {list(ctx.shape(i))}; expected one value or [{n}]")


def _qgemm_bias(ctx: NodeContext, m: int, n: int) -> Expr:
    """QGemm's input C: int32, broadcasting to the ``[m, n]`` product."""
    if ctx.dtype(6) != "int32":
        raise ctx.error(f"C is {ctx.dtype(6)}; expected int32 (the bias at a_scale · b_scale)")
    try:
        shape = np.broadcast_shapes(tuple(ctx.shape(6)), (m, n))
    except ValueError:
        shape = None
    if shape != (m, n):
        raise ctx.error(f"C of shape {list(ctx.shape(6))} does not broadcast to [{m}, {n}]")
    return ctx.expr(6)


def _qgemm(ctx: NodeContext) -> Expr:
    """com.microsoft ``QGemm``: inputs A, a_scale, a_zero_point, B, b_scale, b_zero_point,
    C? (int32 bias), y_scale?, y_zero_point?; attributes alpha, transA, transB. ONNX Runtime's
    order: ``acc = (op(A) - a_zp) @ (op(B) - b_zp) + C`` in int32, ``scale = alpha · a_scale ·
    b_scale / y_scale`` in float32 (``b_scale`` per tensor or per column), the output
    ``saturate(round(acc · scale) + y_zp)`` with y_scale and y_zero_point, else ``acc · scale``
    in float32.
    """
    _check_8bit(ctx, 0, 3)
    sa, sb = list(ctx.shape(0)), list(ctx.shape(3))
    if len(sa) != 2 or len(sb) != 2:  # noqa: PLR2004
        raise ctx.error(f"A {sa} and B {sb}: QGemm multiplies 2-d matrices")
    if ctx.has(7) != ctx.has(8):
        raise ctx.error("y_scale and y_zero_point come together (a quantized output) or not at all")
    a = ctx.expr(0)
    if int(ctx.attr("transA", 0)):
        a, sa = ctx.call("transpose", a, axes=(1, 0)), sa[::-1]
    trans_b = bool(int(ctx.attr("transB", 0)))
    k, n = (sb[1], sb[0]) if trans_b else (sb[0], sb[1])
    if sa[1] != k:
        raise ctx.error(f"cannot multiply op(A) {sa} and op(B) [{k}, {n}]")
    _check_qgemm_params(ctx, n)
    weight = ctx.known_value(3)
    if weight is not None and trans_b:
        weight = np.ascontiguousarray(weight.T)
    acc = _int8_matmul(ctx, 0, 2, 3, 5, x=a, weight=weight)
    if acc is None:
        b = ctx.expr(3)
        if trans_b:
            b = ctx.call("transpose", b, axes=(1, 0))
        acc = _int_matmul(
            ctx, _shifted(ctx, 0, 2, True, a), _shifted(ctx, 3, 5, False, b), sa, [k, n]
        )
    if ctx.has(6):
        acc = ctx.call("add", acc, _qgemm_bias(ctx, sa[0], n))
    scale = _scale(ctx, 1, False)
    alpha = float(ctx.attr("alpha", 1.0))
    if alpha != 1.0:
        scale = ctx.call("multiply", ctx.const(np.float32(alpha)), scale)
    scale = ctx.call("multiply", scale, _scale(ctx, 4, False))
    y = ctx.call("cast", acc, dtype="float32")
    if not ctx.has(7):
        return ctx.call("multiply", y, scale)
    if ctx.dtype(8) != ctx.dtype(0):
        raise ctx.error(f"y_zero_point is {ctx.dtype(8)}; expected {ctx.dtype(0)} (A's type)")
    scale = ctx.call("divide", scale, _scale(ctx, 7, False))
    y = ctx.call("round", ctx.call("multiply", y, scale))
    y = ctx.call("add", y, ctx.call("cast", _flat(ctx, 8), dtype="float32"))
    info = np.iinfo(np.dtype(ctx.dtype(8)))
    y = ctx.call("clip", y, a_min=float(info.min), a_max=float(info.max))
    return ctx.call("cast", y, dtype=ctx.dtype(8))


def _matmul_integer16(ctx: NodeContext) -> Expr:
    for i in (0, 1):
        if ctx.dtype(i) not in ("int16", "uint16"):
            raise ctx.error(f"input {i} is {ctx.dtype(i)}; expected int16 or uint16")
    a = ctx.call("cast", ctx.expr(0), dtype="int32")
    b = ctx.call("cast", ctx.expr(1), dtype="int32")
    out = _int_matmul(ctx, a, b, list(ctx.shape(0)), list(ctx.shape(1)))
    if ctx.dtype(0) == ctx.dtype(1) == "uint16":
        return ctx.call("cast", out, dtype="uint32")
    return out


MATMUL_INTEGER_CONVERTERS: ConverterTable = {
    "MatMulInteger": (10, _matmul_integer),
    "QLinearMatMul": (10, _qlinear_matmul),
}

#: com.microsoft's operators of this module.
MATMUL_INTEGER_MICROSOFT_CONVERTERS: ConverterTable = {
    "MatMulInteger16": (1, _matmul_integer16),
    "QGemm": (1, _qgemm),
}
