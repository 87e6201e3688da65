"""A bad schedule request raises ``ValueError`` naming the stage and the axis."""

from __future__ import annotations

import pytest

from pytvm import te


def _matmul() -> tuple[te.Tensor, te.Tensor, te.Tensor, te.Schedule]:
    k = te.reduce_axis((0, 16), name="k")
    A = te.placeholder((8, 16), name="A")
    B = te.placeholder((16, 12), name="B")
    C = te.compute((8, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, te.create_schedule(C.op)


def test_splitting_an_axis_twice_names_the_axis() -> None:
    _, _, C, s = _matmul()
    i, _ = C.op.axis
    s[C].split(i, factor=4)
    with pytest.raises(ValueError, match=r"stage C: split: axis i was already split or fused"):
        s[C].split(i, factor=2)


def test_factor_must_be_positive() -> None:
    _, _, C, s = _matmul()
    with pytest.raises(ValueError, match=r"stage C: split of axis i: factor must be positive"):
        s[C].split(C.op.axis[0], factor=0)
    with pytest.raises(ValueError, match="exactly one of factor= or nparts="):
        s[C].split(C.op.axis[0], factor=2, nparts=2)


def test_fusing_axes_that_are_not_adjacent() -> None:
    _, _, C, s = _matmul()
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    s[C].reorder(i, k, j)
    with pytest.raises(ValueError, match=r"stage C: fuse of axes i, j: they must be adjacent"):
        s[C].fuse(i, j)


def test_fusing_a_reduction_with_a_data_axis() -> None:
    _, _, C, s = _matmul()
    _, j = C.op.axis
    (k,) = C.op.reduce_axis
    with pytest.raises(ValueError, match=r"stage C: cannot fuse a reduction axis"):
        s[C].fuse(j, k)


def test_vectorizing_or_parallelizing_a_reduction_axis() -> None:
    _, _, C, s = _matmul()
    (k,) = C.op.reduce_axis
    with pytest.raises(ValueError, match=r"stage C: cannot vectorize reduction axis k"):
        s[C].vectorize(k)
    with pytest.raises(ValueError, match=r"stage C: cannot parallel reduction axis k"):
        s[C].parallel(k)


def test_reorder_with_a_repeated_axis_or_one_of_another_stage() -> None:
    A, _, C, s = _matmul()
    i, j = C.op.axis
    with pytest.raises(ValueError, match="stage C: reorder names an axis twice"):
        s[C].reorder(i, i)
    D = te.compute((8, 12), lambda x, y: C[x, y] * 2.0, name="D")
    s2 = te.create_schedule(D.op)
    with pytest.raises(ValueError, match=r"stage D: reorder: axis i is not an axis of this stage"):
        s2[D].reorder(i, *D.op.axis)
    del A, j


def test_compute_at_a_stage_that_does_not_read_it() -> None:
    A = te.placeholder((8,), name="A")
    P = te.compute((8,), lambda i: A[i] + 1.0, name="P")
    Q = te.compute((8,), lambda i: P[i] * 2.0, name="Q")
    R = te.compute((8,), lambda i: A[i] - 1.0, name="R")
    s = te.create_schedule([Q.op, R.op])
    s[P].compute_at(s[R], R.op.axis[0])
    with pytest.raises(ValueError, match=r"stage P: compute_at R, which does not read it"):
        te.lower_schedule(s, [A, Q, R], "f")


def test_compute_at_an_axis_of_another_stage() -> None:
    A = te.placeholder((8,), name="A")
    P = te.compute((8,), lambda i: A[i] + 1.0, name="P")
    Q = te.compute((8,), lambda i: P[i] * 2.0, name="Q")
    s = te.create_schedule(Q.op)
    with pytest.raises(ValueError, match=r"stage Q: compute_at of P: axis i is not an axis"):
        s[P].compute_at(s[Q], P.op.axis[0])


def test_inlining_a_reduction_or_an_output() -> None:
    _, _, C, s = _matmul()
    with pytest.raises(ValueError, match="stage C: a reduction cannot be inlined"):
        s[C].compute_inline()
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    s2 = te.create_schedule(B.op)
    with pytest.raises(ValueError, match="stage B: an output of the schedule cannot be inlined"):
        s2[B].compute_inline()


def test_an_input_missing_from_args_is_named() -> None:
    A, B, C, s = _matmul()
    with pytest.raises(ValueError, match=r"tensor B is read but is not in args"):
        te.lower_schedule(s, [A, C], "f")
    del B


def test_storage_align_needs_an_own_axis() -> None:
    _, _, C, s = _matmul()
    (k,) = C.op.reduce_axis
    with pytest.raises(
        ValueError, match=r"stage C: storage_align needs one of the stage's own axes"
    ):
        s[C].storage_align(k, 8, 1)
