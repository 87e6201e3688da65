"""Creation, masking and reordering operators against numpy: full, arange, shape,
ndarray_size, elemwise_sum, one_hot, trilu, matrix_set_diag, sequence_mask, strided_set,
sparse_to_dense, flip, reverse_sequence, stack, repeat, expand_like, adv_index,
unravel_index, tensordot, gather_nd (TVM's layout), reinterpret.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError


def _run(out_t: Any, ins: list[Any], arrays: list[np.ndarray]) -> np.ndarray:
    f = tvm.build(te.create_schedule(out_t.op), [*ins, out_t], "llvm")
    out = tvm.nd.array(np.zeros([int(d) for d in out_t.shape], out_t.dtype))
    f(*[tvm.nd.array(a) for a in arrays], out)
    return out.numpy()


def test_creation_ops() -> None:
    np.testing.assert_array_equal(_run(topi.full((2, 3), "int32", 7), [], []), np.full((2, 3), 7))
    np.testing.assert_allclose(_run(topi.arange(1, 8, 2.5), [], []), np.arange(1, 8, 2.5))
    np.testing.assert_allclose(_run(topi.arange(5, dtype="int32"), [], []), np.arange(5))
    A = te.placeholder((2, 3, 4), name="A")
    x = np.ones((2, 3, 4), "float32")
    np.testing.assert_array_equal(_run(topi.shape(A), [A], [x]), [2, 3, 4])
    np.testing.assert_array_equal(_run(topi.ndarray_size(A, "int64"), [A], [x]), 24)
    np.testing.assert_array_equal(_run(topi.full_like(A, 2.0), [A], [x]), 2 * x)
    np.testing.assert_array_equal(_run(topi.elemwise_sum([A, A, A]), [A], [x]), 3 * x)


def test_masking_ops() -> None:
    ind = te.placeholder((2, 3), "int32", "ind")
    iv = np.array([[0, 2, 4], [1, 3, 0]], "int32")
    got = _run(topi.one_hot(ind, 1.0, 0.0, 5, 1, "float32"), [ind], [iv])
    np.testing.assert_array_equal(got, np.eye(5, dtype="float32")[iv].transpose(0, 2, 1))
    X = te.placeholder((3, 4, 5), name="X")
    x = np.random.uniform(size=(3, 4, 5)).astype("float32")
    np.testing.assert_array_equal(_run(topi.trilu(X, 1, True), [X], [x]), np.triu(x, 1))
    np.testing.assert_array_equal(_run(topi.trilu(X, -1, False), [X], [x]), np.tril(x, -1))
    L = te.placeholder((4,), "int32", "L")
    S = te.placeholder((5, 4, 2), name="S")
    s = np.random.uniform(size=(5, 4, 2)).astype("float32")
    lengths = np.array([0, 2, 5, 7], "int32")
    want = np.where(np.arange(5)[:, None, None] < lengths[None, :, None], s, -1.0)
    np.testing.assert_array_equal(
        _run(topi.sequence_mask(S, L, -1.0, 0), [S, L], [s, lengths]), want
    )


def test_matrix_set_diag_single_and_band() -> None:
    D = te.placeholder((2, 4, 5), name="D")
    d = np.random.uniform(size=(2, 4, 5)).astype("float32")
    V1 = te.placeholder((2, 4), name="V1")
    v1 = np.random.uniform(size=(2, 4)).astype("float32")
    want = d.copy()
    for b in range(2):
        for i in range(4):
            want[b, i, i + 1] = v1[b, i]
    np.testing.assert_array_equal(_run(topi.matrix_set_diag(D, V1, 1), [D, V1], [d, v1]), want)
    V2 = te.placeholder((2, 3, 4), name="V2")
    v2 = np.random.uniform(size=(2, 3, 4)).astype("float32")
    want = d.copy()
    for k in (-1, 0, 1):  # RIGHT_LEFT: super-diagonals right-aligned, sub-diagonals left
        rows = [i for i in range(4) if 0 <= i + k < 5]
        n = len(rows)
        offset = 4 - n if k >= 0 else 0
        for j, i in enumerate(rows):
            want[:, i, i + k] = v2[:, 1 - k, offset + j]
    got = _run(topi.matrix_set_diag(D, V2, (-1, 1)), [D, V2], [d, v2])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("begin", "end", "strides"),
    [([1, 0], [3, 5], None), ([3, 4], [0, -6], [-1, -2]), ([0], [2], [1])],
)
def test_strided_set_assigns_a_numpy_slice(begin: list[int], end: list[int], strides: Any) -> None:
    x = np.random.uniform(size=(4, 5)).astype("float32")
    key = tuple(
        slice(begin[i] if i < len(begin) else None, end[i] if i < len(end) else None,
              strides[i] if strides and i < len(strides) else None)
        for i in range(2)
    )  # fmt: skip
    v = np.random.uniform(size=x[key].shape).astype("float32")
    want = x.copy()
    want[key] = v
    A, V = te.placeholder(x.shape, name="A"), te.placeholder(v.shape, name="V")
    b, e = te.placeholder((len(begin),), "int32", "b"), te.placeholder((len(end),), "int32", "e")
    ins, arrays = [A, V, b, e], [x, v, np.array(begin, "int32"), np.array(end, "int32")]
    st = None
    if strides:
        st = te.placeholder((len(strides),), "int32", "st")
        ins.append(st)
        arrays.append(np.array(strides, "int32"))
    np.testing.assert_array_equal(_run(topi.strided_set(A, V, b, e, st), ins, arrays), want)


def test_sparse_to_dense_later_entries_win() -> None:
    I = te.placeholder((3, 2), "int32", "I")  # noqa: E741
    V = te.placeholder((3,), name="V")
    iv = np.array([[0, 1], [2, 3], [0, 1]], "int32")
    vv = np.array([1.0, 2.0, 3.0], "float32")
    want = np.full((3, 4), 9.0, "float32")
    want[0, 1], want[2, 3] = 3.0, 2.0
    np.testing.assert_array_equal(
        _run(topi.sparse_to_dense(I, (3, 4), V, 9.0), [I, V], [iv, vv]), want
    )


def test_reordering_ops() -> None:
    A = te.placeholder((3, 4), name="A")
    x = np.random.uniform(size=(3, 4)).astype("float32")
    np.testing.assert_array_equal(_run(topi.flip(A, 1), [A], [x]), x[:, ::-1])
    np.testing.assert_array_equal(_run(topi.repeat(A, 2, 0), [A], [x]), np.repeat(x, 2, 0))
    np.testing.assert_array_equal(
        _run(topi.stack([A, A + 1], 1), [A], [x]), np.stack([x, x + 1], 1)
    )
    L = te.placeholder((3,), "int32", "L")
    lengths = np.array([1, 3, 9], "int32")
    want = x.copy()
    want[1, :3] = x[1, 2::-1]
    want[2] = x[2, ::-1]
    np.testing.assert_array_equal(
        _run(topi.reverse_sequence(A, L, 1, 0), [A, L], [x, lengths]), want
    )
    like = te.placeholder((3, 2, 4), name="like")
    np.testing.assert_array_equal(
        _run(topi.expand_like(A, like, [1]), [A], [x]), np.broadcast_to(x[:, None], (3, 2, 4))
    )
    B = te.placeholder((4, 2), name="B")
    y = np.random.uniform(size=(4, 2)).astype("float32")
    np.testing.assert_allclose(_run(topi.tensordot(A, B, 1), [A, B], [x, y]), x @ y, rtol=1e-5)


def test_index_ops() -> None:
    A = te.placeholder((3, 4, 2), name="A")
    x = np.random.uniform(size=(3, 4, 2)).astype("float32")
    I0 = te.placeholder((2, 1), "int64", "I0")
    I1 = te.placeholder((3,), "int64", "I1")
    i0, i1 = np.array([[2], [0]], "int64"), np.array([3, 1, 0], "int64")
    np.testing.assert_array_equal(
        _run(topi.adv_index(A, [I0, I1]), [A, I0, I1], [x, i0, i1]), x[i0, i1]
    )
    flat = te.placeholder((4,), "int64", "flat")
    dims = te.placeholder((3,), "int64", "dims")
    fv, dv = np.array([0, 5, 17, 23], "int64"), np.array([2, 3, 4], "int64")
    np.testing.assert_array_equal(
        _run(topi.unravel_index(flat, dims), [flat, dims], [fv, dv]),
        np.unravel_index(fv, (2, 3, 4)),
    )
    G = te.placeholder((2, 5), "float32", "G")  # float indices truncate
    g = np.array([[1.8, 0, 2, 1, 2], [3, 1, 0, 0, 2]], "float32")
    got = _run(topi.gather_nd(A, G), [A, G], [x, g])
    np.testing.assert_array_equal(got, x[g[0].astype(int), g[1].astype(int)])
    F = te.placeholder((4,), "float32", "F")
    fv32 = np.array([1.0, -2.0, 0.5, 3.0], "float32")
    np.testing.assert_array_equal(
        _run(topi.reinterpret(F, "int32"), [F], [fv32]), fv32.view("int32")
    )


def test_reverse_sequence_refuses_lengths_of_another_batch() -> None:
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(TVMValueError, match="seq_length size = 5"):
        topi.reverse_sequence(A, te.placeholder((5,), "int32"), 1, 0)
