"""LegalizeConvTranspose: a transposed convolution becomes a convolution and a pixel shuffle."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm.graph.functor import post_order
from pytvm.graph.interpreter import interpret
from pytvm.graph.transform import fold_constant, legalize_conv_transpose
from pytvm.graph.transform.legalize_conv_transpose import subpixel_axis
from pytvm.runtime.graph_executor import GraphModule
from pytvm.topi.testing import conv2d_transpose_nchw_python

F32 = "float32"


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _deconv(x: g.Expr, w: g.Expr, **attrs: Any) -> g.Call:
    attrs.setdefault("padding", (0, 0, 0, 0))
    attrs.setdefault("dilation", (1, 1))
    attrs.setdefault("output_padding", (0, 0))
    attrs.setdefault("groups", 1)
    return g.call("nn.conv2d_transpose", x, w, **attrs)


def _ops(mod: g.IRModule) -> list[str]:
    return [str(e.op) for e in post_order(mod["main"].body) if isinstance(e, g.Call)]


def _reference(x: np.ndarray, w: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """The answer of numpy: the operator's reference implementation (the interpreter's)."""
    return np.asarray(interpret(g.Function([], _deconv(g.const(x), g.const(w), **attrs)), {}))


# (input [N, C, H, W], weight [C, F/g, KH, KW], attributes)
CASES: list[tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ((1, 6, 9, 9), (6, 5, 2, 2), {"strides": (2, 2)}),  # DBNet's head
    ((1, 6, 9, 8), (6, 4, 4, 4), {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
    (
        (2, 8, 7, 7),
        (8, 3, 3, 3),
        {"strides": (2, 2), "padding": (1, 1, 1, 1), "output_padding": (1, 1)},
    ),
    ((1, 4, 5, 7), (4, 3, 3, 3), {"strides": (3, 3), "padding": (1, 0, 2, 1)}),  # asymmetric
    ((1, 4, 6, 5), (4, 2, 5, 3), {"strides": (3, 2), "output_padding": (2, 1)}),
    ((1, 6, 5, 5), (6, 2, 3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1), "groups": 3}),
    ((1, 8, 6, 6), (8, 1, 4, 4), {"strides": (2, 2), "padding": (1, 1, 1, 1), "groups": 8}),
    ((1, 3, 6, 6), (3, 4, 3, 3), {"strides": (2, 2), "dilation": (2, 2), "padding": (2, 1, 1, 2)}),
    ((1, 3, 5, 6), (3, 4, 3, 2), {"strides": (1, 1), "padding": (1, 0, 1, 1)}),  # no shuffle
    ((1, 3, 1, 9), (3, 4, 1, 4), {"strides": (1, 2), "padding": (0, 1, 0, 1)}),  # a 1-d one
    ((1, 2, 4, 4), (2, 3, 1, 1), {"strides": (3, 3)}),  # a stride past the kernel: gaps
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": (2, 2), "padding": (4, 4, 3, 3)}),  # crops rows
]


@pytest.mark.parametrize(("xshape", "wshape", "attrs"), CASES)
def test_lowered_conv_transpose_matches_numpy(
    xshape: tuple[int, ...], wshape: tuple[int, ...], attrs: dict[str, Any]
) -> None:
    x, w = _rand(*xshape), _rand(*wshape, seed=1)
    var = g.Var("x", g.TensorType(xshape, F32))
    before = g.IRModule.from_expr(g.Function([var], _deconv(var, g.const(w), **attrs)))
    after = fold_constant(legalize_conv_transpose(before))
    assert "nn.conv2d_transpose" not in _ops(after)
    assert "nn.conv2d" in _ops(after)
    expected = _reference(x, w, attrs)
    got = interpret(after["main"], {"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_topi_reference_agrees_with_the_operator_reference() -> None:
    x, w = _rand(1, 4, 5, 5), _rand(4, 3, 3, 3, seed=1)
    attrs = {"strides": (2, 2), "padding": (1, 1, 1, 1), "output_padding": (1, 1)}
    expected = conv2d_transpose_nchw_python(x, w, (2, 2), (1, 1, 1, 1), (1, 1))
    np.testing.assert_allclose(_reference(x, w, attrs), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("xshape", "wshape", "attrs"), [CASES[1], CASES[2], CASES[6]])
def test_built_conv_transpose_with_bias_and_relu_matches_numpy(
    xshape: tuple[int, ...], wshape: tuple[int, ...], attrs: dict[str, Any]
) -> None:
    x, w = _rand(*xshape), _rand(*wshape, seed=1)
    f = wshape[1] * attrs.get("groups", 1)
    bias = _rand(f, seed=2)
    var = g.Var("x", g.TensorType(xshape, F32))
    y = g.call("nn.relu", g.call("nn.bias_add", _deconv(var, g.const(w), **attrs), g.const(bias)))
    lib = g.build(g.IRModule.from_expr(g.Function([var], y)), target="llvm")
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    expected = np.maximum(_reference(x, w, attrs) + bias.reshape(-1, 1, 1), 0)
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_a_weight_computed_at_run_time_is_rearranged_at_run_time() -> None:
    x, w = _rand(1, 4, 5, 5), _rand(4, 2, 3, 3, seed=1)
    xv = g.Var("x", g.TensorType((1, 4, 5, 5), F32))
    wv = g.Var("w", g.TensorType((4, 2, 3, 3), F32))
    attrs = {"strides": (2, 2), "padding": (1, 1, 1, 1), "dilation": (1, 2)}
    before = g.IRModule.from_expr(g.Function([xv, wv], _deconv(xv, wv, **attrs)))
    after = legalize_conv_transpose(before)
    assert "take" in _ops(after)  # the flip is a graph operator, not a folded constant
    lib = g.build(before, target="llvm")
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.set_input("w", w)
    m.run()
    expected = _reference(x, w, attrs)
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_a_layout_other_than_nchw_is_left_to_the_direct_compute() -> None:
    x = g.Var("x", g.TensorType((1, 4, 5, 5), F32))
    before = g.IRModule.from_expr(
        g.Function([x], _deconv(x, g.const(_rand(4, 2, 3, 3)), strides=(2, 2), data_layout="NHWC"))
    )
    assert legalize_conv_transpose(before)["main"].body is before["main"].body


def test_subpixel_axis_plans_only_the_kept_rows() -> None:
    # kernel 2 stride 2: one tap, no padding, the shuffled rows are the output
    assert subpixel_axis(160, 2, 2, 1, (0, 0), 0) == (1, 0, 0, 0, 320)
    # kernel 3 stride 2 padding 1 output_padding 1: two taps, the first row cropped
    assert subpixel_axis(40, 2, 3, 1, (1, 1), 1) == (2, 1, 1, 1, 80)
