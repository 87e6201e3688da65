"""``depthwise_conv2d_nchw_rows`` (depthwise convolution over padded row planes) and its CPU
schedule, against numpy on awkward shapes; the bounds-checking evaluator confirms every read of
the padded plane stays inside it.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target
from pytvm.testing.te_eval import evaluate

F32 = "float32"


def _depthwise_np(
    x: np.ndarray, w: np.ndarray, stride: tuple[int, int], pad: tuple[int, ...], dil: int
) -> np.ndarray:
    top, left, bottom, right = pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    c, mult, kh, kw = w.shape
    sh, sw = stride
    oh = (xp.shape[2] - dil * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dil * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], c * mult, oh, ow))
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dil, i * dil + sh * oh, sh)
            cols = slice(j * dil, j * dil + sw * ow, sw)
            patch = np.repeat(xp[:, :, rows, cols], mult, axis=1)
            out += patch * w[:, :, i, j].reshape(1, c * mult, 1, 1)
    return out


CASES = [
    # shape, multiplier, kernel, stride, padding, dilation
    ((1, 4, 7, 7), 1, 3, (1, 1), (1, 1, 1, 1), 1),
    ((1, 3, 13, 13), 1, 3, (2, 2), (1, 1, 1, 1), 1),
    ((1, 8, 14, 14), 1, 3, (1, 1), (1, 1, 1, 1), 1),
    ((1, 2, 56, 56), 1, 3, (2, 2), (0, 0, 1, 1), 1),
    ((2, 3, 12, 10), 2, 3, (1, 2), (2, 1, 0, 2), 2),
    ((1, 2, 9, 16), 1, 5, (1, 1), (2, 2, 2, 2), 1),
]


@pytest.mark.parametrize(("shape", "mult", "k", "stride", "pad", "dil"), CASES)
def test_compiled_depthwise_rows_match_numpy(
    shape: tuple[int, int, int, int],
    mult: int,
    k: int,
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
    dil: int,
) -> None:
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(shape).astype(F32)
    wa = rng.standard_normal((shape[1], mult, k, k)).astype(F32)
    want = np.maximum(_depthwise_np(xa, wa, stride, pad, dil), 0)
    with Target("llvm"):
        x, w = te.placeholder(shape, F32, "x"), te.placeholder(wa.shape, F32, "w")
        y = topi.nn.relu(topi.nn.depthwise_conv2d_nchw_rows(x, w, stride, pad, dil))
        s = topi.x86.schedule_default(y)
        mod = pytvm.build(s, [x, w, y], target="llvm", name="dw")
    got = pytvm.nd.empty(want.shape, F32)
    mod["dw"](pytvm.nd.array(xa), pytvm.nd.array(wa), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("shape", "mult", "k", "stride", "pad", "dil"), CASES[:5])
def test_padded_plane_reads_stay_in_bounds(
    shape: tuple[int, int, int, int],
    mult: int,
    k: int,
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
    dil: int,
) -> None:
    rng = np.random.default_rng(1)
    xa = rng.standard_normal(shape).astype(F32)
    wa = rng.standard_normal((shape[1], mult, k, k)).astype(F32)
    x, w = te.placeholder(shape, F32, "x"), te.placeholder(wa.shape, F32, "w")
    (got,) = evaluate(topi.nn.depthwise_conv2d_nchw_rows(x, w, stride, pad, dil), {x: xa, w: wa})
    np.testing.assert_allclose(got, _depthwise_np(xa, wa, stride, pad, dil), rtol=1e-5, atol=1e-5)


def test_depthwise_rows_is_the_anchor_and_checks_its_arguments() -> None:
    x = te.placeholder((1, 4, 8, 8), F32, "x")
    y = topi.nn.depthwise_conv2d_nchw_rows(x, te.placeholder((4, 1, 3, 3), F32, "w"), 1, 1, 1)
    assert topi.x86.anchor_tag(y) == "depthwise_conv2d_nchw_rows"
    with pytest.raises(TVMValueError, match="filter channels"):
        topi.nn.depthwise_conv2d_nchw_rows(x, te.placeholder((3, 1, 3, 3), F32, "w"), 1, 1, 1)
    with pytest.raises(TVMValueError, match="padding"):
        topi.nn.depthwise_conv2d_nchw_rows(x, te.placeholder((4, 1, 3, 3), F32, "w"), 1, 9, 1)
