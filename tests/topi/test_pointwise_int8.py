"""``topi.nn.conv2d_nchw_pointwise_int8``: 1x1 convolutions of 8-bit codes less their zero
point by an int8 kernel in pixel lanes, equal to a numpy int64 reference; and the strategy
table's choice of it for few input channels.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target
from pytvm.topi.x86.strategy import OpWorkload, select


def _run(dtype: str, zero: int, shape: tuple[int, ...], f: int, target: str = "llvm") -> None:
    rng = np.random.default_rng(shape[1] * f)
    info = np.iinfo(np.dtype(dtype))
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    x[:, :, 0, 0] = info.max if zero < 0 else info.min
    w = rng.integers(-128, 128, (f, shape[1], 1, 1)).astype("int8")
    w[:, :, 0, 0][:, 0] = -128
    shifted = x.astype(np.int64) - zero
    expected = np.einsum("nchw,fc->nfhw", shifted, w[:, :, 0, 0].astype(np.int64)).astype("int32")
    with Target(target):
        data = te.placeholder(x.shape, dtype, "x")
        kernel = te.placeholder(w.shape, "int8", "w")
        out = topi.nn.conv2d_nchw_pointwise_int8(data, kernel, zero)
        fn = pytvm.build(topi.x86.schedule_conv2d_nchw_pointwise(out), [data, kernel, out], target)
    dev = pytvm.cpu()
    y = pytvm.nd.empty(expected.shape, "int32", dev)
    fn(pytvm.nd.array(x, dev), pytvm.nd.array(w, dev), y)
    np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize(
    ("dtype", "zero", "shape", "f"),
    [("uint8", 131, (1, 16, 8, 16), 24), ("int8", -7, (2, 5, 4, 8), 7)],
    ids=["u8", "s8_batch2"],
)
def test_pointwise_int8_matches_reference(
    dtype: str, zero: int, shape: tuple[int, ...], f: int
) -> None:
    _run(dtype, zero, shape, f)


def test_pointwise_int8_past_float32_exactness_accumulates_in_int32() -> None:
    # 600 channels of 255 * -128 pass 2**24
    _run("uint8", 0, (1, 600, 2, 8), 3)


def _selected(channels: int) -> str:
    data = te.placeholder((1, channels, 28, 28), "uint8", "x")
    weight = te.placeholder((64, channels, 1, 1), "int8", "w")
    attrs = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1}
    attrs.update(input_zero_point=128, kernel_zero_point=0, out_dtype="int32")
    with Target("llvm -mcpu=x86-64 -mattr=+avx512f,+avx512bw,+avx512vnni"):
        workload = OpWorkload.of("qnn.conv2d", data, weight, attrs, weight_constant=True)
        return select("qnn.conv2d", workload).name


def test_few_input_channels_take_pixel_lanes() -> None:
    # 16 float32 lanes: fewer than 32 input channels
    assert _selected(24) == "qnn_conv2d_nchw_pointwise"
    assert _selected(32) == "qnn_conv2d_nchw_int8"
