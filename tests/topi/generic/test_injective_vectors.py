"""The injective schedule covers every extent with full vectors: trailing axes are fused until
whole vectors cover them, and a single partial vector at the end is split off.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target

_TARGET = "llvm -mcpu=skylake-avx512"  # 16 float32 lanes, whatever the host


def _lowered(shape: tuple[int, ...], target: str = _TARGET) -> tuple[str, te.Tensor, te.Tensor]:
    a = te.placeholder(shape, name="a")
    b = topi.nn.relu(topi.multiply(a, 2.0))
    with Target(target):
        s = topi.generic.schedule_injective(b)
    return str(pytvm.lower(s, [a, b], simple_mode=True)), a, b


@pytest.mark.parametrize(
    ("shape", "lanes"),
    [((1, 256, 56, 56), {16}), ((1, 232, 7, 7), {16, 8}), ((2, 64, 28, 64), {16})],
)
def test_every_store_is_a_vector(shape: tuple[int, ...], lanes: set[int]) -> None:
    text, _, _ = _lowered(shape)
    stores = re.findall(r"compute_?\d*\[(.*?)\] =", text) or re.findall(r"\w+_2\[(.*?)\] =", text)
    assert stores, text
    widths = {int(m) for store in stores for m in re.findall(r"ramp\(.*, 1, (\d+)\)$", store)}
    assert widths == lanes, text  # no scalar store is left
    assert " parallel " in text


@pytest.mark.parametrize("shape", [(1, 256, 56, 56), (1, 232, 7, 7), (3, 5), (7,), (1, 3, 13, 17)])
def test_fused_vectors_compute_the_right_values(shape: tuple[int, ...]) -> None:
    a = te.placeholder(shape, name="a")
    b = topi.nn.relu(topi.multiply(a, 2.0))
    s = topi.generic.schedule_injective(b)
    f = pytvm.build(s, [a, b], target="llvm")
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    out = pytvm.nd.empty(shape, "float32")
    f(pytvm.nd.array(x), out)
    np.testing.assert_array_equal(out.numpy(), np.maximum(x * 2.0, 0.0))


def test_broadcast_along_a_fused_axis_stays_correct() -> None:
    a = te.placeholder((1, 8, 7, 7), name="a")
    w = te.placeholder((7,), name="w")
    c = te.placeholder((8, 1, 1), name="c")
    b = topi.add(topi.multiply(a, w), c)
    s = topi.generic.schedule_injective(b)
    f = pytvm.build(s, [a, w, c, b], target="llvm")
    rng = np.random.default_rng(1)
    x, y, z = (rng.standard_normal(d).astype("float32") for d in ((1, 8, 7, 7), (7,), (8, 1, 1)))
    out = pytvm.nd.empty((1, 8, 7, 7), "float32")
    f(pytvm.nd.array(x), pytvm.nd.array(y), pytvm.nd.array(z), out)
    np.testing.assert_allclose(out.numpy(), x * y + z, rtol=1e-5, atol=1e-6)  # FMA contracted
