"""EliminateCommonSubexpr: compared with the expected graph, structurally."""

from __future__ import annotations

from pytvm import graph as g
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import eliminate_common_subexpr

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def test_common_subexpressions_are_computed_once() -> None:
    x = _var("x", 4)
    a, b = g.call("exp", x), g.call("exp", x)
    before = _mod([x], g.call("add", a, b))
    x2 = _var("x", 4)
    e = g.call("exp", x2)
    assert_structural_equal(eliminate_common_subexpr(before), _mod([x2], g.call("add", e, e)))
