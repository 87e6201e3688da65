"""depth_to_space, space_to_depth, space_to_batch_nd, batch_to_space_nd, dilate and
vision.reorg against numpy rearrangements.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError


def _run(out_t: Any, inp: Any, x: np.ndarray) -> np.ndarray:
    f = tvm.build(te.create_schedule(out_t.op), [inp, out_t], "llvm")
    out = tvm.nd.array(np.zeros([int(d) for d in out_t.shape], out_t.dtype))
    f(tvm.nd.array(x), out)
    return out.numpy()


@pytest.mark.parametrize("mode", ["DCR", "CDR", "CRD"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_depth_to_space_and_back(mode: str, layout: str) -> None:
    n, c, h, w, b = 1, 8, 3, 2, 2
    x = np.random.uniform(size=(n, c, h, w)).astype("float32")
    if mode == "DCR":
        want = x.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        want = x.reshape(n, c // 4, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    want = want.reshape(n, c // 4, h * b, w * b)

    def to_layout(a: np.ndarray) -> np.ndarray:
        return a if layout == "NCHW" else a.transpose(0, 2, 3, 1)

    A = te.placeholder(to_layout(x).shape, name="A")
    got = _run(topi.nn.depth_to_space(A, b, layout, mode), A, to_layout(x))
    np.testing.assert_array_equal(got, to_layout(want))
    if mode == "DCR":
        D = te.placeholder(to_layout(want).shape, name="D")
        back = _run(topi.nn.space_to_depth(D, b, layout), D, to_layout(want))
        np.testing.assert_array_equal(back, to_layout(x))


def test_space_to_batch_nd_and_back() -> None:
    x = np.random.uniform(size=(2, 3, 5, 4)).astype("float32")
    blocks, before, after = [2, 2], [1, 0], [0, 1]
    padded = np.pad(x, [(0, 0), (1, 0), (0, 1), (0, 0)], constant_values=7.0)
    tiles = padded.reshape(2, 2, 2, 3, 2, 4).transpose(2, 4, 0, 1, 3, 5)
    want = tiles.reshape(8, 2, 3, 4)
    A = te.placeholder(x.shape, name="A")
    got = _run(topi.nn.space_to_batch_nd(A, blocks, before, after, 7.0), A, x)
    np.testing.assert_array_equal(got, want)
    B = te.placeholder(want.shape, name="B")
    back = _run(topi.nn.batch_to_space_nd(B, blocks, before, after), B, want)
    np.testing.assert_array_equal(back, x)


def test_dilate_spreads_values() -> None:
    x = np.random.uniform(size=(2, 3)).astype("float32")
    A = te.placeholder(x.shape, name="A")
    got = _run(topi.nn.dilate(A, (2, 3), 5.0), A, x)
    want = np.full((3, 7), 5.0, "float32")
    want[::2, ::3] = x
    np.testing.assert_array_equal(got, want)


def test_reorg_follows_darknet() -> None:
    x = np.random.uniform(size=(1, 8, 4, 4)).astype("float32")
    s, oc = 2, 2
    src = x.reshape(1, oc, 8, 8)
    k = np.arange(8)
    rows = np.arange(4)[:, None] * s + (k // oc)[:, None, None] // s
    cols = np.arange(4)[None, :] * s + (k // oc)[:, None, None] % s
    want = src[:, (k % oc)[:, None, None], rows, cols].reshape(1, 32, 2, 2)
    A = te.placeholder(x.shape, name="A")
    np.testing.assert_array_equal(_run(topi.vision.reorg(A, 2), A, x), want)


def test_rearrangements_refuse_sizes_that_do_not_divide() -> None:
    A = te.placeholder((1, 6, 4, 4), name="A")
    with pytest.raises(TVMValueError, match="depth_to_space: bad block_size 2"):
        topi.nn.depth_to_space(A, 2)
    with pytest.raises(TVMValueError, match="space_to_batch_nd: bad padded shape"):
        topi.nn.space_to_batch_nd(A, [4], [0], [0])
