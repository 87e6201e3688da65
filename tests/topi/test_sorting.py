"""sort, argsort, topk, searchsorted and unique against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


def _build(outs: list[Any], ins: list[Any], arrays: list[np.ndarray]) -> list[np.ndarray]:
    f = tvm.build(te.create_schedule([t.op for t in outs]), [*ins, *outs], "llvm")
    res = [tvm.nd.array(np.zeros([int(d) for d in t.shape], t.dtype)) for t in outs]
    f(*[tvm.nd.array(a) for a in arrays], *res)
    return [r.numpy() for r in res]


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("ascend", [True, False])
def test_sort_argsort_topk_match_numpy(axis: int, ascend: bool) -> None:
    x = np.random.randint(0, 6, size=(4, 7)).astype("float32")  # ties: the sort is stable
    X = te.placeholder(x.shape, name="X")
    order = np.argsort(x if ascend else -x, axis=axis, kind="stable")
    srt, idx = _build(
        [topi.sort(X, axis, ascend), topi.argsort(X, axis=axis, is_ascend=ascend, dtype="int32")],
        [X],
        [x],
    )
    np.testing.assert_array_equal(srt, np.take_along_axis(x, order, axis))
    np.testing.assert_array_equal(idx, order)
    values, indices = _build(topi.topk(X, 3, axis, "both", ascend, "int64"), [X], [x])
    first3 = np.take(order, range(3), axis=axis)
    np.testing.assert_array_equal(indices, first3)
    np.testing.assert_array_equal(values, np.take_along_axis(x, first3, axis))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_counts_entries_before(right: bool) -> None:
    seq = np.sort(np.random.randint(0, 9, size=(3, 6)).astype("float32"), axis=1)
    vals = np.random.randint(0, 9, size=(3, 4)).astype("float32")
    S, V = te.placeholder(seq.shape, name="S"), te.placeholder(vals.shape, name="V")
    (got,) = _build([topi.searchsorted(S, V, right)], [S, V], [seq, vals])
    want = np.stack(
        [np.searchsorted(seq[r], vals[r], side="right" if right else "left") for r in range(3)]
    )
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("is_sorted", [True, False])
def test_unique_matches_numpy(is_sorted: bool) -> None:
    x = np.array([5, 3, 5, 1, 3, 9, 5], "int32")
    X = te.placeholder(x.shape, "int32", "X")
    uniq, index, inverse, num, counts = _build(topi.unique(X, is_sorted, True), [X], [x])
    want, first, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    if not is_sorted:
        order = np.argsort(first)
        want, first, cnt = want[order], first[order], cnt[order]
        inv = np.argsort(order)[inv]
    k = len(want)
    assert num[0] == k
    np.testing.assert_array_equal(uniq[:k], want)
    np.testing.assert_array_equal(index[:k], first)
    np.testing.assert_array_equal(inverse, inv)
    np.testing.assert_array_equal(counts[:k], cnt)
