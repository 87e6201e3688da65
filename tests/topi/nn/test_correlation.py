"""topi.nn.correlation_nchw against a direct numpy loop (products and absolute differences)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


@pytest.mark.parametrize(
    ("kernel", "disp", "s1", "s2", "pad", "mul"), [(1, 2, 1, 1, 2, True), (3, 1, 2, 1, 2, False)]
)
def test_correlation_matches_numpy(
    kernel: int, disp: int, s1: int, s2: int, pad: int, mul: bool
) -> None:
    a = np.random.uniform(size=(1, 2, 8, 9)).astype("float32")
    b = np.random.uniform(size=(1, 2, 8, 9)).astype("float32")
    A, B = te.placeholder(a.shape, name="A"), te.placeholder(b.shape, name="B")
    out_t = topi.nn.correlation_nchw(A, B, kernel, disp, s1, s2, pad, mul)
    shape: list[int] = [int(str(d)) for d in out_t.shape]
    f = tvm.build(te.create_schedule(out_t.op), [A, B, out_t], "llvm")
    out = tvm.nd.array(np.zeros(shape, "float32"))
    f(tvm.nd.array(a), tvm.nd.array(b), out)
    pa = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad))).astype(np.float64)
    pb = np.pad(b, ((0, 0), (0, 0), (pad, pad), (pad, pad))).astype(np.float64)
    grid, radius = 2 * (disp // s2) + 1, disp // s2
    want = np.zeros(shape)
    for q, i, j in itertools.product(range(grid * grid), range(shape[2]), range(shape[3])):
        y1, x1 = i * s1 + disp, j * s1 + disp
        y2, x2 = y1 + (q // grid - radius) * s2, x1 + (q % grid - radius) * s2
        p1 = pa[0, :, y1 : y1 + kernel, x1 : x1 + kernel]
        p2 = pb[0, :, y2 : y2 + kernel, x2 : x2 + kernel]
        want[0, q, i, j] = (p1 * p2 if mul else np.abs(p1 - p2)).sum() / (kernel * kernel * 2)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
