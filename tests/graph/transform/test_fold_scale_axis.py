"""FoldScaleAxis: a per-channel scale folds into the convolution weights it follows."""

from __future__ import annotations

import numpy as np

from pytvm import graph as g
from pytvm.graph.interpreter import interpret
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import fold_constant, fold_scale_axis, simplify_inference
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
