"""``subpixel_shuffle_nchw`` and its CPU schedule (rows phase by phase), against numpy: crops,
widths that are not a vector or phase multiple, unequal factors, a fused bias and activation.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target

F32 = "float32"


def _shuffle_np(
    z: np.ndarray, factors: tuple[int, int], begin: tuple[int, int], size: tuple[int, int]
) -> np.ndarray:
    n, c, qh, qw = z.shape
    fh, fw = factors
    y = z.reshape(n, c // (fh * fw), fh, fw, qh, qw).transpose(0, 1, 4, 2, 5, 3)
    y = y.reshape(n, c // (fh * fw), qh * fh, qw * fw)
    return y[:, :, begin[0] : begin[0] + size[0], begin[1] : begin[1] + size[1]]


@pytest.mark.parametrize(
    ("shape", "factors", "begin", "size"),
    [
        ((1, 8, 20, 20), (2, 2), (0, 0), (40, 40)),  # kernel 2 stride 2
        ((1, 8, 21, 21), (2, 2), (1, 1), (40, 40)),  # kernel 4 stride 2 padding 1
        ((2, 12, 5, 7), (2, 2), (1, 1), (9, 12)),  # output_padding: odd sizes
        ((1, 18, 4, 5), (3, 3), (2, 0), (9, 14)),  # stride 3
        ((1, 6, 1, 33), (1, 2), (0, 1), (1, 64)),  # a 1-d one
        ((1, 6, 9, 4), (3, 1), (0, 0), (27, 4)),  # phases on the rows only
    ],
)
def test_shuffle_with_bias_and_relu_matches_numpy(
    shape: tuple[int, int, int, int],
    factors: tuple[int, int],
    begin: tuple[int, int],
    size: tuple[int, int],
) -> None:
    rng = np.random.default_rng(0)
    za = rng.standard_normal(shape).astype(F32)
    f = shape[1] // (factors[0] * factors[1])
    ba = rng.standard_normal((f, 1, 1)).astype(F32)
    with Target("llvm"):
        z = te.placeholder(shape, F32, "z")
        b = te.placeholder((f, 1, 1), F32, "b")
        out = topi.nn.relu(topi.add(topi.nn.subpixel_shuffle_nchw(z, factors, begin, size), b))
        s = topi.x86.schedule_default([out])
        mod = pytvm.build(s, [z, b, out], target="llvm", name="shuffle")
    want = np.maximum(_shuffle_np(za, factors, begin, size) + ba, 0)
    got = pytvm.nd.empty(want.shape, F32)
    mod["shuffle"](pytvm.nd.array(za), pytvm.nd.array(ba), got)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


def test_shuffle_rejects_a_window_past_the_phases() -> None:
    z = te.placeholder((1, 8, 4, 4), F32, "z")
    with pytest.raises(TVMValueError, match="window"):
        topi.nn.subpixel_shuffle_nchw(z, (2, 2), (1, 0), (8, 8))


def test_shuffle_rejects_channels_not_in_whole_blocks() -> None:
    z = te.placeholder((1, 6, 4, 4), F32, "z")
    with pytest.raises(TVMValueError, match="factors"):
        topi.nn.subpixel_shuffle_nchw(z, (2, 2))


def test_shuffle_read_through_a_reshape_is_computed_phase_by_phase_first() -> None:
    za = np.random.default_rng(0).standard_normal((2, 12, 5, 6)).astype(F32)
    with Target("llvm"):
        z = te.placeholder(za.shape, F32, "z")
        shuffled = topi.nn.subpixel_shuffle_nchw(z, (2, 2), (1, 0), (8, 12))
        out = topi.reshape(shuffled, (2, 3, 96))
        s = topi.x86.schedule_default([out])
        assert s[shuffled.op].attach != "inline"  # its own stage, not inlined into the reshape
        mod = pytvm.build(s, [z, out], target="llvm", name="shuffle")
    want = _shuffle_np(za, (2, 2), (1, 0), (8, 12)).reshape(2, 3, 96)
    got = pytvm.nd.empty(want.shape, F32)
    mod["shuffle"](pytvm.nd.array(za), got)
    np.testing.assert_allclose(got.numpy(), want)
