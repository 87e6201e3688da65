"""Depthwise convolutions on small planes: ``depthwise_conv2d_nchw_channels`` (channel blocks in
the vector lanes) against numpy, through TE and through graph builds that pick it from the
strategy table (kernel packed ``OIHW<cb>o`` by AlterOpLayout), with odd sizes, strides 1 and 2,
kernels 3/5/7, asymmetric padding, channel counts that leave a partial last block, and the
cases that keep padded rows (large planes, dilation, several filters a channel).
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.runtime.graph_executor import GraphModule
from pytvm.target import Target
from pytvm.testing.te_eval import evaluate
from pytvm.topi.x86 import OpWorkload, select

F32 = "float32"
AVX512 = "llvm -mattr=+avx512f"  # 16 floats a vector
AVX2 = "llvm -mattr=+avx2"  # 8 floats a vector


def _depthwise_np(
    x: np.ndarray, w: np.ndarray, stride: int, pad: tuple[int, int, int, int], dil: int
) -> np.ndarray:
    top, left, bottom, right = pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    c, _, kh, kw = w.shape
    oh = (xp.shape[2] - dil * (kh - 1) - 1) // stride + 1
    ow = (xp.shape[3] - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((x.shape[0], c, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dil : i * dil + stride * oh : stride, j * dil :: 1]
            patch = patch[:, :, :, : stride * ow : stride]
            out += patch * w[:, 0, i, j].reshape(1, c, 1, 1)
    return out


def _pack(w: np.ndarray, cb: int) -> np.ndarray:
    """``[C, 1, KH, KW]`` as channel blocks ``[ceil(C / cb), 1, KH, KW, cb]``, zero-filled."""
    c, _, kh, kw = w.shape
    blocks = -(-c // cb)
    full = np.zeros((blocks * cb, kh, kw), w.dtype)
    full[:c] = w[:, 0]
    return np.ascontiguousarray(full.reshape(blocks, cb, kh, kw).transpose(0, 2, 3, 1)[:, None])


TE_CASES = [
    # channels, size (h, w), kernel, stride, padding (top, left, bottom, right), dilation
    (32, (7, 7), 3, 1, (1, 1, 1, 1), 1),
    (40, (7, 7), 5, 1, (2, 2, 2, 2), 1),  # a partial last block
    (24, (14, 14), 5, 2, (2, 2, 2, 2), 1),
    (20, (9, 11), 3, 2, (0, 1, 1, 0), 1),  # odd, non-square, asymmetric padding
    (17, (13, 13), 7, 1, (3, 3, 3, 3), 1),
    (16, (10, 10), 3, 1, (0, 0, 0, 0), 1),  # no padding: the gather is the padded block
    (16, (11, 9), 3, 1, (2, 2, 2, 2), 2),  # dilated
    (48, (5, 5), 3, 2, (1, 1, 1, 1), 1),
]


@pytest.mark.parametrize("target", [AVX512, AVX2])
@pytest.mark.parametrize(("c", "hw", "k", "stride", "pad", "dil"), TE_CASES)
def test_channel_blocks_match_numpy(
    target: str, c: int, hw: tuple[int, int], k: int, stride: int,
    pad: tuple[int, int, int, int], dil: int,
) -> None:  # fmt: skip
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((1, c, *hw)).astype(F32)
    wa = rng.standard_normal((c, 1, k, k)).astype(F32)
    want = np.maximum(_depthwise_np(xa, wa, stride, pad, dil), 0)
    with Target(target):
        cb = 16 if "avx512" in target else 8
        wp = _pack(wa, cb)
        x, w = te.placeholder(xa.shape, F32, "x"), te.placeholder(wp.shape, F32, "w")
        y = topi.nn.relu(topi.nn.depthwise_conv2d_nchw_channels(x, w, stride, pad, dil))
        s = topi.x86.schedule_default(y)
        mod = pytvm.build(s, [x, w, y], target=target, name="dw")
    got = pytvm.nd.empty(want.shape, F32)
    mod["dw"](pytvm.nd.array(xa), pytvm.nd.array(wp), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_channel_blocks_read_only_inside_their_buffers() -> None:
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((2, 21, 6, 5)).astype(F32)
    wa = rng.standard_normal((21, 1, 3, 3)).astype(F32)
    wp = _pack(wa, 8)
    x, w = te.placeholder(xa.shape, F32, "x"), te.placeholder(wp.shape, F32, "w")
    y = topi.nn.depthwise_conv2d_nchw_channels(x, w, 2, (1, 0, 2, 1), 1)
    (got,) = evaluate(y, {x: xa, w: wp})
    want = _depthwise_np(xa, wa, 2, (1, 0, 2, 1), 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_padding_is_an_exact_zero_beside_an_infinite_input() -> None:
    xa = np.zeros((1, 16, 5, 5), F32)
    xa[0, :, 0, 0] = np.inf  # the padding beside it stays 0 (not inf * 0)
    wa = np.ones((16, 1, 3, 3), F32)
    with Target(AVX512):  # dilation 2, padding 1: output (0, 0) reads rows -1, 1, 3
        x = te.placeholder(xa.shape, F32, "x")
        w = te.placeholder((1, 1, 3, 3, 16), F32, "w")
        y = topi.nn.depthwise_conv2d_nchw_channels(x, w, 1, 1, 2)
        mod = pytvm.build(topi.x86.schedule_default(y), [x, w, y], target=AVX512, name="dw")
    got = pytvm.nd.empty((1, 16, 3, 3), F32)
    mod["dw"](pytvm.nd.array(xa), pytvm.nd.array(_pack(wa, 16)), got)
    assert np.all(got.numpy()[0, :, 0, 0] == 0)
    assert np.all(got.numpy()[0, :, 1, 1] == np.inf)


def test_channel_blocks_check_their_kernel() -> None:
    x = te.placeholder((1, 40, 7, 7), F32, "x")
    with pytest.raises(TVMValueError, match="filter shape"):
        topi.nn.depthwise_conv2d_nchw_channels(x, te.placeholder((2, 1, 3, 3, 16), F32), 1, 1, 1)
    with pytest.raises(TVMValueError, match="filter rank"):
        topi.nn.depthwise_conv2d_nchw_channels(x, te.placeholder((40, 1, 3, 3), F32), 1, 1, 1)
    y = topi.nn.depthwise_conv2d_nchw_channels(x, te.placeholder((3, 1, 3, 3, 16), F32), 1, 1, 1)
    assert topi.x86.anchor_tag(y) == "depthwise_conv2d_nchw_channels"


def _workload(
    c: int, size: int, k: int, stride: int, pad: int, dil: int = 1, filters: int | None = None
) -> OpWorkload:
    attrs = {"strides": (stride, stride), "padding": (pad,) * 4, "dilation": (dil, dil),
             "groups": c}  # fmt: skip
    kernel = (filters or c, 1, k, k)
    return OpWorkload("nn.conv2d", (1, c, size, size), kernel, F32, F32, attrs, True)


def test_strategy_takes_channel_blocks_where_rows_waste_lanes() -> None:
    with Target(AVX512):
        for c, size, k, stride in [(1152, 7, 5, 1), (960, 7, 3, 1), (672, 14, 5, 2)]:
            row = select("nn.conv2d", _workload(c, size, k, stride, k // 2))
            assert row.name == "depthwise_conv2d_nchw_channels"
            assert row.weight_layout is not None
            assert row.weight_layout(_workload(c, size, k, stride, k // 2)) == "OIHW16o"
        # Rows of whole vectors, planes too large for a block on the stack, several filters
        # a channel: padded rows.
        for wl in [
            _workload(144, 56, 3, 1, 1),
            _workload(144, 56, 5, 2, 2),
            _workload(480, 14, 3, 1, 1),
            _workload(32, 7, 3, 1, 1, filters=64),
        ]:
            assert select("nn.conv2d", wl).name == "depthwise_conv2d_nchw_rows"


def _graph_conv(
    c: int, hw: tuple[int, int], k: int, stride: int, pad: int, dil: int, wa: np.ndarray
) -> g.IRModule:
    x = g.Var("x", g.TensorType((1, c, *hw), F32))
    conv = g.call("nn.conv2d", x, g.const(wa), strides=(stride, stride), padding=(pad,) * 4,
                  dilation=(dil, dil), groups=c)  # fmt: skip
    bias = g.const(np.linspace(-1, 1, c, dtype=F32))
    body = g.call("nn.relu", g.call("nn.bias_add", conv, bias, axis=1))
    return g.IRModule.from_expr(g.Function([x], body))


GRAPH_CASES = [
    # channels, size, kernel, stride, padding, dilation
    (1152, (7, 7), 5, 1, 2, 1),  # channel blocks
    (200, (7, 7), 5, 1, 2, 1),  # channel blocks, a partial last one
    (72, (14, 14), 5, 2, 2, 1),  # channel blocks, stride 2
    (120, (14, 14), 3, 2, 1, 1),  # rows (a partial block's gather outweighs them)
    (96, (7, 7), 3, 1, 2, 2),  # dilated
    (24, (30, 30), 3, 1, 1, 1),  # rows: the padded block does not fit the stack
]


@pytest.mark.parametrize(("c", "hw", "k", "stride", "pad", "dil"), GRAPH_CASES)
def test_graph_depthwise_matches_numpy(
    c: int, hw: tuple[int, int], k: int, stride: int, pad: int, dil: int
) -> None:
    rng = np.random.default_rng(2)
    wa = rng.standard_normal((c, 1, k, k)).astype(F32)
    lib = g.build(_graph_conv(c, hw, k, stride, pad, dil, wa), target=AVX512)
    m = GraphModule(lib["default"](pytvm.cpu()))
    xa = rng.standard_normal((1, c, *hw)).astype(F32)
    m.set_input(x=xa)
    m.run()
    bias = np.linspace(-1, 1, c, dtype=F32).reshape(1, c, 1, 1)
    want = np.maximum(_depthwise_np(xa, wa, stride, (pad,) * 4, dil) + bias, 0)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)
