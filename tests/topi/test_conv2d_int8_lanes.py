"""``topi.nn.conv2d_nchw_phases_int8``: width-strided convolutions of 8-bit codes less their
zero point in float32 pixel lanes over column phases, equal to a numpy int64 reference (the
data padded with its zero point); and the strategy table's choice of it for stems.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target
from pytvm.topi.x86.strategy import OpWorkload, select


def _reference(x: np.ndarray, w: np.ndarray, zero: int, stride: int, pad: int) -> np.ndarray:
    x = np.pad(x.astype(np.int64) - zero, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _, _, kh, kw = w.shape
    oh, ow = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.int64))
    return out.astype(np.int32)


@pytest.mark.parametrize(
    ("dtype", "zero", "shape", "f", "k"),
    [("uint8", 120, (1, 3, 20, 20), 16, 3), ("int8", -4, (1, 2, 15, 17), 5, 5)],
    ids=["u8_stem", "s8_5x5_odd"],
)
def test_phases_int8_matches_reference(
    dtype: str, zero: int, shape: tuple[int, ...], f: int, k: int
) -> None:
    rng = np.random.default_rng(f + k)
    info = np.iinfo(np.dtype(dtype))
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    x[:, :, 1, :] = info.min
    w = rng.integers(-128, 128, (f, shape[1], k, k)).astype("int8")
    w[:, 0, 0, 0] = -128
    expected = _reference(x, w, zero, 2, k // 2)
    with Target("llvm"):
        data = te.placeholder(x.shape, dtype, "x")
        kernel = te.placeholder(w.shape, "int8", "w")
        out = topi.nn.conv2d_nchw_phases_int8(data, kernel, 2, k // 2, 1, zero)
        fn = pytvm.build(topi.x86.schedule_conv2d_nchw(out), [data, kernel, out], "llvm")
    dev = pytvm.cpu()
    y = pytvm.nd.empty(expected.shape, "int32", dev)
    fn(pytvm.nd.array(x, dev), pytvm.nd.array(w, dev), y)
    np.testing.assert_array_equal(y.numpy(), expected)


def test_stem_takes_phases_in_float_lanes() -> None:
    data = te.placeholder((1, 3, 224, 224), "uint8", "x")
    weight = te.placeholder((32, 3, 3, 3), "int8", "w")
    attrs = {"strides": (2, 2), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1}
    attrs.update(input_zero_point=128, kernel_zero_point=0, out_dtype="int32")
    with Target("llvm -mcpu=x86-64 -mattr=+avx512f,+avx512bw,+avx512vnni"):
        workload = OpWorkload.of("qnn.conv2d", data, weight, attrs, weight_constant=True)
        assert select("qnn.conv2d", workload).name == "qnn_conv2d_nchw_phases"
