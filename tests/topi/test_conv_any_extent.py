"""Convolutions whose channels and widths have no power-of-two factor: the strategy table picks
a vectorized implementation for each (output channels padded to whole blocks in the packed
kernel, row blocks with a narrower tail block), and the built graph matches numpy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.transform import alter_op_layout
from pytvm.runtime.graph_executor import GraphModule
from pytvm.target import Target
from pytvm.topi.nn.depthwise import padded_row_pitch
from pytvm.topi.x86 import OpWorkload, select

F32 = "float32"
AVX512 = "llvm -mattr=+avx512f"  # 16 floats a vector
AVX2 = "llvm -mattr=+avx2"  # 8 floats a vector


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _conv_np(x: np.ndarray, w: np.ndarray, stride: int, pad: int, groups: int) -> np.ndarray:
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = xp.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    xg = xp.reshape(n, groups, cg, h, wd)
    wg = w.reshape(groups, f // groups, cg, kh, kw).astype(np.float64)
    out = np.zeros((n, groups, f // groups, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xg[:, :, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("ngchw,gfc->ngfhw", patch, wg[:, :, :, i, j])
    return out.reshape(n, f, oh, ow)


def _conv_mod(
    shape: tuple[int, int, int, int], w: np.ndarray, stride: int, pad: int, groups: int
) -> tuple[g.IRModule, g.Var]:
    x = g.Var("x", g.TensorType(shape, F32))
    conv = g.call("nn.conv2d", x, g.const(w), strides=(stride, stride), padding=(pad,) * 4,
                  dilation=(1, 1), groups=groups)  # fmt: skip
    body = g.call(
        "nn.relu", g.call("nn.bias_add", conv, g.const(_rand(w.shape[0], seed=2)), axis=1)
    )
    return g.IRModule.from_expr(g.Function([x], body)), x


# (data shape, output channels, kernel, stride, padding, groups)
CASES = [
    ((1, 64, 13, 13), 100, 1, 1, 0, 1),  # 1x1 on a prime plane, channels padded to blocks
    ((1, 24, 7, 7), 24, 1, 1, 0, 1),  # 1x1 on 7x7, 24 channels
    ((1, 24, 7, 7), 24, 3, 1, 1, 1),  # 3x3 on 7x7
    ((1, 20, 14, 14), 40, 3, 1, 1, 1),  # 3x3 on 14x14, 40 channels
    ((1, 12, 15, 15), 72, 3, 2, 1, 1),  # strided, odd input
    ((1, 32, 28, 28), 32, 3, 1, 1, 8),  # grouped (four channels a group)
    ((1, 48, 13, 13), 48, 3, 1, 1, 3),  # grouped (sixteen channels a group), prime width
    ((1, 48, 7, 7), 48, 3, 1, 1, 6),  # grouped, eight channels a group: half vectors
    ((1, 32, 9, 9), 96, 3, 2, 1, 4),  # grouped, 24 output channels a group, strided
    ((1, 40, 7, 7), 40, 3, 1, 1, 40),  # depthwise on 7x7
    ((1, 16, 7, 7), 32, 5, 1, 2, 16),  # depthwise 5x5 on 7x7, two filters a channel
    ((1, 24, 15, 15), 24, 5, 2, 2, 24),  # depthwise 5x5, stride 2, odd width
]


@pytest.mark.parametrize("target", [AVX512, AVX2])
@pytest.mark.parametrize(("shape", "f", "k", "stride", "pad", "groups"), CASES)
def test_conv_of_any_extent_matches_numpy(
    target: str, shape: tuple[int, int, int, int], f: int, k: int, stride: int, pad: int,
    groups: int,
) -> None:  # fmt: skip
    w = _rand(f, shape[1] // groups, k, k, seed=1) * 0.2
    mod, _ = _conv_mod(shape, w, stride, pad, groups)
    lib = g.build(mod, target=target)
    m = GraphModule(lib["default"](pytvm.cpu()))
    xin = _rand(*shape, seed=3)
    m.set_input(x=xin)
    m.run()
    bias = _rand(f, seed=2).reshape(1, f, 1, 1)
    want = np.maximum(_conv_np(xin, w, stride, pad, groups) + bias, 0)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("index", [0, 5, 10])  # padded channels, a row tail, a depthwise plane
def test_conv_of_any_extent_matches_numpy_through_the_c_backend(index: int) -> None:
    shape, f, k, stride, pad, groups = CASES[index]
    w = _rand(f, shape[1] // groups, k, k, seed=1) * 0.2
    mod, _ = _conv_mod(shape, w, stride, pad, groups)
    lib = g.build(mod, target="c -mattr=+avx512f")
    m = GraphModule(lib["default"](pytvm.cpu()))
    xin = _rand(*shape, seed=3)
    m.set_input(x=xin)
    m.run()
    bias = _rand(f, seed=2).reshape(1, f, 1, 1)
    want = np.maximum(_conv_np(xin, w, stride, pad, groups) + bias, 0)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)


def test_odd_channel_counts_get_a_packed_kernel_padded_to_whole_blocks() -> None:
    attrs = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1}
    with Target(AVX512):
        for f, layout in ((1000, "OIHW16o"), (232, "OIHW16o"), (1024, "OIHW32o")):
            wl = OpWorkload("nn.conv2d", (1, 512, 13, 13), (f, 512, 1, 1), F32, F32, attrs, True)
            row = select("nn.conv2d", wl)
            assert row.name == "conv2d_nchw_packed"
            assert row.weight_layout is not None and row.weight_layout(wl) == layout


def test_grouped_conv_is_packed_in_blocks_within_a_group_where_rows_do_not_vectorize() -> None:
    attrs = {"strides": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 32}
    with Target(AVX512):
        wl = OpWorkload("nn.conv2d", (1, 1024, 7, 7), (1024, 32, 3, 3), F32, F32, attrs, True)
        row = select("nn.conv2d", wl)  # 32 channels a group, rows of 7
        assert row.name == "conv2d_nchw_packed"
        assert row.weight_layout is not None and row.weight_layout(wl) == "OIHW32o"
        wl = OpWorkload("nn.conv2d", (1, 128, 28, 28), (128, 4, 3, 3), F32, F32, attrs, True)
        assert select("nn.conv2d", wl).name == "group_conv2d_nchw"  # 4 lanes against 16
        wl = OpWorkload("nn.conv2d", (1, 256, 14, 14), (256, 8, 3, 3), F32, F32, attrs, True)
        assert select("nn.conv2d", wl).name == "group_conv2d_nchw"  # 8 lanes against 14
        strided = {**attrs, "strides": (2, 2), "groups": 26}
        wl = OpWorkload("nn.conv2d", (1, 208, 28, 28), (208, 8, 3, 3), F32, F32, strided, True)
        assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"  # strided rows gather


def test_direct_conv_keeps_channels_a_packed_block_would_mostly_pad() -> None:
    attrs = {"strides": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1}
    with Target(AVX512):  # 24 of 32 lanes over channels, 16 of 16 along rows of 80
        wl = OpWorkload("nn.conv2d", (1, 24, 80, 80), (24, 24, 3, 3), F32, F32, attrs, True)
        assert select("nn.conv2d", wl).name == "conv2d_nchw"
        wl = OpWorkload("nn.conv2d", (1, 24, 14, 14), (24, 24, 3, 3), F32, F32, attrs, True)
        assert select("nn.conv2d", wl).name == "conv2d_nchw"  # 14 of 16 along the row
        wl = OpWorkload("nn.conv2d", (1, 116, 14, 14), (116, 116, 3, 3), F32, F32, attrs, True)
        assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"  # 116 of 128 lanes
        strided = {**attrs, "strides": (2, 2)}
        wl = OpWorkload("nn.conv2d", (1, 24, 80, 80), (24, 24, 3, 3), F32, F32, strided, True)
        assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"  # strided rows gather


def test_alter_op_layout_records_the_real_output_channels() -> None:
    x = g.Var("x", g.TensorType((1, 8, 13, 13), F32))
    conv = g.call("nn.conv2d", x, g.const(_rand(20, 8, 1, 1)), strides=(1, 1),
                  padding=(0, 0, 0, 0), dilation=(1, 1))  # fmt: skip
    with Target(AVX2):
        after = alter_op_layout(g.IRModule.from_expr(g.Function([x], conv)))
    body = after["main"].body
    assert isinstance(body, g.Call)
    assert body.attrs["kernel_layout"] == "OIHW8o" and body.attrs["channels"] == 20


def test_packed_conv_keeps_the_requested_channels_of_a_padded_kernel() -> None:
    rng = np.random.default_rng(4)
    xa = rng.standard_normal((1, 5, 6, 7)).astype(F32)
    wa = rng.standard_normal((10, 5, 3, 3)).astype(F32)
    with Target(AVX2):
        x = te.placeholder(xa.shape, F32, "x")
        w = te.placeholder(wa.shape, F32, "w")
        packed = topi.nn.conv2d_kernel_pack(w, 8)  # two blocks, the last 6 channels zero
        out = topi.nn.conv2d_nchw_packed(x, packed, 1, 1, 1, channels=10)
        assert [str(d) for d in out.shape] == ["1", "10", "6", "7"]
        s = topi.x86.schedule_default([out])
        s[packed].compute_root()
        mod = pytvm.build(s, [x, w, out], target=AVX2, name="conv")
    got = pytvm.nd.empty((1, 10, 6, 7), F32)
    mod["conv"](pytvm.nd.array(xa), pytvm.nd.array(wa), got)
    np.testing.assert_allclose(got.numpy(), _conv_np(xa, wa, 1, 1, 1), rtol=1e-4, atol=1e-4)


def test_packed_conv_rejects_channels_outside_its_last_block() -> None:
    x = te.placeholder((1, 4, 8, 8), F32, "x")
    w = te.placeholder((2, 4, 3, 3, 8), F32, "w")
    with pytest.raises(TVMValueError, match="channels"):
        topi.nn.conv2d_nchw_packed(x, w, 1, 1, 1, channels=8)


def test_packed_conv_with_a_tail_block_runs_vector_multiply_adds() -> None:
    with Target(AVX512):  # 13 columns of 32 channels: a block of 7, a tail block of 6
        assert topi.x86.conv2d_packed_block(32, 13, 13, F32) == (1, 7)
        x = te.placeholder((1, 16, 13, 13), F32, "x")
        w = te.placeholder((1, 16, 1, 1, 32), F32, "w")
        out = topi.nn.conv2d_nchw_packed(x, w, 1, 0, 1, channels=20)
        mod = pytvm.build(topi.x86.schedule_default([out]), [x, w, out], target=AVX512)
    ll = mod.get_source("ll")
    products = re.findall(r"fmul [a-z ]*<16 x float>", ll)
    sums = re.findall(r"fadd [a-z ]*<16 x float>", ll)
    assert len(products) >= 2 * 13 and len(sums) >= 2 * 13  # both blocks: every column
    assert not re.findall(r"fmul [a-z ]*float ", ll)  # no scalar product


@pytest.mark.parametrize(
    ("shape", "f", "groups", "stride"),
    [((1, 8, 13, 13), 16, 1, 1), ((1, 8, 28, 28), 8, 2, 1), ((1, 6, 7, 7), 12, 1, 1),
     ((1, 16, 15, 15), 16, 16, 2)],
)  # fmt: skip
def test_direct_conv_of_a_runtime_kernel_vectorizes_any_width(
    shape: tuple[int, int, int, int], f: int, groups: int, stride: int
) -> None:
    xa = _rand(*shape, seed=5)
    wa = _rand(f, shape[1] // groups, 3, 3, seed=6)
    with Target(AVX512):
        x = te.placeholder(shape, F32, "x")
        w = te.placeholder(wa.shape, F32, "w")
        if groups == shape[1]:
            kernel = topi.reshape(w, (shape[1], f // shape[1], 3, 3))
            out = topi.nn.depthwise_conv2d_nchw(x, kernel, stride, 1, 1)
        else:
            out = topi.nn.group_conv2d_nchw(x, w, stride, 1, 1, groups)
        out = topi.nn.relu(out)
        mod = pytvm.build(topi.x86.schedule_default([out]), [x, w, out], target=AVX512)
    want = np.maximum(_conv_np(xa, wa, stride, 1, groups), 0)
    got = pytvm.nd.empty(want.shape, F32)
    mod(pytvm.nd.array(xa), pytvm.nd.array(wa), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    assert re.findall(r"fmul [a-z ]*<\d+ x float>", mod.get_source("ll"))


def test_depthwise_plane_copies_an_odd_row_shorter_than_a_vector_as_one_block() -> None:
    with Target(AVX512):
        assert padded_row_pitch(7, 2, 2, 1, F32) == (7, 14)  # one vector a row
        assert padded_row_pitch(7, 1, 1, 2, F32) == (1, 16)  # rows read apart
        assert padded_row_pitch(56, 1, 1, 1, F32) == (8, 64)
        assert padded_row_pitch(21, 1, 1, 1, F32) == (1, 22)  # longer than a vector
