"""``topi.nn.depthwise_conv2d_nchw_int8``: depthwise convolutions of 8-bit codes less their zero
point by int8 taps, over padded row planes or channel blocks, equal to a numpy int64 reference
(the data padded with its zero point), in float32 lanes while exact and in int32 past that.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target


def _reference(x: np.ndarray, w: np.ndarray, zero: int, stride: int, pad: int) -> np.ndarray:
    """``w``: ``[C, M, KH, KW]``; output channel ``c * M + m``."""
    x = np.pad(x.astype(np.int64) - zero, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    c, mult, kh, kw = w.shape
    oh, ow = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], c, mult, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += patch[:, :, None] * w[None, :, :, i, j, None, None].astype(np.int64)
    return out.reshape(x.shape[0], c * mult, oh, ow).astype(np.int32)


def _blocks(w: np.ndarray, cb: int) -> np.ndarray:
    """``[C, 1, KH, KW]`` as channel blocks ``[ceil(C / cb), 1, KH, KW, cb]`` (zero past C)."""
    c = w.shape[0]
    padded = np.concatenate([w, np.zeros((-c % cb, *w.shape[1:]), w.dtype)])
    return np.ascontiguousarray(padded.reshape(-1, cb, *w.shape[1:]).transpose(0, 2, 3, 4, 1))


def _run(
    dtype: str, zero: int, shape: tuple[int, ...], k: int, stride: int, mult: int = 1, **kw: Any
) -> None:
    target, blocks = kw.get("target", "llvm"), kw.get("blocks")
    rng = np.random.default_rng(shape[1] + k)
    info = np.iinfo(np.dtype(dtype))
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    x[0, :, 0, :] = info.max if zero < 0 else info.min  # extremes against -128 taps
    w = rng.integers(-128, 128, (shape[1], mult, k, k)).astype("int8")
    w[:, :, 0, 0] = -128
    pad = k // 2
    expected = _reference(x, w, zero, stride, pad)
    weight = w if blocks is None else _blocks(w, blocks)
    with Target(target):
        data = te.placeholder(x.shape, dtype, "x")
        kernel = te.placeholder(weight.shape, "int8", "w")
        out = topi.nn.depthwise_conv2d_nchw_int8(data, kernel, stride, pad, 1, zero)
        sched = (
            topi.x86.schedule_depthwise_conv2d_nchw_rows
            if blocks is None
            else topi.x86.schedule_depthwise_conv2d_nchw_channels
        )
        fn = pytvm.build(sched(out), [data, kernel, out], target)
    dev = pytvm.cpu()
    y = pytvm.nd.empty(expected.shape, "int32", dev)
    fn(pytvm.nd.array(x, dev), pytvm.nd.array(weight, dev), y)
    np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize(
    ("dtype", "zero", "shape", "k", "stride", "mult"),
    [
        ("uint8", 131, (1, 5, 13, 13), 3, 1, 1),
        ("int8", -5, (1, 6, 14, 14), 5, 2, 1),
        ("uint8", 0, (2, 3, 9, 16), 3, 2, 2),
    ],
    ids=["u8_3x3", "s8_5x5_stride2", "u8_multiplier2"],
)
def test_depthwise_int8_rows_match_reference(
    dtype: str, zero: int, shape: tuple[int, ...], k: int, stride: int, mult: int
) -> None:
    _run(dtype, zero, shape, k, stride, mult)


@pytest.mark.parametrize(("shape", "k", "stride"), [((1, 20, 7, 7), 3, 1), ((1, 17, 10, 10), 5, 2)])
def test_depthwise_int8_channel_blocks_match_reference(
    shape: tuple[int, ...], k: int, stride: int
) -> None:
    _run("uint8", 100, shape, k, stride, blocks=16)


def test_depthwise_int8_large_kernel_accumulates_in_int32() -> None:
    # 23 x 23 taps of 255 * -128 pass 2**24: float32 lanes would round
    assert topi.nn.depthwise_int8_accumulator("uint8", 0, 23 * 23) == "int32"
    assert topi.nn.depthwise_int8_accumulator("int8", 0, 9) == "float32"
    _run("uint8", 0, (1, 2, 24, 24), 23, 1)


@pytest.mark.needs_cc
def test_depthwise_int8_rows_match_reference_c() -> None:
    _run("uint8", 77, (1, 4, 8, 8), 3, 1, target="c")


def test_depthwise_int8_refuses_float_data() -> None:
    data = te.placeholder((1, 4, 8, 8), "float32", "x")
    kernel = te.placeholder((4, 1, 3, 3), "int8", "w")
    with pytest.raises(ValueError, match="uint8 or int8 data"):
        topi.nn.depthwise_conv2d_nchw_int8(data, kernel, 1, 1, 1)


def test_depthwise_int8_rows_without_avx512() -> None:
    # 8 float32 lanes (AVX2: no 8-bit dot products either)
    _run("uint8", 30, (1, 3, 11, 11), 3, 1, target="llvm -mcpu=haswell")
