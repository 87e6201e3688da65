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


def test_a_per_channel_scale_keeps_rows_and_splits_off_their_tails() -> None:
    # A squeeze-and-excitation multiply: fusing the channel axis into the planes would read the
    # scale at a division of the fused index; rows of 7x7 stay rows, one partial vector each.
    x = te.placeholder((1, 64, 7, 7), name="x")
    scale = te.placeholder((1, 64, 1, 1), name="scale")
    y = topi.multiply(x, scale)
    with Target(_TARGET):
        s = topi.generic.schedule_injective(y)
    text = str(pytvm.lower(s, [x, scale, y], simple_mode=True))
    assert "ramp(" in text and "/" not in text.split("buffer_map")[1], text
    f = pytvm.build(s, [x, scale, y], target="llvm")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 64, 7, 7)).astype("float32")
    b = rng.standard_normal((1, 64, 1, 1)).astype("float32")
    out = pytvm.nd.empty((1, 64, 7, 7), "float32")
    f(pytvm.nd.array(a), pytvm.nd.array(b), out)
    np.testing.assert_array_equal(out.numpy(), a * b)


def test_a_padded_input_is_not_fused_across_its_rows() -> None:
    x = te.placeholder((1, 3, 20, 20), name="x")
    y = topi.nn.pad(x, (0, 0, 1, 1), (0, 0, 1, 1))
    with Target(_TARGET):
        s = topi.generic.schedule_injective(y)
    text = str(pytvm.lower(s, [x, y], simple_mode=True)).split("buffer_map")[1]
    assert "i3.fused" not in text, text  # rows stay rows: no division by the row length
    f = pytvm.build(s, [x, y], target="llvm")
    a = np.random.default_rng(3).standard_normal((1, 3, 20, 20)).astype("float32")
    out = pytvm.nd.empty((1, 3, 22, 22), "float32")
    f(pytvm.nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1))))
