"""``conv2d_nchw_packed`` (kernel in output-channel blocks), ``conv2d_nchw_pointwise`` (1x1 as a
product over pixels) and their CPU schedules, against numpy on awkward shapes: widths that are
not a vector multiple, strides, padding, dilation.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.op.layout import layout_transform_np
from pytvm.target import Target

F32 = "float32"


def _conv_np(
    x: np.ndarray, w: np.ndarray, stride: int, pad: tuple[int, int, int, int], dil: int
) -> np.ndarray:
    top, left, bottom, right = pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    f, _, kh, kw = w.shape
    oh = (xp.shape[2] - dil * (kh - 1) - 1) // stride + 1
    ow = (xp.shape[3] - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((x.shape[0], f, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[
                :,
                :,
                i * dil : i * dil + stride * oh : stride,
                j * dil : j * dil + stride * ow : stride,
            ]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


def _run(
    shape: tuple[int, int, int, int],
    f: int,
    k: int,
    stride: int,
    pad: tuple[int, int, int, int],
    dil: int,
    fb: int,
) -> None:
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(shape).astype(F32)
    wa = rng.standard_normal((f, shape[1], k, k)).astype(F32)
    ba = rng.standard_normal((f, 1, 1)).astype(F32)
    with Target("llvm"):
        x = te.placeholder(shape, F32, "x")
        w = te.placeholder((f // fb, shape[1], k, k, fb), F32, "w")
        b = te.placeholder((f, 1, 1), F32, "b")
        out = topi.nn.relu(topi.add(topi.nn.conv2d_nchw_packed(x, w, stride, pad, dil), b))
        s = topi.x86.schedule_default([out])
        mod = pytvm.build(s, [x, w, b, out], target="llvm", name="conv")
    want = np.maximum(_conv_np(xa, wa, stride, pad, dil) + ba, 0)
    got = pytvm.nd.empty(want.shape, F32)
    packed = layout_transform_np(wa, "OIHW", f"OIHW{fb}o")
    mod["conv"](pytvm.nd.array(xa), pytvm.nd.array(packed), pytvm.nd.array(ba), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("shape", "f", "k", "stride", "pad", "dil", "fb"),
    [
        ((1, 16, 7, 7), 32, 3, 1, (1, 1, 1, 1), 1, 32),  # 7 columns: a block is a row
        ((1, 3, 13, 13), 16, 3, 2, (1, 1, 1, 1), 1, 16),  # stride 2, 3 input channels
        ((1, 16, 13, 13), 16, 3, 1, (1, 1, 1, 1), 1, 16),  # a prime width
        ((1, 24, 14, 14), 48, 1, 1, (0, 0, 0, 0), 1, 16),  # pointwise, 24 channels
        ((1, 8, 56, 56), 16, 3, 1, (1, 1, 1, 1), 1, 16),  # wide rows: several column blocks
        ((2, 5, 11, 9), 16, 3, 1, (2, 0, 1, 3), 2, 8),  # batch 2, uneven padding, dilation
        ((1, 16, 1, 1), 1000, 1, 1, (0, 0, 0, 0), 1, 8),  # 1000 output channels, 1 pixel
    ],
)
def test_packed_conv_matches_numpy(
    shape: tuple[int, int, int, int],
    f: int,
    k: int,
    stride: int,
    pad: tuple[int, int, int, int],
    dil: int,
    fb: int,
) -> None:
    _run(shape, f, k, stride, pad, dil, fb)


def test_packed_conv_schedule_is_the_anchor_of_its_group() -> None:
    x = te.placeholder((1, 4, 8, 8), F32, "x")
    w = te.placeholder((2, 4, 3, 3, 8), F32, "w")
    y = topi.nn.relu(topi.nn.conv2d_nchw_packed(x, w, 1, 1, 1))
    assert topi.x86.anchor_tag(y) == "conv2d_nchw_packed"
    assert [str(d) for d in y.shape] == ["1", "16", "8", "8"]


def test_packed_conv_rejects_a_kernel_of_other_channels() -> None:
    x = te.placeholder((1, 4, 8, 8), F32, "x")
    w = te.placeholder((2, 3, 3, 3, 8), F32, "w")
    with pytest.raises(TVMValueError, match="input channels"):
        topi.nn.conv2d_nchw_packed(x, w, 1, 1, 1)


def test_channel_block_is_two_vectors_else_one_whichever_pads_less() -> None:
    with Target("c -mattr=+avx512f"):
        assert topi.x86.conv2d_channel_block(64, F32) == 32
        assert topi.x86.conv2d_channel_block(48, F32) == 16
        assert topi.x86.conv2d_channel_block(24, F32) == 32  # one padded block of two vectors
        assert topi.x86.conv2d_channel_block(1000, F32) == 16  # 1008 channels, not 1024
    with Target("c -mattr=+avx2"):
        assert topi.x86.conv2d_channel_block(24, F32) == 8
        assert topi.x86.conv2d_channel_block(1000, F32) == 8
        assert topi.x86.conv2d_channel_block(3, F32) == 8


def test_register_block_fits_the_target_registers() -> None:
    with Target("c -mattr=+avx512f"):  # 32 registers of 16 floats: 20 accumulators
        assert topi.x86.conv2d_packed_block(32, 7, 7, F32) == (1, 7)
        assert topi.x86.conv2d_packed_block(16, 4, 4, F32) == (4, 4)
        rows, wb = topi.x86.conv2d_packed_block(32, 56, 56, F32)
        assert rows == 1 and 7 <= wb <= 10  # whole blocks, or a tail no narrower than 6
        assert topi.x86.conv2d_packed_block(32, 13, 13, F32) == (1, 7)  # 7 + a tail of 6
    for target in ("c -mattr=+avx2", "llvm -mcpu=znver3"):  # 16 registers: 10 accumulators
        with Target(target):
            for fb, vectors in ((16, 2), (8, 1)):
                for width in (7, 14, 56, 80):
                    rows, wb = topi.x86.conv2d_packed_block(fb, width, width, F32)
                    assert rows * wb * vectors <= 10  # 12 spilled: half the speed
            assert topi.x86.conv2d_packed_block(16, 56, 56, F32) == (1, 5)
            assert topi.x86.conv2d_packed_block(8, 80, 80, F32) == (1, 10)


def test_layout_transform_matches_numpy_both_ways() -> None:
    rng = np.random.default_rng(1)
    wa = rng.standard_normal((20, 3, 2, 2)).astype(F32)
    w = te.placeholder(wa.shape, F32, "w")
    packed = topi.layout_transform(w, "OIHW", "OIHW8o")  # 20 = 2.5 blocks: zero-padded
    back = topi.layout_transform(packed, "OIHW8o", "IHWO")
    s = te.create_schedule([packed.op, back.op])
    mod = pytvm.build(s, [w, packed, back], target="llvm", name="pack")
    got_p = pytvm.nd.empty((3, 3, 2, 2, 8), F32)
    got_b = pytvm.nd.empty((3, 2, 2, 24), F32)
    mod["pack"](pytvm.nd.array(wa), got_p, got_b)
    want = np.pad(wa, ((0, 4), (0, 0), (0, 0), (0, 0))).reshape(3, 8, 3, 2, 2)
    np.testing.assert_array_equal(got_p.numpy(), want.transpose(0, 2, 3, 4, 1))
    np.testing.assert_array_equal(layout_transform_np(wa, "OIHW", "OIHW8o"), got_p.numpy())
    np.testing.assert_array_equal(got_b.numpy()[..., :20], wa.transpose(1, 2, 3, 0))
    np.testing.assert_array_equal(
        layout_transform_np(got_p.numpy(), "OIHW8o", "IHWO"), got_b.numpy()
    )


@pytest.mark.parametrize("layout", ["OIHW16", "OIHWo", "OIHW16x", "OIHO", "oIHW"])
def test_layout_strings_are_checked(layout: str) -> None:
    with pytest.raises(TVMValueError, match="layout"):
        topi.layout_axes(layout)


@pytest.mark.parametrize(
    ("shape", "f"), [((1, 24, 8, 8), 48), ((2, 3, 4, 12), 20), ((1, 5, 16, 1), 7)]
)
def test_pointwise_conv_matches_numpy(shape: tuple[int, int, int, int], f: int) -> None:
    rng = np.random.default_rng(2)
    xa = rng.standard_normal(shape).astype(F32)
    wa = rng.standard_normal((f, shape[1], 1, 1)).astype(F32)
    ra = rng.standard_normal((shape[0], f, *shape[2:])).astype(F32)
    with Target("llvm"):
        x, w = te.placeholder(shape, F32, "x"), te.placeholder(wa.shape, F32, "w")
        r = te.placeholder(ra.shape, F32, "r")
        out = topi.nn.relu(topi.add(topi.nn.conv2d_nchw_pointwise(x, w), r))  # residual add
        assert topi.x86.anchor_tag(out) == "conv2d_nchw_pointwise"
        mod = pytvm.build(topi.x86.schedule_default(out), [x, w, r, out], target="llvm", name="pw")
    want = np.maximum(_conv_np(xa, wa, 1, (0, 0, 0, 0), 1) + ra, 0)
    got = pytvm.nd.empty(want.shape, F32)
    mod["pw"](pytvm.nd.array(xa), pytvm.nd.array(wa), pytvm.nd.array(ra), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_pointwise_applies_to_1x1_convs_on_planes_of_whole_vectors() -> None:
    with Target("c -mattr=+avx512f"):
        ok = topi.x86.conv2d_pointwise_applies
        assert ok((1, 8, 28, 28), (16, 8, 1, 1), (1, 1), (0, 0, 0, 0), 1, F32)
        assert not ok((1, 8, 14, 14), (16, 8, 1, 1), (1, 1), (0, 0, 0, 0), 1, F32)  # 196 pixels
        assert not ok((1, 8, 28, 28), (16, 8, 1, 1), (2, 2), (0, 0, 0, 0), 1, F32)
        assert not ok((1, 8, 28, 28), (16, 8, 3, 3), (1, 1), (1, 1, 1, 1), 1, F32)
    with pytest.raises(TVMValueError, match="kernel shape"):
        topi.nn.conv2d_nchw_pointwise(
            te.placeholder((1, 4, 4, 4), F32, "x"), te.placeholder((8, 4, 3, 3), F32, "w")
        )
