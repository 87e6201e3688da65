"""DeadCodeElimination: compared with the expected graph, structurally."""

from __future__ import annotations

from pytvm import graph as g
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import dead_code_elimination

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def test_dead_code_elimination_drops_no_op_reshapes_and_tuple_round_trips() -> None:
    x = _var("x", 2, 3)
    same = g.call("reshape", g.call("exp", x), newshape=(2, 3))
    before = _mod([x], g.TupleGetItem(g.Tuple([same, x]), 0))
    x2 = _var("x", 2, 3)
    assert_structural_equal(dead_code_elimination(before), _mod([x2], g.call("exp", x2)))
