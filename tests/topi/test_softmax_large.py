"""Softmax and log-softmax rows of every length (whole vectors, a tail past them, shorter than a
vector, a language model's vocabulary) and along other axes, against numpy in float64: masked
entries (``-inf``), rows that are all ``-inf`` (NaN, as numpy and ONNX Runtime give), and
large values that must not overflow.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.target import Target

F32 = "float32"


def _run(xa: np.ndarray, axis: int, log: bool, target: str = "llvm") -> np.ndarray:
    with Target(target):
        x = te.placeholder(xa.shape, F32, "x")
        y = topi.nn.log_softmax(x, axis) if log else topi.nn.softmax(x, axis)
        s = topi.x86.schedule_default(y)
        mod = pytvm.build(s, [x, y], target=target, name="f")
    out = pytvm.nd.empty(xa.shape, F32)
    mod["f"](pytvm.nd.array(xa), out)
    return out.numpy()


def _reference(xa: np.ndarray, axis: int, log: bool) -> np.ndarray:
    x = xa.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = x - x.max(axis, keepdims=True)
        total = np.exp(shifted).sum(axis, keepdims=True)
        return shifted - np.log(total) if log else np.exp(shifted) / total  # type: ignore[no-any-return]


def _check(xa: np.ndarray, axis: int, log: bool, target: str = "llvm") -> None:
    got, want = _run(xa, axis, log, target), _reference(xa, axis, log)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=3e-5 if log else 2e-5, atol=1e-6)


@pytest.mark.parametrize(
    "shape", [(3, 1500), (2, 3, 197), (2, 50257), (5, 1), (4, 16), (4, 17), (6, 40), (7, 8)]
)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_of_any_length_match_numpy(shape: tuple[int, ...], log: bool) -> None:
    xa = (np.random.default_rng(0).standard_normal(shape) * 4).astype(F32)
    _check(xa, -1, log)


@pytest.mark.parametrize(("shape", "axis"), [((2, 21, 9, 13), 1), ((3, 197, 5), 1), ((4, 6), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_along_an_axis_that_is_not_last_matches_numpy(
    shape: tuple[int, ...], axis: int, log: bool
) -> None:
    xa = (np.random.default_rng(1).standard_normal(shape) * 4).astype(F32)
    _check(xa, axis, log)


@pytest.mark.parametrize("width", [1500, 197, 16, 5])
@pytest.mark.parametrize("log", [False, True])
def test_masked_entries_are_zero_and_a_fully_masked_row_is_nan(width: int, log: bool) -> None:
    """An attention mask of ``-inf``: masked entries get probability 0 (log: ``-inf``), in the
    vectors and in the tail alike; a row masked entirely has no maximum to subtract and is NaN
    in every entry, as in numpy and ONNX Runtime.
    """
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((4, width)).astype(F32)
    xa[0, rng.random(width) < 0.5] = -np.inf
    xa[1, :] = -np.inf
    xa[2, -3:] = -np.inf  # the last entries, inside the tail for most widths
    xa[3, 0] = -np.inf
    got = _run(xa, -1, log)
    assert np.isnan(got[1]).all()
    masked = np.isneginf(xa[[0, 2, 3]])
    kept = got[[0, 2, 3]]
    if log:
        assert np.isneginf(kept[masked]).all()
    else:
        assert (kept[masked] == 0).all()
    _check(xa, -1, log)


@pytest.mark.parametrize("log", [False, True])
def test_large_values_do_not_overflow(log: bool) -> None:
    rng = np.random.default_rng(3)
    xa = (rng.standard_normal((3, 1500)) * 1e4).astype(F32)
    xa[1] += 3e38 - xa[1].max()  # near the largest float
    xa[2] = -1e30 + rng.standard_normal(1500).astype(F32) * 1e24
    _check(xa, -1, log)


def test_a_positive_infinity_makes_its_row_nan() -> None:
    xa = np.random.default_rng(4).standard_normal((2, 197)).astype(F32)
    xa[0, 190] = np.inf
    got = _run(xa, -1, False)
    assert np.isnan(got[0]).all()
    assert not np.isnan(got[1]).any()


@pytest.mark.parametrize("log", [False, True])
def test_generated_c_matches_numpy(log: bool) -> None:
    xa = (np.random.default_rng(5).standard_normal((3, 197)) * 4).astype(F32)
    xa[0, 196] = -np.inf
    _check(xa, -1, log, "c")


def test_last_axis_softmax_is_computed_row_by_row() -> None:
    """Every per-row stage (max, exponentials, sum) sits inside the parallel row loop, each
    pass over the row vectorized, the tail past the last whole vector included.
    """
    with Target("llvm -mattr=+avx512f"):
        x = te.placeholder((64, 1500), F32, "x")
        y = topi.nn.softmax(x)
        text = str(pytvm.lower(topi.x86.schedule_default(y), [x, y]))
    head, body = text.split("parallel", 1)
    for stage in ("maxelem_partial", "maxelem", "exp", "expsum_partial", "expsum"):
        assert f"T_softmax_{stage}[" in body
        assert f"T_softmax_{stage}[" not in head
    assert "T_softmax_exp[ramp(1488, 1, 12)]" in body  # the tail of 12 as one short vector


@pytest.mark.parametrize("mask", [-1e4, -3.4e38, -100.0])
def test_finite_attention_masks_give_exact_zeros(mask: float) -> None:
    """Finite masks (BERT's ``-10000``, ``float32``'s lowest) and terms whose ``exp`` lies below
    float32's normal range are exact zeros, as in numpy's float64 rounded to float32.
    """
    rng = np.random.default_rng(6)
    xa = rng.standard_normal((3, 197)).astype(F32)
    masked = rng.random((3, 197)) < 0.3
    xa[masked] = mask
    got = _run(xa, -1, False)
    assert (got[masked] == 0).all()
    _check(xa, -1, False)
