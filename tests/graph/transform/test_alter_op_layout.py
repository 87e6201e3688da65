"""AlterOpLayout: constant weights of dense layers and convolutions packed for the target, then
folded; the packed graph computes what the plain one does (interpreter and compiled).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pytvm
from pytvm import graph as g
from pytvm.graph.functor import post_order
from pytvm.graph.interpreter import interpret
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import alter_op_layout, fold_constant, optimize
from pytvm.runtime.graph_executor import GraphModule
from pytvm.target import Target

F32 = "float32"
AVX512 = "c -mattr=+avx512f"  # 16 floats a vector
AVX2 = "c -mattr=+avx2"  # 8 floats a vector


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _conv(x: g.Expr, w: g.Expr, **attrs: Any) -> g.Call:
    return g.call("nn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1),
                  **attrs)  # fmt: skip


def _packed(w: g.Expr, src: str, dst: str) -> g.Call:
    return g.call("layout_transform", w, src_layout=src, dst_layout=dst)


def test_dense_weight_is_packed_in_panels_of_two_vectors() -> None:
    w = g.const(_rand(64, 24))
    x = _var("x", 4, 24)
    with Target(AVX512):
        after = alter_op_layout(_mod([x], g.call("nn.dense", x, w)))
    x2 = _var("x", 4, 24)
    packed = _packed(w, "NK", "NK32n")
    expected = _mod([x2], g.call("nn.dense", x2, packed, weight_layout="NK32n", units=64))
    assert_structural_equal(after, expected)


def test_dense_panels_of_any_width_are_padded_and_keep_the_units() -> None:
    x = _var("x", 4, 24)
    with Target(AVX2):
        padded = alter_op_layout(_mod([x], g.call("nn.dense", x, g.const(_rand(40, 24)))))
        narrow = alter_op_layout(_mod([x], g.call("nn.dense", x, g.const(_rand(5, 24)))))
    body = padded["main"].body
    assert isinstance(body, g.Call) and body.attrs["weight_layout"] == "NK16n"
    assert body.attrs["units"] == 40 and body.checked_type.shape == (4, 40)  # type: ignore[union-attr]
    body = narrow["main"].body  # fits in one vector: panels of one vector
    assert isinstance(body, g.Call) and body.attrs["weight_layout"] == "NK8n"
    assert body.attrs["units"] == 5


def test_conv_kernel_is_packed_by_output_channel_blocks() -> None:
    w = g.const(_rand(48, 3, 3, 3))
    x = _var("x", 1, 3, 9, 9)
    with Target(AVX2):
        after = alter_op_layout(_mod([x], g.call("nn.relu", _conv(x, w))))
    x2 = _var("x", 1, 3, 9, 9)
    packed = _conv(x2, _packed(w, "OIHW", "OIHW16o"), kernel_layout="OIHW16o", channels=48)
    assert_structural_equal(after, _mod([x2], g.call("nn.relu", packed)))


def test_pointwise_conv_keeps_its_kernel() -> None:
    x = _var("x", 1, 8, 16, 16)
    conv = g.call("nn.conv2d", x, g.const(_rand(32, 8, 1, 1)), strides=(1, 1),
                  padding=(0, 0, 0, 0), dilation=(1, 1))  # fmt: skip
    before = _mod([x], conv)
    with Target(AVX512):  # 256 pixels: whole vectors, the pointwise product takes it
        assert alter_op_layout(before) is before


def test_depthwise_on_rows_and_runtime_weights_keep_their_layout() -> None:
    x = _var("x", 1, 32, 32, 32)
    wv = _var("w", 32, 32, 3, 3)
    depthwise = _conv(x, g.const(_rand(32, 1, 3, 3)), groups=32)  # large plane
    runtime = _conv(x, wv)
    before = _mod([x, wv], g.Tuple([depthwise, runtime]))
    with Target(AVX512):
        assert alter_op_layout(before) is before


def test_depthwise_on_a_small_plane_is_packed_in_channel_blocks() -> None:
    x = _var("x", 1, 40, 7, 7)
    w = g.const(_rand(40, 1, 3, 3))
    with Target(AVX512):  # rows of 7 waste half a vector; 40 channels fill 3 blocks of 16
        after = alter_op_layout(_mod([x], _conv(x, w, groups=40)))
    body = after["main"].body
    assert isinstance(body, g.Call) and body.attrs["kernel_layout"] == "OIHW16o"
    assert body.attrs["channels"] == 40


def test_grouped_kernel_is_packed_in_blocks_within_a_group() -> None:
    x = _var("x", 1, 32, 7, 7)
    with Target(AVX512):  # 16 output channels a group: one vector; rows of 7 have none
        after = alter_op_layout(_mod([x], _conv(x, g.const(_rand(32, 16, 3, 3)), groups=2)))
    body = after["main"].body
    assert isinstance(body, g.Call) and body.attrs["kernel_layout"] == "OIHW16o"


def test_folded_packed_graph_computes_what_the_plain_one_does() -> None:
    x = _var("x", 2, 8, 7, 7)
    conv = _conv(x, g.const(_rand(32, 8, 3, 3, seed=1)))
    res = g.call("nn.relu", g.call("add", conv, g.call("nn.relu", conv)))
    flat = g.call("reshape", g.call("nn.global_avg_pool2d", res), newshape=(2, 32))
    body = g.call("nn.dense", flat, g.const(_rand(16, 32, seed=2)))
    before = _mod([x], body)
    with Target(AVX512):
        after = fold_constant(alter_op_layout(before))
    dense = after["main"].body
    assert isinstance(dense, g.Call) and isinstance(dense.args[1], g.Constant)
    assert dense.args[1].data.shape == (1, 32, 16)  # 16 columns: one panel of one vector
    xin = {"x": _rand(2, 8, 7, 7, seed=3)}
    np.testing.assert_allclose(
        interpret(after["main"], xin), interpret(before["main"], xin), rtol=1e-5, atol=1e-5
    )


def test_built_model_with_packed_weights_matches_the_interpreter() -> None:
    x = _var("x", 1, 16, 13, 14)
    y = _conv(x, g.const(_rand(32, 16, 3, 3, seed=4)))
    y = g.call("clip", g.call("nn.bias_add", y, g.const(_rand(32, seed=5)), axis=1),
               a_min=0.0, a_max=6.0)  # fmt: skip
    z = g.call("nn.conv2d", y, g.const(_rand(32, 32, 1, 1, seed=6)), strides=(2, 2),
               padding=(0, 0, 0, 0), dilation=(1, 1))  # fmt: skip
    flat = g.call("reshape", z, newshape=(1, 32 * 7 * 7))
    out = g.call("nn.relu", g.call("nn.dense", flat, g.const(_rand(64, 32 * 7 * 7, seed=7))))
    mod = _mod([x], out)
    hints = {str(c.op.attrs["hint"]) for c in _calls(optimize(mod)["main"].body)}  # type: ignore[union-attr]
    assert {"nn_conv2d_nn_bias_add_clip", "nn_conv2d", "nn_dense_nn_relu"} <= hints
    lib = g.build(mod, target="llvm")
    m = GraphModule(lib["default"](pytvm.cpu()))
    xin = _rand(1, 16, 13, 14, seed=8)
    m.set_input(x=xin)
    m.run()
    want = interpret(mod["main"], {"x": xin})
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)


def _calls(expr: g.Expr) -> list[g.Call]:
    return [n for n in post_order(expr) if isinstance(n, g.Call) and isinstance(n.op, g.Function)]
