"""``topi.nn.conv2d_nchw_int8`` (8-bit dot products, int32 accumulation) is bit-exact with a
numpy int64 reference on the LLVM and C paths, with and without the VNNI instruction.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target


def _reference(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    x = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _, _, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.int64))
    return out.astype(np.int32)


def _run(
    target: str, c: int, f: int, size: int, k: int, stride: int, pad: int, dot: bool = True
) -> None:
    rng = np.random.default_rng(c * 100 + f)
    x = rng.integers(0, 256, (1, c, size, size)).astype("uint8")
    w = rng.integers(-128, 128, (f, c, k, k)).astype("int8")
    x[0, 0, 0, :] = 255  # extremes: 255 * -128 products, summed
    w[:, 0] = -128
    with Target(target):
        fb = topi.x86.conv2d_channel_block(f, "int32")
        assert fb is not None
        packed = topi.nn.conv2d_int8_kernel_pack(w, fb)
        data = te.placeholder(x.shape, "uint8", "x")
        kernel = te.placeholder(packed.shape, "int32", "w")
        out = topi.nn.conv2d_nchw_int8(data, kernel, stride, pad, 1, f, dot)
        fn = pytvm.build(topi.x86.schedule_conv2d_nchw_int8(out), [data, kernel, out], target)
    dev = pytvm.cpu()
    expected = _reference(x, w, stride, pad)
    y = pytvm.nd.empty(expected.shape, "int32", dev)
    fn(pytvm.nd.array(x, dev), pytvm.nd.array(packed, dev), y)
    np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize(
    ("c", "f", "size", "k", "stride", "pad"),
    [
        (64, 64, 12, 3, 1, 1),
        (3, 17, 9, 3, 2, 1),
        (5, 20, 7, 1, 1, 0),
        (17, 33, 8, 3, 1, 0),
        (40, 70, 1, 1, 1, 0),  # one output pixel: several channel blocks a register tile
        (9, 48, 3, 3, 1, 0),
    ],
)
def test_conv2d_int8_matches_reference_llvm(
    c: int, f: int, size: int, k: int, stride: int, pad: int
) -> None:
    _run("llvm", c, f, size, k, stride, pad)


@pytest.mark.needs_cc
def test_conv2d_int8_matches_reference_c() -> None:
    _run("c", 6, 20, 7, 3, 1, 1)


def test_conv2d_int8_without_vnni_portable_llvm() -> None:
    # 8 int32 lanes (AVX2), no dot-product instruction: the same sum in plain arithmetic
    _run("llvm -mattr=+avx2,-avx512f,-avx512vnni,-avxvnni", 8, 16, 6, 3, 1, 1, dot=False)


def test_vnni_lanes_follow_target_features() -> None:
    with Target("llvm -mcpu=x86-64 -mattr=+avx2"):
        assert topi.x86.vnni_lanes() is None
    with Target("llvm -mcpu=x86-64 -mattr=+avx512f,+avx512bw,+avx512vnni"):
        assert topi.x86.vnni_lanes() == 16
    with Target("llvm -mcpu=x86-64 -mattr=+avx2,+avxvnni"):
        assert topi.x86.vnni_lanes() == 8


def test_kernel_pack_puts_four_channels_in_a_word() -> None:
    w = np.arange(-8, 8, dtype="int8").reshape(2, 8, 1, 1)
    packed = topi.nn.conv2d_int8_kernel_pack(w, 2)
    as_bytes = packed.view("int8").reshape(1, 2, 1, 1, 2, 4)
    np.testing.assert_array_equal(as_bytes[0, 1, 0, 0, 1], w[1, 4:8, 0, 0])


def _run_zero_point(target: str, dtype: str, zero: int, dot: bool, plain: bool) -> None:
    rng = np.random.default_rng(zero & 0xFF)
    info = np.iinfo(np.dtype(dtype))
    x = rng.integers(info.min, info.max + 1, (1, 7, 6, 6)).astype(dtype)
    w = rng.integers(-128, 128, (18, 7, 3, 3)).astype("int8")
    shifted = x.astype(np.int64) - zero
    expected = _reference(shifted, w, 1, 1)  # zeros of (x - zero): x padded with zero
    with Target(target):
        fb = topi.x86.conv2d_channel_block(18, "int32")
        assert fb is not None
        weight = w if plain else topi.nn.conv2d_int8_kernel_pack(w, fb)
        data = te.placeholder(x.shape, dtype, "x")
        kernel = te.placeholder(weight.shape, str(weight.dtype), "w")
        out = topi.nn.conv2d_nchw_int8(data, kernel, 1, 1, 1, 18, dot, zero_point=zero)
        fn = pytvm.build(topi.x86.schedule_conv2d_nchw_int8(out), [data, kernel, out], target)
    dev = pytvm.cpu()
    y = pytvm.nd.empty(expected.shape, "int32", dev)
    fn(pytvm.nd.array(x, dev), pytvm.nd.array(weight, dev), y)
    np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize(
    ("dtype", "zero", "dot", "plain"),
    [("uint8", 131, True, False), ("int8", -5, True, True), ("int8", 100, False, False)],
    ids=["u8_zp_packed", "s8_zp_plain_weight", "s8_zp_portable"],
)
def test_conv2d_int8_subtracts_zero_point_and_pads_with_it(
    dtype: str, zero: int, dot: bool, plain: bool
) -> None:
    target = "llvm" if dot else "llvm -mattr=+avx2,-avx512f,-avx512vnni,-avxvnni"
    _run_zero_point(target, dtype, zero, dot, plain)


def test_vnni_lanes_of_named_cpus() -> None:
    # from Target.features: CPUs newer than the C compiler included
    expected = {"znver3": None, "haswell": None, "znver4": 16, "icelake-server": 16}
    for cpu, lanes in expected.items():
        with Target(f"llvm -mcpu={cpu}"):
            assert topi.x86.vnni_lanes() == lanes, cpu
