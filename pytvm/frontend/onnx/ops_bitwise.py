"""Converters of ONNX's bitwise operators (opset 18): ``BitwiseAnd``, ``BitwiseOr``,
``BitwiseXor`` (with numpy broadcasting) and ``BitwiseNot``, on integer tensors.
"""

from __future__ import annotations

from collections.abc import Callable

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["BITWISE_CONVERTERS"]


def _integer(ctx: NodeContext, i: int) -> Expr:
    dtype = ctx.dtype(i)
    if not dtype.startswith(("int", "uint")):
        raise ctx.error(f"input {i} has type {dtype}; {ctx.op_type} is defined on integers")
    return ctx.expr(i)


def _binary(op: str) -> Callable[[NodeContext], Expr]:
    def convert(ctx: NodeContext) -> Expr:
        a, b = _integer(ctx, 0), _integer(ctx, 1)
        if ctx.dtype(0) != ctx.dtype(1):
            raise ctx.error(f"the inputs' types differ: {ctx.dtype(0)} and {ctx.dtype(1)}")
        return ctx.call(op, a, b)

    return convert


def _not(ctx: NodeContext) -> Expr:
    return ctx.call("bitwise_not", _integer(ctx, 0))


BITWISE_CONVERTERS: ConverterTable = {
    "BitwiseAnd": (18, _binary("bitwise_and")),
    "BitwiseOr": (18, _binary("bitwise_or")),
    "BitwiseXor": (18, _binary("bitwise_xor")),
    "BitwiseNot": (18, _not),
}
