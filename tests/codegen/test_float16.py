"""float16 in both code generators: conversions from float64 rounded once (the halfway points
between neighbouring halves, and their neighbours, as numpy rounds them; the LLVM path has no
``__truncdfhf2`` to call), and vectorized float16 arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te

TARGETS = ["llvm", "llvm -backend=c"]


def _halfway_values() -> np.ndarray[Any, Any]:
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    finite = np.sort(halves[np.isfinite(halves)].astype(np.float64))
    mid = (finite[:-1] + finite[1:]) / 2
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 65519.99, 65520.0, 1e300, -1e300, 2.98e-8]
    values = np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), special])
    return values[: len(values) // 16 * 16]


def _run(target: str, values: np.ndarray[Any, Any], vector: bool) -> np.ndarray[Any, Any]:
    a = te.placeholder(values.shape, "float64", name="a")
    b = te.compute(a.shape, lambda i: a[i].astype("float16"), name="b")
    s = te.create_schedule(b.op)
    if vector:
        _, inner = s[b].split(b.op.axis[0], factor=16)
        s[b].vectorize(inner)
    f = pytvm.build(s, [a, b], target=target, name="to_half")
    out = pytvm.runtime.empty(values.shape, "float16")
    f["to_half"](pytvm.runtime.ndarray.array(values), out)
    return out.numpy()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
def test_float64_to_float16_rounds_once(target: str, vector: bool) -> None:
    values = _halfway_values()
    got, want = _run(target, values, vector), values.astype(np.float16)
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), values[~same][:8]


@pytest.mark.parametrize("target", TARGETS)
def test_float16_vector_arithmetic(target: str) -> None:
    a = te.placeholder((256,), "float16", name="a")
    b = te.placeholder((256,), "float16", name="b")
    c = te.compute(a.shape, lambda i: te.max(a[i] * b[i] - a[i], b[i]), name="c")
    s = te.create_schedule(c.op)
    _, inner = s[c].split(c.op.axis[0], factor=16)
    s[c].vectorize(inner)
    f = pytvm.build(s, [a, b, c], target=target, name="f16")
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(256).astype(np.float16) for _ in range(2))
    out = pytvm.runtime.empty((256,), "float16")
    f["f16"](pytvm.runtime.ndarray.array(x), pytvm.runtime.ndarray.array(y), out)
    want = np.maximum(x * y - x, y)  # numpy rounds each float16 operation
    np.testing.assert_allclose(out.numpy().astype(np.float32), want.astype(np.float32), rtol=2e-3)
