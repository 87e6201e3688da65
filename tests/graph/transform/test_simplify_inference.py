"""SimplifyInference: compared with the expected graph, structurally."""

from __future__ import annotations

import numpy as np

from pytvm import graph as g
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import simplify_inference

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def test_simplify_inference_turns_batch_norm_into_scale_and_shift() -> None:
    x = _var("x", 1, 2, 3, 3)
    gamma, beta = np.array([2.0, 0.5], F32), np.array([1.0, -1.0], F32)
    mean, var = np.array([0.5, 0.25], F32), np.array([3.0, 0.0], F32)
    bn = g.call("nn.batch_norm", x, *(g.const(a) for a in (gamma, beta, mean, var)), epsilon=1.0)
    after = simplify_inference(_mod([x], bn))
    scale = (gamma / np.sqrt(var + 1.0)).reshape(2, 1, 1)
    shift = (beta - mean * gamma / np.sqrt(var + 1.0)).reshape(2, 1, 1)
    x2 = _var("x", 1, 2, 3, 3)
    expected = _mod(
        [x2], g.call("add", g.call("multiply", x2, g.const(scale)), g.const(shift.astype(F32)))
    )
    assert_structural_equal(after, expected)
