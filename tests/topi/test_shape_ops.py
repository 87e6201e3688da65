"""Reductions, layout transforms and indexing operators against numpy (reference evaluator)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.te_eval import evaluate

RNG = np.random.default_rng(1)


def _rand(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod"])
@pytest.mark.parametrize(
    ("axis", "keepdims"), [(None, False), (1, False), ((0, 2), True), (-1, True)]
)
def test_reductions_match_numpy(name: str, axis: Any, keepdims: bool) -> None:
    A = te.placeholder((2, 3, 4), name="A")
    a = _rand(2, 3, 4)
    (got,) = evaluate(getattr(topi, name)(A, axis, keepdims), {A: a})
    ref = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_pick_first_of_ties(name: str) -> None:
    A = te.placeholder((3, 5), name="A")
    a = np.array([[1, 3, 3, 0, 0], [2, 2, 2, 2, 2], [-1, -5, 4, -5, 4]], dtype="float32")
    for axis in (0, 1, None):
        (got,) = evaluate(getattr(topi, name)(A, axis), {A: a})
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, getattr(np, name)(a, axis=axis))
    (last,) = evaluate(getattr(topi, name)(A, 1, select_last_index=True), {A: a})
    flipped = getattr(np, name)(a[:, ::-1], axis=1)
    np.testing.assert_array_equal(last, 4 - flipped)


def test_reduction_rejects_bad_axis() -> None:
    A = te.placeholder((2, 3), name="A")
    with pytest.raises(TVMValueError, match=r"sum: bad axis 2; expected an int in \[-2, 2\)"):
        topi.sum(A, 2)


def test_reshape_transpose_expand_squeeze_flatten_tile() -> None:
    A = te.placeholder((2, 3, 4), name="A")
    a = _rand(2, 3, 4)
    cases = [
        (topi.reshape(A, (4, -1)), a.reshape(4, -1)),
        (topi.transpose(A, (2, 0, 1)), a.transpose(2, 0, 1)),
        (topi.transpose(A), a.transpose()),
        (topi.expand_dims(A, -1, 2), a[..., None, None]),
        (topi.squeeze(topi.expand_dims(A, 1)), a),
        (topi.nn.flatten(A), a.reshape(2, 12)),
        (topi.tile(A, (2, 1, 2)), np.tile(a, (2, 1, 2))),
        (topi.tile(A, (2, 1, 1, 3)), np.tile(a, (2, 1, 1, 3))),
        (
            topi.broadcast_to(topi.sum(A, 1, True), (5, 2, 3, 4)),
            np.broadcast_to(a.sum(1, keepdims=True), (5, 2, 3, 4)),
        ),
    ]
    for tensor, ref in cases:
        (got,) = evaluate(tensor, {A: a})
        np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_reshape_rejects_wrong_element_count() -> None:
    A = te.placeholder((2, 3), name="A")
    with pytest.raises(TVMValueError, match=r"reshape: bad newshape \[4, 2\]; expected 6 elements"):
        topi.reshape(A, (4, 2))


def test_concatenate_and_split_round_trip() -> None:
    A = te.placeholder((2, 3), name="A")
    B = te.placeholder((2, 1), name="B")
    C = te.placeholder((2, 4), name="C")
    a, b, c = _rand(2, 3), _rand(2, 1), _rand(2, 4)
    cat = topi.concatenate([A, B, C], axis=-1)
    (got,) = evaluate(cat, {A: a, B: b, C: c})
    ref = np.concatenate([a, b, c], axis=1)
    np.testing.assert_array_equal(got, ref)
    parts = evaluate(topi.split(cat, [3, 4], axis=1), {A: a, B: b, C: c})
    for part, want in zip(parts, np.split(ref, [3, 4], axis=1), strict=True):
        np.testing.assert_array_equal(part, want)
    halves = evaluate(topi.split(cat, 2, axis=1), {A: a, B: b, C: c})
    np.testing.assert_array_equal(halves[1], ref[:, 4:])
    with pytest.raises(TVMValueError, match="split: bad indices_or_sections 3"):
        topi.split(cat, 3, axis=1)


@pytest.mark.parametrize(
    ("begin", "end", "strides", "axes"),
    [
        ([1, 0], [4, 5], None, None),
        ([-1], [-(10**9)], [-2], [1]),
        ([8, -4], [1, 100], [-3, 2], None),
        ([0], [2**31 - 1], [3], [0]),
        ([2, 1], [2, 3], [1, 1], [0, 1]),
    ],
)
def test_strided_slice_matches_numpy(
    begin: list[int], end: list[int], strides: list[int] | None, axes: list[int] | None
) -> None:
    A = te.placeholder((10, 7), name="A")
    a = _rand(10, 7)
    (got,) = evaluate(topi.strided_slice(A, begin, end, strides, axes), {A: a})
    slices = [slice(None)] * 2
    for k, ax in enumerate(axes if axes is not None else range(len(begin))):
        slices[ax] = slice(begin[k], end[k], strides[k] if strides else 1)
    np.testing.assert_array_equal(got, a[tuple(slices)])


def test_strided_slice_rejects_zero_stride() -> None:
    A = te.placeholder((4,), name="A")
    with pytest.raises(TVMValueError, match=r"strided_slice: bad strides \[0\]"):
        topi.strided_slice(A, [0], [4], [0])


@pytest.mark.parametrize("mode", ["fast", "clip", "wrap"])
def test_take_modes(mode: str) -> None:
    np_mode: Any = mode.replace("fast", "raise")
    A = te.placeholder((4, 5), name="A")
    Idx = te.placeholder((2, 3), "int64", name="Idx")
    a = _rand(4, 5)
    idx = np.array([[0, 3, 1], [2, 2, 0]], "int64")
    if mode != "fast":
        idx = np.array([[-1, 7, 1], [2, -6, 0]], "int64")
    for axis in (0, 1):
        (got,) = evaluate(topi.take(A, Idx, axis=axis, mode=mode), {A: a, Idx: idx})
        np.testing.assert_array_equal(got, np.take(a, idx, axis=axis, mode=np_mode))
    (flat,) = evaluate(topi.take(A, Idx, mode=mode), {A: a, Idx: idx})
    np.testing.assert_array_equal(flat, np.take(a, idx, mode=np_mode))


def test_take_fast_mode_out_of_range_is_caught_by_the_evaluator() -> None:
    A = te.placeholder((4,), name="A")
    Idx = te.placeholder((1,), "int32", name="Idx")
    with pytest.raises(IndexError, match="A read out of bounds"):
        evaluate(topi.take(A, Idx, axis=0), {A: _rand(4), Idx: np.array([5], "int32")})


def test_where_broadcasts_condition_and_values() -> None:
    C = te.placeholder((3, 1), "bool", name="C")
    X = te.placeholder((4,), name="X")
    Y = te.placeholder((3, 4), name="Y")
    c = np.array([[True], [False], [True]])
    x, y = _rand(4), _rand(3, 4)
    (got,) = evaluate(topi.where(C, X, Y), {C: c, X: x, Y: y})
    np.testing.assert_array_equal(got, np.where(c, x, y))
    (scalar,) = evaluate(topi.where(C, X, 0.0), {C: c, X: x})
    np.testing.assert_array_equal(scalar, np.where(c, x, 0.0).astype("float32"))


def test_symbolic_leading_dimension_flows_through_operators() -> None:
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.placeholder((4,), name="B")
    out = topi.nn.softmax(topi.nn.relu(topi.add(A, B)))
    assert out.shape[0] is n
    a, b = _rand(3, 4), _rand(4)
    (got,) = evaluate(out, {A: a, B: b})
    e = np.exp(np.maximum(a + b, 0) - np.maximum(a + b, 0).max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-5)
    (r,) = evaluate(topi.reshape(A, (n * 2, 2)), {A: a})
    np.testing.assert_array_equal(r, a.reshape(6, 2))
