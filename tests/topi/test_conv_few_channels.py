"""Dense convolutions with few output channels on large planes (DBNet's 3x3 96->24 and its
probability head, MobileNet/EfficientNet projections, stems strided along the width, UNet
decoders), odd variants of each: the built graph matches numpy through the LLVM and C
backends and with AVX2's 8-float vectors; stems read their input through its column phases
(``conv2d_nchw_phases``) where that copies fewer values than the packed kernel transposes.
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
from pytvm.topi.x86 import OpWorkload, select

F32 = "float32"
AVX512 = "llvm -mattr=+avx512f"
AVX2 = "c -mattr=+avx2"


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(F32)


def _conv_np(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
    dilation: tuple[int, int] = (1, 1),
) -> np.ndarray:
    top, left, bottom, right = pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    f, _, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], f, oh, ow))
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            out += np.einsum("nchw,fc->nfhw", xp[:, :, rows, cols], w[:, :, i, j])
    return out


def _run_graph(shape: tuple[int, int, int, int], f: int, k: int, stride: int, target: str) -> None:
    pad = k // 2
    w, b, xin = _rand(f, shape[1], k, k, seed=1), _rand(f, seed=2), _rand(*shape, seed=3)
    x = g.Var("x", g.TensorType(shape, F32))
    conv = g.call("nn.conv2d", x, g.const(w), strides=(stride, stride), padding=(pad,) * 4,
                  dilation=(1, 1), groups=1)  # fmt: skip
    body = g.call("nn.relu", g.call("nn.bias_add", conv, g.const(b), axis=1))
    lib = g.build(g.IRModule.from_expr(g.Function([x], body)), target=target)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input(x=xin)
    m.run()
    want = np.maximum(_conv_np(xin, w, (stride,) * 2, (pad,) * 4) + b.reshape(1, f, 1, 1), 0)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)


# (data shape, output channels, kernel, stride)
CASES = [
    ((1, 96, 40, 40), 24, 3, 1),  # DBNet's smoothing conv on a smaller plane
    ((1, 96, 20, 21), 24, 3, 1),  # ... an odd width
    ((1, 32, 48, 48), 1, 3, 1),  # DBNet's probability head: one output channel
    ((1, 64, 40, 40), 32, 3, 1),  # UNet decoder
    ((1, 96, 56, 56), 24, 1, 1),  # MobileNet projections
    ((1, 144, 28, 28), 24, 1, 1),
    ((1, 240, 28, 28), 40, 1, 1),
    ((1, 32, 56, 56), 16, 1, 1),
    ((1, 3, 112, 112), 32, 3, 2),  # stems: column phases
    ((1, 3, 75, 75), 24, 3, 2),  # ... odd size, 24 channels
    ((1, 3, 64, 64), 16, 7, 2),  # ... a 7x7 kernel
    ((1, 5, 33, 41), 7, 3, 2),  # odd everything
    ((1, 8, 20, 45), 1, 3, 1),  # one channel: blocks of two vectors of the row, a tail of 13
    ((1, 16, 12, 100), 3, 3, 1),  # three channels: blocks of three vectors, a tail of 4
]


@pytest.mark.parametrize("target", ["llvm", AVX2])
@pytest.mark.parametrize(("shape", "f", "k", "stride"), CASES)
def test_few_channel_conv_matches_numpy(
    target: str, shape: tuple[int, int, int, int], f: int, k: int, stride: int
) -> None:
    _run_graph(shape, f, k, stride, target)


@pytest.mark.needs_cc
@pytest.mark.parametrize("index", [0, 2, 8, 11])
def test_few_channel_conv_matches_numpy_through_the_c_backend(index: int) -> None:
    _run_graph(*CASES[index], "c")


def test_dbnet_smoothing_conv_at_full_size_matches_numpy() -> None:
    _run_graph((1, 96, 160, 160), 24, 3, 1, "llvm")


def _workload(
    shape: tuple[int, int, int, int], f: int, k: int, stride: int, constant: bool = True
) -> OpWorkload:
    attrs = {"strides": (stride,) * 2, "padding": (k // 2,) * 4, "dilation": (1, 1), "groups": 1}
    return OpWorkload("nn.conv2d", shape, (f, shape[1], k, k), F32, F32, attrs, constant)


@pytest.mark.parametrize("target", [AVX512, AVX2])
def test_stems_read_column_phases_where_the_input_is_the_smaller(target: str) -> None:
    with Target(target):
        for wl in (
            _workload((1, 3, 224, 224), 32, 3, 2),
            _workload((1, 3, 640, 640), 16, 3, 2),
            _workload((1, 3, 224, 224), 64, 7, 2),
            _workload((1, 3, 224, 224), 32, 3, 2, constant=False),
        ):
            assert select("nn.conv2d", wl).name == "conv2d_nchw_phases"
        # more input than output values: the packed kernel's transposition is cheaper
        for wl in (_workload((1, 64, 56, 56), 128, 3, 2), _workload((1, 24, 80, 80), 24, 3, 2)):
            assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"
        # unstrided rows need no phases
        assert select("nn.conv2d", _workload((1, 3, 224, 224), 32, 3, 1)).name != (
            "conv2d_nchw_phases"
        )


@pytest.mark.parametrize("target", [AVX512, AVX2])
def test_a_tie_of_lanes_keeps_the_direct_schedule_for_short_reductions(target: str) -> None:
    with Target(target):  # whole vectors of channels and of the row: a tie
        for wl in (_workload((1, 3, 256, 256), 16, 3, 1), _workload((1, 16, 256, 256), 16, 3, 1)):
            assert select("nn.conv2d", wl).name == "conv2d_nchw"
        # 64 channels x 9 taps: past 32 vectors of either target, the transposition is noise
        wl = _workload((1, 64, 64, 64), 64, 3, 1)
        assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"
        # more lanes in the packed kernel than along rows of 14 still pack
        wl = _workload((1, 16, 14, 14), 64, 3, 1)
        assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"


def test_phases_follow_the_packed_kernel_where_its_channels_fill_more_lanes() -> None:
    with Target(AVX2):  # 24 channels: three whole 8-float vectors; rows of 38 are 4 of 4.75
        wl = _workload((1, 3, 75, 75), 24, 3, 2)
        assert select("nn.conv2d", wl).name == "conv2d_nchw_packed"
    with Target(AVX512):  # 24 of 32 lanes; rows of 38: 32 of 38
        assert select("nn.conv2d", wl).name == "conv2d_nchw_phases"


@pytest.mark.parametrize(
    ("stride", "pad", "dilation"),
    [
        ((2, 2), (1, 1, 1, 1), (1, 1)),
        ((1, 3), (0, 2, 1, 0), (1, 1)),
        ((2, 2), (2, 1, 0, 3), (2, 2)),
        ((3, 4), (1, 0, 2, 1), (1, 1)),  # a kernel narrower than the stride: 3 of 4 phases
    ],
)
def test_column_phases_conv_matches_numpy_for_any_window(
    stride: tuple[int, int], pad: tuple[int, int, int, int], dilation: tuple[int, int]
) -> None:
    xa, wa = _rand(1, 4, 17, 23, seed=5), _rand(6, 4, 3, 3, seed=6)
    with Target("llvm"):
        x = te.placeholder(xa.shape, F32, "x")
        w = te.placeholder(wa.shape, F32, "w")
        out = topi.nn.conv2d_nchw_phases(x, w, stride, pad, dilation)
        mod = pytvm.build(topi.x86.schedule_default([out]), [x, w, out], target="llvm")
    want = _conv_np(xa, wa, stride, pad, dilation)
    got = pytvm.nd.empty(want.shape, F32)
    mod(pytvm.nd.array(xa), pytvm.nd.array(wa), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_x86_conv2d_entry_reads_a_stem_through_column_phases() -> None:
    xa, wa = _rand(1, 3, 32, 32, seed=7), _rand(16, 3, 3, 3, seed=8)
    with Target("llvm"):
        x = te.placeholder(xa.shape, F32, "x")
        w = te.placeholder(wa.shape, F32, "w")
        out = topi.x86.conv2d_nchw(x, w, 2, 1, 1)
        assert out.op.input_tensors[0].op.name == "pad_phases"
        s = topi.x86.schedule_conv2d_nchw([out])
        mod = pytvm.build(s, [x, w, out], target="llvm")
    want = _conv_np(xa, wa, (2, 2), (1, 1, 1, 1))
    got = pytvm.nd.empty(want.shape, F32)
    mod(pytvm.nd.array(xa), pytvm.nd.array(wa), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_column_phases_of_a_one_column_kernel_are_one_phase() -> None:
    x = te.placeholder((1, 4, 9, 9), F32, "x")
    w = te.placeholder((16, 4, 1, 1), F32, "w")
    out = topi.nn.conv2d_nchw_phases(x, w, 2, 0, 1)
    phases = out.op.input_tensors[0]
    assert [str(d) for d in out.shape] == ["1", "16", "5", "5"]
    assert [str(d) for d in phases.shape] == ["1", "4", "9", "1", "5"]


def test_column_phases_conv_rejects_a_kernel_of_other_input_channels() -> None:
    x = te.placeholder((1, 4, 9, 9), F32, "x")
    w = te.placeholder((8, 3, 3, 3), F32, "w")
    with pytest.raises(TVMValueError, match="input channels"):
        topi.nn.conv2d_nchw_phases(x, w, 2, 1, 1)
