"""The converter of ONNX ``Einsum`` for the matrix-product forms: every equation whose labels
each appear at most once per operand (batched products, transposes, contractions, outer
products, sums over an axis, ``...`` broadcasting), lowered to transposes, reshapes, sums and
``nn.batch_matmul``. A label repeated within one operand (a diagonal or trace) is refused.

Operands are contracted left to right; a pair becomes one batched product
``[batch, rows, k] x [batch, k, cols]`` after summing away the labels only one operand has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["EINSUM_CONVERTERS"]

Labels = list[str]


def _parse(ctx: NodeContext, equation: str, ranks: Sequence[int]) -> tuple[list[Labels], Labels]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ctx.error(f"equation {equation!r} has {len(terms)} operand(s), the node {len(ranks)}")
    operands: list[Labels] = []
    widest = 0
    for term, rank in zip(terms, ranks, strict=True):
        letters = term.replace("...", "")
        if not letters.isalpha() and letters:
            raise ctx.error(f"equation {equation!r}: bad term {term!r}")
        if "..." in term:
            count = rank - len(letters)
            if count < 0:
                raise ctx.error(f"term {term!r} has more labels than its operand's rank {rank}")
            widest = max(widest, count)
            head, _, tail = term.partition("...")
            labels = [*head, *(f"...{count - 1 - k}" for k in range(count)), *tail]
        else:
            labels = list(term)
        if len(labels) != rank:
            raise ctx.error(f"term {term!r} names {len(labels)} axes; its operand has {rank}")
        if len(set(labels)) != len(labels):
            raise ctx.error(
                f"equation {equation!r}: a label repeated within one operand (a diagonal) "
                "is not supported"
            )
        operands.append(labels)
    ellipsis = [f"...{widest - 1 - k}" for k in range(widest)]
    if arrow:
        head, dots, tail = rhs.partition("...")
        out = [*head, *(ellipsis if dots else []), *tail]
    else:
        counts: dict[str, int] = {}
        for labels in operands:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        out = ellipsis + sorted(k for k, n in counts.items() if n == 1 and not k.startswith("..."))
    return operands, out


class _Operand:
    def __init__(self, expr: Expr, labels: Labels, sizes: dict[str, int]) -> None:
        self.expr, self.labels, self.sizes = expr, labels, sizes


def _operand(ctx: NodeContext, expr: Expr, labels: Labels) -> _Operand:
    shape = expr.checked_type.shape  # type: ignore[union-attr]
    return _Operand(expr, labels, dict(zip(labels, shape, strict=True)))


def _sum_away(ctx: NodeContext, op: _Operand, keep: set[str]) -> _Operand:
    drop = [k for k, lab in enumerate(op.labels) if lab not in keep]
    if not drop:
        return op
    expr = ctx.call("sum", op.expr, axis=tuple(drop), keepdims=False)
    labels = [lab for lab in op.labels if lab in keep]
    return _Operand(expr, labels, {lab: op.sizes[lab] for lab in labels})


def _arrange(ctx: NodeContext, op: _Operand, order: Labels) -> Expr:
    perm = tuple(op.labels.index(lab) for lab in order)
    if perm == tuple(range(len(perm))):
        return op.expr
    return ctx.call("transpose", op.expr, axes=perm)


def _stretch(ctx: NodeContext, op: _Operand, sizes: dict[str, int]) -> _Operand:
    """``op`` broadcast where a shared label has extent 1 here and more in the other operand."""
    target = [sizes.get(lab, op.sizes[lab]) for lab in op.labels]
    if target == [op.sizes[lab] for lab in op.labels]:
        return op
    expr = ctx.call("broadcast_to", op.expr, shape=tuple(target))
    return _Operand(expr, op.labels, dict(zip(op.labels, target, strict=True)))


def _contract(ctx: NodeContext, a: _Operand, b: _Operand, keep: set[str]) -> _Operand:
    a = _sum_away(ctx, a, keep | set(b.labels))
    b = _sum_away(ctx, b, keep | set(a.labels))
    shared = [lab for lab in a.labels if lab in b.labels]
    sizes = {lab: max(a.sizes[lab], b.sizes[lab]) for lab in shared}
    for lab in shared:
        if 1 not in (a.sizes[lab], b.sizes[lab]) and a.sizes[lab] != b.sizes[lab]:
            raise ctx.error(f"label {lab!r} has extents {a.sizes[lab]} and {b.sizes[lab]}")
    a, b = _stretch(ctx, a, sizes), _stretch(ctx, b, sizes)
    batch = [lab for lab in shared if lab in keep]
    inner = [lab for lab in shared if lab not in keep]
    rows = [lab for lab in a.labels if lab not in shared]
    cols = [lab for lab in b.labels if lab not in shared]

    def extent(labels: Labels) -> int:
        return math.prod(sizes.get(lab, a.sizes.get(lab, b.sizes.get(lab, 1))) for lab in labels)

    nb, m, k, n = extent(batch), extent(rows), extent(inner), extent(cols)
    lhs = ctx.call("reshape", _arrange(ctx, a, batch + rows + inner), newshape=(nb, m, k))
    rhs = ctx.call("reshape", _arrange(ctx, b, batch + inner + cols), newshape=(nb, k, n))
    prod = ctx.call("nn.batch_matmul", lhs, rhs, transpose_a=False, transpose_b=False)
    labels = batch + rows + cols
    all_sizes = {**a.sizes, **b.sizes, **sizes}
    shape = tuple(all_sizes[lab] for lab in labels)
    expr = ctx.call("reshape", prod, newshape=shape)
    return _Operand(expr, labels, {lab: all_sizes[lab] for lab in labels})


def _einsum(ctx: NodeContext) -> Expr:
    equation = str(ctx.require("equation"))
    exprs = [ctx.expr(i) for i in range(ctx.num_inputs)]
    ranks = [len(e.checked_type.shape) for e in exprs]  # type: ignore[union-attr]
    operands, out = _parse(ctx, equation, ranks)
    if len(set(out)) != len(out):
        raise ctx.error(f"equation {equation!r} repeats an output label")
    current = _operand(ctx, exprs[0], operands[0])
    for k in range(1, len(exprs)):
        later = {lab for labels in operands[k + 1 :] for lab in labels}
        current = _contract(ctx, current, _operand(ctx, exprs[k], operands[k]), set(out) | later)
    missing = [lab for lab in out if lab not in current.labels]
    if missing:
        raise ctx.error(f"equation {equation!r}: output labels {missing} name no input axis")
    current = _sum_away(ctx, current, set(out))
    return _arrange(ctx, current, out)


EINSUM_CONVERTERS: ConverterTable = {"Einsum": (12, _einsum)}
