"""Graph passes: each compared with the expected graph, structurally."""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import graph as g
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.interpreter import interpret
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import (
    bind_params,
    dead_code_elimination,
    eliminate_common_subexpr,
    fold_constant,
    fold_scale_axis,
    simplify_inference,
)
from pytvm.ir.transform import PassContext

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def _conv(x: g.Expr, w: g.Expr, name: str = "") -> g.Call:
    return g.call(
        "nn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), name=name
    )


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


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


def test_fold_constant_evaluates_weight_only_subgraphs() -> None:
    x = _var("x", 2, 3)
    w = g.call("transpose", g.const(_rand(3, 4)), axes=(1, 0))
    before = _mod([x], g.call("nn.dense", x, w))
    x2 = _var("x", 2, 3)
    expected = _mod([x2], g.call("nn.dense", x2, g.const(_rand(3, 4).T.copy())))
    assert_structural_equal(fold_constant(before), expected)


def test_batch_norm_folds_into_the_convolution_weights() -> None:
    x = _var("x", 1, 3, 6, 6)
    w = _rand(4, 3, 3, 3)
    stats = [np.abs(_rand(4, seed=i)) + 0.5 for i in range(4)]
    before = _mod([x], g.call("nn.batch_norm", _conv(x, g.const(w)), *map(g.const, stats)))
    with PassContext(opt_level=3):
        after = fold_constant(fold_scale_axis(fold_constant(simplify_inference(before))))
    body = after["main"].body
    assert isinstance(body, g.Call) and body.op == "add"
    conv = body.args[0]
    assert isinstance(conv, g.Call) and conv.op == "nn.conv2d"  # the multiply is gone
    xin = _rand(1, 3, 6, 6, seed=9)
    np.testing.assert_allclose(
        interpret(after["main"], {"x": xin}),
        interpret(before["main"], {"x": xin}),
        rtol=1e-5,
        atol=1e-5,
    )


def test_scale_is_not_folded_into_a_convolution_read_twice() -> None:
    x = _var("x", 1, 3, 6, 6)
    conv = _conv(x, g.const(_rand(4, 3, 3, 3)))
    scaled = g.call("multiply", conv, g.const(np.full((4, 1, 1), 2.0, F32)))
    before = _mod([x], g.Tuple([scaled, conv]))
    assert_structural_equal(fold_scale_axis(before), before)


def test_common_subexpressions_are_computed_once() -> None:
    x = _var("x", 4)
    a, b = g.call("exp", x), g.call("exp", x)
    before = _mod([x], g.call("add", a, b))
    x2 = _var("x", 4)
    e = g.call("exp", x2)
    assert_structural_equal(eliminate_common_subexpr(before), _mod([x2], g.call("add", e, e)))


def test_dead_code_elimination_drops_no_op_reshapes_and_tuple_round_trips() -> None:
    x = _var("x", 2, 3)
    same = g.call("reshape", g.call("exp", x), newshape=(2, 3))
    before = _mod([x], g.TupleGetItem(g.Tuple([same, x]), 0))
    x2 = _var("x", 2, 3)
    assert_structural_equal(dead_code_elimination(before), _mod([x2], g.call("exp", x2)))


def test_bind_params_checks_names_and_shapes() -> None:
    x, w = _var("x", 2, 3), _var("w", 4, 3)
    func = g.Function([x, w], g.call("nn.dense", x, w))
    bound = bind_params(func, {"w": _rand(4, 3)})
    assert [p.name for p in bound.params] == ["x"]
    with pytest.raises(TVMValueError, match=r"\['v'\] are not parameters"):
        bind_params(func, {"v": _rand(4, 3)})
    with pytest.raises(TVMValueError, match=r"parameter 'w' is Tensor\[\(4, 3\), float32\]"):
        bind_params(func, {"w": _rand(3, 4)})
