"""Converters of ONNX's elementwise operators: arithmetic, comparisons, logic, math functions,
activations, ``Clip``, ``Cast``, ``Where`` and the variadic ``Sum``/``Max``/``Min``/``Mean``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph import Expr
from .element_types import element_dtype, element_type_name
from .errors import DynamicValueError
from .node import Converter, ConverterTable, NodeContext

__all__ = ["MATH_CONVERTERS", "onnx_dtype"]


def onnx_dtype(ctx: NodeContext, code: int) -> str:
    """The numpy dtype name of ONNX element type ``code``."""
    dtype = element_dtype(code)
    if dtype is None:
        raise ctx.error(f"element type {element_type_name(code)} is not supported")
    return dtype


def _scalar(ctx: NodeContext, value: Any, dtype: str) -> Expr:
    return ctx.const(np.asarray(value).astype(dtype))


def _unary(op: str) -> Converter:
    return lambda ctx: ctx.call(op, ctx.expr(0))


def _binary(op: str) -> Converter:
    return lambda ctx: ctx.call(op, ctx.expr(0), ctx.expr(1))


def _variadic(op: str) -> Converter:
    def convert(ctx: NodeContext) -> Expr:
        args = ctx.exprs()
        out = args[0]
        for a in args[1:]:
            out = ctx.call(op, out, a)
        return out

    return convert


def _mean(ctx: NodeContext) -> Expr:
    total = ctx.exprs()[0]
    for a in ctx.exprs()[1:]:
        total = ctx.call("add", total, a)
    return ctx.call("divide", total, _scalar(ctx, ctx.num_inputs, ctx.dtype(0)))


def _identity(ctx: NodeContext) -> Expr:
    return ctx.expr(0)


def _reciprocal(ctx: NodeContext) -> Expr:
    return ctx.call("divide", _scalar(ctx, 1, ctx.dtype(0)), ctx.expr(0))


def _pow(ctx: NodeContext) -> Expr:
    base, exponent = ctx.expr(0), ctx.expr(1)
    dtype = ctx.dtype(0)
    if ctx.dtype(1) != dtype:
        exponent = ctx.call("cast", exponent, dtype=dtype)
    value = ctx.known_value(1)  # x ** 2 as x * x, x ** 3 as x * x * x (a constant exponent)
    if (
        value is not None
        and value.size == 1
        and float(value.reshape(-1)[0]) in (2.0, 3.0)
        and value.ndim <= ctx.ndim(0)
    ):
        square = ctx.call("multiply", base, base)
        cube = float(value.reshape(-1)[0]) == 3.0  # noqa: PLR2004
        return ctx.call("multiply", square, base) if cube else square
    return ctx.call("power", base, exponent)


def _bit_shift(ctx: NodeContext) -> Expr:
    """``x << s`` as ``x * 2**s`` and ``x >> s`` as ``x // 2**s``: exact for the unsigned types
    BitShift is defined on (the product wraps as a shift does); ``2**s`` is read from a table
    of the powers of two of the type's width (a shift by the width or more is undefined).
    """
    direction = ctx.require("direction")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction {direction!r}; expected 'LEFT' or 'RIGHT'")
    dtype = ctx.dtype(0)
    if not dtype.startswith("uint"):
        raise ctx.error(f"BitShift is defined on unsigned integers, got {dtype}")
    bits = np.dtype(dtype).itemsize * 8
    powers = ctx.const(np.array([1 << k for k in range(bits)], dtype=dtype))
    scale = ctx.call("take", powers, ctx.expr(1), axis=0, mode="clip")
    op = "multiply" if direction == "LEFT" else "floor_divide"
    return ctx.call(op, ctx.expr(0), scale)


def _mod(ctx: NodeContext) -> Expr:
    op = "mod" if ctx.attr("fmod", 0) else "floor_mod"
    return ctx.call(op, ctx.expr(0), ctx.expr(1))


def _bound(ctx: NodeContext, i: int, attr: str) -> Expr | float | int | None:
    """Clip's bound: a Python number when known at import time, else an expression."""
    dtype = ctx.dtype(0)
    if ctx.opset < 11:  # noqa: PLR2004
        v = ctx.attr(attr)
        if v is None or abs(v) >= np.finfo(np.float32).max:
            return None
        return float(v)
    if not ctx.has(i):
        return None
    try:
        value = ctx.value(i)
    except DynamicValueError:
        return ctx.call("cast", ctx.expr(i), dtype=dtype)
    if value.size == 0:
        return None
    number = value.reshape(-1)[0].item()
    return int(number) if np.issubdtype(np.dtype(dtype), np.integer) else float(number)


def _clip(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    lo, hi = _bound(ctx, 1, "min"), _bound(ctx, 2, "max")
    numbers = (int, float)
    if isinstance(lo, numbers) and isinstance(hi, numbers) and lo <= hi:
        return ctx.call("clip", x, a_min=lo, a_max=hi)
    out = x
    if lo is not None:
        out = ctx.call("maximum", out, _scalar(ctx, lo, dtype) if isinstance(lo, numbers) else lo)
    if hi is not None:
        out = ctx.call("minimum", out, _scalar(ctx, hi, dtype) if isinstance(hi, numbers) else hi)
    return out


def _cast(ctx: NodeContext) -> Expr:
    dtype = onnx_dtype(ctx, int(ctx.require("to")))
    if dtype == ctx.dtype(0):
        return ctx.expr(0)
    return ctx.call("cast", ctx.expr(0), dtype=dtype)


def _cast_like(ctx: NodeContext) -> Expr:
    dtype = ctx.dtype(1)
    return ctx.expr(0) if dtype == ctx.dtype(0) else ctx.call("cast", ctx.expr(0), dtype=dtype)


def _where(ctx: NodeContext) -> Expr:
    cond = ctx.expr(0)
    if ctx.dtype(0) != "bool":
        cond = ctx.call("cast", cond, dtype="bool")
    return ctx.call("where", cond, ctx.expr(1), ctx.expr(2))


# ---------------------------------------------------------------------- activations


def _leaky_relu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.leaky_relu", ctx.expr(0), alpha=float(ctx.attr("alpha", 0.01)))


def _prelu(ctx: NodeContext) -> Expr:
    x, slope = ctx.expr(0), ctx.expr(1)
    shape, sshape = ctx.shape(0), list(ctx.shape(1))
    while sshape and sshape[0] == 1 and len(sshape) > len(shape) - 1:
        sshape.pop(0)
    channels = shape[1] if len(shape) > 1 else None
    if ctx.opset < 7 and len(sshape) == 1 and sshape[0] == channels:  # noqa: PLR2004
        return ctx.call("nn.prelu", x, slope, axis=1)  # a slope per channel before opset 7
    if (
        channels is not None
        and len(sshape) == len(shape) - 1
        and sshape[0] == channels
        and all(d == 1 for d in sshape[1:])
    ):
        alpha = ctx.call("reshape", slope, newshape=(channels,))
        return ctx.call("nn.prelu", x, alpha, axis=1)
    zero = _scalar(ctx, 0, ctx.dtype(0))
    negative = ctx.call("multiply", x, slope)
    return ctx.call("where", ctx.call("less", x, zero), negative, x)


def _exp_minus_one(ctx: NodeContext, x: Expr, alpha: float) -> Expr:
    dtype = ctx.dtype(0)
    em1 = ctx.call("subtract", ctx.call("exp", x), _scalar(ctx, 1, dtype))
    return ctx.call("multiply", em1, _scalar(ctx, alpha, dtype))


def _elu(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    zero = _scalar(ctx, 0, ctx.dtype(0))
    neg = _exp_minus_one(ctx, x, float(ctx.attr("alpha", 1.0)))
    return ctx.call("where", ctx.call("greater", x, zero), x, neg)


def _selu(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    zero = _scalar(ctx, 0, dtype)
    inner = ctx.call("where", ctx.call("greater", x, zero), x, _exp_minus_one(ctx, x, alpha))
    return ctx.call("multiply", inner, _scalar(ctx, gamma, dtype))


def _celu(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    alpha = float(ctx.attr("alpha", 1.0))
    scaled = ctx.call("divide", x, _scalar(ctx, alpha, dtype))
    neg = ctx.call("minimum", _scalar(ctx, 0, dtype), _exp_minus_one(ctx, scaled, alpha))
    return ctx.call("add", ctx.call("nn.relu", x), neg)


def _softplus_of(ctx: NodeContext, x: Expr) -> Expr:
    """``log(1 + exp(x))`` computed as ``max(x, 0) + log(1 + exp(-|x|))`` (no overflow)."""
    one = _scalar(ctx, 1, ctx.dtype(0))
    tail = ctx.call("exp", ctx.call("negative", ctx.call("abs", x)))
    return ctx.call("add", ctx.call("nn.relu", x), ctx.call("log", ctx.call("add", tail, one)))


def _softplus(ctx: NodeContext) -> Expr:
    return _softplus_of(ctx, ctx.expr(0))


def _mish(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    return ctx.call("multiply", x, ctx.call("tanh", _softplus_of(ctx, x)))


def _softsign(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    one = _scalar(ctx, 1, ctx.dtype(0))
    return ctx.call("divide", x, ctx.call("add", ctx.call("abs", x), one))


def _hard_sigmoid_of(ctx: NodeContext, x: Expr, alpha: float, beta: float) -> Expr:
    dtype = ctx.dtype(0)
    lin = ctx.call(
        "add", ctx.call("multiply", x, _scalar(ctx, alpha, dtype)), _scalar(ctx, beta, dtype)
    )
    return ctx.call("clip", lin, a_min=0.0, a_max=1.0)


def _hard_sigmoid(ctx: NodeContext) -> Expr:
    alpha, beta = float(ctx.attr("alpha", 0.2)), float(ctx.attr("beta", 0.5))
    return _hard_sigmoid_of(ctx, ctx.expr(0), alpha, beta)


def _hard_swish(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    return ctx.call("multiply", x, _hard_sigmoid_of(ctx, x, 1 / 6, 0.5))


def _gelu(ctx: NodeContext) -> Expr:
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"approximate={approximate!r} is not one of 'none', 'tanh'")
    return ctx.call("nn.gelu", ctx.expr(0), approximate=approximate)


def _thresholded_relu(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    alpha = _scalar(ctx, float(ctx.attr("alpha", 1.0)), dtype)
    return ctx.call("where", ctx.call("greater", x, alpha), x, _scalar(ctx, 0, dtype))


def _is_inf(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    found = []
    if ctx.attr("detect_positive", 1):
        found.append(ctx.call("equal", x, _scalar(ctx, np.inf, dtype)))
    if ctx.attr("detect_negative", 1):
        found.append(ctx.call("equal", x, _scalar(ctx, -np.inf, dtype)))
    if not found:
        ctx.check_constant(ctx.shape(0), "bool", "the all-false mask")
        return ctx.const(np.zeros(ctx.shape(0), dtype=bool))
    return found[0] if len(found) == 1 else ctx.call("logical_or", *found)


def _shrink(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    lambd, bias = float(ctx.attr("lambd", 0.5)), float(ctx.attr("bias", 0.0))
    low = ctx.call("less", x, _scalar(ctx, -lambd, dtype))
    high = ctx.call("greater", x, _scalar(ctx, lambd, dtype))
    shifted_up = ctx.call("add", x, _scalar(ctx, bias, dtype))
    shifted_down = ctx.call("subtract", x, _scalar(ctx, bias, dtype))
    inner = ctx.call("where", high, shifted_down, _scalar(ctx, 0, dtype))
    return ctx.call("where", low, shifted_up, inner)


def _swish(ctx: NodeContext) -> Expr:
    x, dtype = ctx.expr(0), ctx.dtype(0)
    alpha = float(ctx.attr("alpha", 1.0))
    gate = x if alpha == 1.0 else ctx.call("multiply", x, _scalar(ctx, alpha, dtype))
    return ctx.call("multiply", x, ctx.call("sigmoid", gate))


def _is_nan(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    return ctx.call("not_equal", x, x)


_UNARY = {
    "Abs": "abs",
    "Neg": "negative",
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Floor": "floor",
    "Ceil": "ceil",
    "Round": "round",
    "Sign": "sign",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Sinh": "sinh",
    "Cosh": "cosh",
    "Asin": "asin",
    "Acos": "acos",
    "Atan": "atan",
    "Asinh": "asinh",
    "Acosh": "acosh",
    "Atanh": "atanh",
    "Erf": "erf",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Relu": "nn.relu",
    "Not": "logical_not",
}
_BINARY = {
    "Add": "add",
    "Sub": "subtract",
    "Mul": "multiply",
    "Div": "divide",
    "Equal": "equal",
    "Less": "less",
    "Greater": "greater",
    "LessOrEqual": "less_equal",
    "GreaterOrEqual": "greater_equal",
    "And": "logical_and",
    "Or": "logical_or",
    "Xor": "logical_xor",
}
_MIN_OPSET = {"LessOrEqual": 12, "GreaterOrEqual": 12, "Sign": 9, "Erf": 9}

MATH_CONVERTERS: ConverterTable = {
    **{k: (_MIN_OPSET.get(k, 1), _unary(v)) for k, v in _UNARY.items()},
    **{k: (_MIN_OPSET.get(k, 1), _binary(v)) for k, v in _BINARY.items()},
    "BitShift": (11, _bit_shift),
    "Sum": (1, _variadic("add")),
    "Max": (1, _variadic("maximum")),
    "Min": (1, _variadic("minimum")),
    "Mean": (1, _mean),
    "Pow": (1, _pow),
    "Mod": (10, _mod),
    "Reciprocal": (1, _reciprocal),
    "Identity": (1, _identity),
    "Clip": (1, _clip),
    "Cast": (1, _cast),
    "CastLike": (15, _cast_like),
    "Where": (9, _where),
    "IsNaN": (9, _is_nan),
    "IsInf": (10, _is_inf),
    "Shrink": (9, _shrink),
    "Swish": (24, _swish),
    "LeakyRelu": (1, _leaky_relu),
    "PRelu": (1, _prelu),
    "Elu": (1, _elu),
    "Selu": (1, _selu),
    "Celu": (12, _celu),
    "Softplus": (1, _softplus),
    "Softsign": (1, _softsign),
    "Mish": (18, _mish),
    "HardSigmoid": (1, _hard_sigmoid),
    "HardSwish": (14, _hard_swish),
    "Gelu": (20, _gelu),
    "ThresholdedRelu": (10, _thresholded_relu),
}
