"""The int8 depthwise convolution of one-lane targets and the one of a single group
(``topi.cortex_m.depthwise_int8``): int32 multiply-accumulates over data padded with the zero
point, less ``zero_point * sum(w)``, matching numpy on the host (uint8 and int8 data, strides,
asymmetric and no padding, a keyword-spotting stem), and the strategy rows that take them on a
Cortex-M but not on a vector CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.driver.source_build import compile_for_host
from pytvm.ffi.errors import TVMValueError
from pytvm.runtime.source_module import SourceModule
from pytvm.target import Target
from pytvm.topi.cortex_m import (
    conv2d_nchw_int8_one_lane,
    depthwise_conv2d_nchw_int8_one_lane,
    schedule_depthwise_conv2d_nchw_int8_one_lane,
)
from pytvm.topi.x86.strategy import OpWorkload, select

M4 = Target("c -mcpu=cortex-m4")
Pad = tuple[int, int, int, int]

# (data dtype, zero point, channels, height, width, kernel, stride, (top, left, bottom, right))
CASES: dict[str, tuple[str, int, int, int, int, int, int, Pad]] = {
    "int8_kws_row": ("int8", -128, 5, 25, 5, 3, 1, (1, 1, 1, 1)),
    "uint8_stride2": ("uint8", 131, 3, 11, 9, 3, 2, (1, 1, 1, 1)),
    "int8_unpadded_zero_point_0": ("int8", 0, 4, 7, 8, 3, 1, (0, 0, 0, 0)),
    "uint8_stride2_bottom_right": ("uint8", 7, 2, 12, 13, 3, 2, (0, 0, 1, 1)),
    "int8_5x5": ("int8", 9, 3, 10, 10, 5, 1, (2, 2, 2, 2)),
}


def _reference(x: np.ndarray, w: np.ndarray, zp: int, stride: int, pad: Pad) -> np.ndarray:
    top, left, bottom, right = pad
    xs = np.pad(x.astype(np.int64) - zp, ((0, 0), (0, 0), (top, bottom), (left, right)))
    _, _, kh, kw = w.shape
    oh = (xs.shape[2] - kh) // stride + 1
    ow = (xs.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xs[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += patch * w[None, :, 0, i, j, None, None].astype(np.int64)
    return out.astype(np.int32)


@pytest.mark.parametrize("case", list(CASES))
def test_depthwise_int8_one_lane_matches_numpy_on_the_host(case: str) -> None:
    dtype, zp, c, h, wd, k, stride, pad = CASES[case]
    rng = np.random.default_rng(len(case))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (1, c, h, wd)).astype(dtype)
    w = rng.integers(-128, 128, (c, 1, k, k)).astype("int8")
    with M4:
        data = te.placeholder(x.shape, dtype, name="x")
        kern = te.placeholder(w.shape, "int8", name="w")
        out = depthwise_conv2d_nchw_int8_one_lane(data, kern, stride, pad, 1, zp)
        s = schedule_depthwise_conv2d_nchw_int8_one_lane(out)
        mod = pytvm.build(s, [data, kern, out], target=M4, name=case)
    assert isinstance(mod, SourceModule)
    source = mod.get_source()
    assert "(float)" not in source and "float*" not in source  # integer arithmetic only
    want = _reference(x, w, zp, stride, pad)
    got = pytvm.nd.empty(want.shape, "int32")
    compile_for_host(mod)[case](pytvm.nd.array(x), pytvm.nd.array(w), got)
    np.testing.assert_array_equal(got.numpy(), want)


# (data dtype, zero point, C, F, height, width, (KH, KW), stride, (top, left, bottom, right))
GROUP_CASES: dict[str, tuple[str, int, int, int, int, int, tuple[int, int], int, Pad]] = {
    "int8_kws_stem_10x4": ("int8", 10, 1, 6, 49, 10, (10, 4), 2, (4, 1, 5, 1)),
    "uint8_rgb_3x3_stride2": ("uint8", 128, 3, 5, 14, 11, (3, 3), 2, (0, 0, 1, 1)),
    "int8_two_channels_unpadded": ("int8", 0, 2, 3, 7, 9, (3, 3), 1, (0, 0, 0, 0)),
}


def _reference_groups(x: np.ndarray, w: np.ndarray, zp: int, stride: int, pad: Pad) -> np.ndarray:
    top, left, bottom, right = pad
    xs = np.pad(x.astype(np.int64) - zp, ((0, 0), (0, 0), (top, bottom), (left, right)))
    _, _, kh, kw = w.shape
    oh = (xs.shape[2] - kh) // stride + 1
    ow = (xs.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xs[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.int64))
    return out.astype(np.int32)


@pytest.mark.parametrize("case", list(GROUP_CASES))
def test_conv2d_int8_one_lane_matches_numpy_on_the_host(case: str) -> None:
    dtype, zp, c, f, h, wd, (kh, kw), stride, pad = GROUP_CASES[case]
    rng = np.random.default_rng(len(case))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (1, c, h, wd)).astype(dtype)
    w = rng.integers(-128, 128, (f, c, kh, kw)).astype("int8")
    with M4:
        data = te.placeholder(x.shape, dtype, name="x")
        kern = te.placeholder(w.shape, "int8", name="w")
        out = conv2d_nchw_int8_one_lane(data, kern, stride, pad, 1, zp)
        s = schedule_depthwise_conv2d_nchw_int8_one_lane(out)
        mod = pytvm.build(s, [data, kern, out], target=M4, name=case)
    assert isinstance(mod, SourceModule)
    want = _reference_groups(x, w, zp, stride, pad)
    got = pytvm.nd.empty(want.shape, "int32")
    compile_for_host(mod)[case](pytvm.nd.array(x), pytvm.nd.array(w), got)
    np.testing.assert_array_equal(got.numpy(), want)


def test_depthwise_int8_one_lane_rejects_bad_operands() -> None:
    x = te.placeholder((1, 4, 8, 8), "int8", name="x")
    with pytest.raises(TVMValueError, match="one filter per channel"):
        depthwise_conv2d_nchw_int8_one_lane(
            x, te.placeholder((8, 1, 3, 3), "int8", name="w"), 1, 1, 1
        )
    with pytest.raises(TVMValueError, match="all input channels"):
        conv2d_nchw_int8_one_lane(x, te.placeholder((8, 2, 3, 3), "int8", name="w"), 1, 1, 1)
    with pytest.raises(TVMValueError, match="zero_point"):
        depthwise_conv2d_nchw_int8_one_lane(
            x, te.placeholder((4, 1, 3, 3), "int8", name="w"), 1, 1, 1, 200
        )


def _depthwise_workload(channels: int = 16) -> OpWorkload:
    attrs = {
        "strides": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": channels,
        "input_zero_point": -3, "kernel_zero_point": 0, "out_dtype": "int32",
    }  # fmt: skip
    return OpWorkload(
        "qnn.conv2d", (1, channels, 12, 12), (channels, 1, 3, 3), "int8", "int8",
        attrs, weight_constant=True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("target", "one_lane"),
    [
        ("c -mcpu=cortex-m4", True),
        ("c -mcpu=cortex-m0", True),
        ("llvm -mcpu=haswell", False),
    ],
)
def test_strategy_takes_the_one_lane_depthwise_row_on_one_lane_targets(
    target: str, one_lane: bool
) -> None:
    with Target(target):
        picked = select("qnn.conv2d", _depthwise_workload())
    assert (picked.name == "qnn_depthwise_conv2d_nchw_int8_one_lane") is one_lane
