"""Softmax, log-softmax and layer norm whose rows are reduced in vector lanes (rows that are a
whole number of vectors), against numpy, next to rows that are not; reshapes index the
dimensions they keep directly.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target

F32 = "float32"


def _build(inputs: list[te.Tensor], out: te.Tensor) -> tuple[object, str]:
    s = topi.x86.schedule_default(out)
    return pytvm.build(s, [*inputs, out], target="llvm", name="f"), str(
        pytvm.lower(s, [*inputs, out])
    )


def _softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("shape", "axis"), [((3, 5, 64), -1), ((2, 37), -1), ((2, 32, 6), 1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_match_numpy(shape: tuple[int, ...], axis: int, log: bool) -> None:
    xa = (np.random.default_rng(0).standard_normal(shape) * 6).astype(F32)
    with Target("llvm"):
        x = te.placeholder(shape, F32, "x")
        y = topi.nn.log_softmax(x, axis) if log else topi.nn.softmax(x, axis)
        mod, _ = _build([x], y)
    out = pytvm.nd.empty(shape, F32)
    mod["f"](pytvm.nd.array(xa), out)  # type: ignore[index]
    want = _softmax_np(xa.astype(np.float64), axis)
    np.testing.assert_allclose(out.numpy(), np.log(want) if log else want, rtol=2e-5, atol=2e-6)


def test_softmax_splits_rows_of_a_vector_or_more_into_lane_partials() -> None:
    with Target("c -mattr=+avx512f"):
        for width in (64, 40):  # 40: two whole vectors and a tail of 8
            y = topi.nn.softmax(te.placeholder((4, width), F32, "x"))
            names = {t.op.name for t in y.op.input_tensors}
            assert names == {"T_softmax_exp", "T_softmax_expsum"}
        short = topi.nn.softmax(te.placeholder((4, 8), F32, "x"))
        assert "T_softmax_exp" not in {t.op.name for t in short.op.input_tensors}


@pytest.mark.parametrize("width", [64, 24])
def test_layer_norm_rows_match_numpy(width: int) -> None:
    rng = np.random.default_rng(1)
    xa = (rng.standard_normal((2, 9, width)) * 3 + 2).astype(F32)
    ga, ba = rng.standard_normal(width).astype(F32), rng.standard_normal(width).astype(F32)
    with Target("llvm"):
        x = te.placeholder(xa.shape, F32, "x")
        g, b = te.placeholder((width,), F32, "g"), te.placeholder((width,), F32, "b")
        mod, _ = _build([x, g, b], topi.nn.layer_norm(x, g, b, -1))
    out = pytvm.nd.empty(xa.shape, F32)
    mod["f"](pytvm.nd.array(xa), pytvm.nd.array(ga), pytvm.nd.array(ba), out)  # type: ignore[index]
    mean, var = xa.mean(-1, keepdims=True), xa.var(-1, keepdims=True)
    want = (xa - mean) / np.sqrt(var + 1e-5) * ga + ba
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("src", "dst", "direct"),
    [
        ((1, 8, 32), (8, 32), True),
        ((8, 32), (1, 8, 4, 8), True),
        ((4, 1), (1, 4, 1), True),
        ((2, 3, 4), (4, 6), False),
    ],
)
def test_reshape_matches_numpy_and_kept_dimensions_index_directly(
    src: tuple[int, ...], dst: tuple[int, ...], direct: bool
) -> None:
    xa = np.arange(np.prod(src), dtype=F32).reshape(src)
    x = te.placeholder(src, F32, "x")
    y = topi.reshape(x, dst)
    s = te.create_schedule(y.op)
    mod = pytvm.build(s, [x, y], target="llvm", name="f")
    out = pytvm.nd.empty(dst, F32)
    mod["f"](pytvm.nd.array(xa), out)
    np.testing.assert_array_equal(out.numpy(), xa.reshape(dst))
    body = str(te.lower_schedule(s, [x, y], "f"))
    # Dimensions kept, split or merged with unit ones need no division (vector loads stay
    # contiguous); a reshape mixing dimensions does.
    assert ("floormod" not in body and "floordiv" not in body) == direct
