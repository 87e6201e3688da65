"""Tensor expressions: placeholders, computes, reductions and their errors."""

from __future__ import annotations

import pytest

from pytvm import te, tir


def test_compute_names_axes_after_the_lambda_arguments() -> None:
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda row, col: A[row, col] + 1.0, name="B")
    assert [iv.var.name for iv in B.op.axis] == ["row", "col"]
    assert B.op.input_tensors == (A,)
    assert B.dtype == "float32" and B.ndim == 2


def test_chained_indexing_is_full_indexing() -> None:
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda i, j: A[i][j] * 2.0, name="B")
    assert str(B.op.body[0]) == "(A[i, j] * 2.0f32)"


def test_symbolic_shapes_keep_their_variable() -> None:
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    assert A.shape[0] is n


def test_reduction_axes_and_bodies() -> None:
    k = te.reduce_axis((0, 16), name="k")
    A = te.placeholder((8, 16), name="A")
    B = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="B")
    assert B.op.reduce_axis == (k,)
    assert str(B.op.body[0]) == "sum(A[i, k], axis=[k])"


def test_max_on_values_combines_them() -> None:
    x = tir.Var("x", "float32")
    assert str(te.max(x, 0.0)) == "max(x, 0.0f32)"


def test_argmax_gives_two_outputs_of_one_reduction() -> None:
    k = te.reduce_axis((0, 16), name="k")
    A = te.placeholder((8, 16), name="A")
    idx, val = te.compute((8,), lambda i: te.argmax((k, A[i, k]), axis=k), name="am")
    assert idx.op is val.op and idx.dtype == "int32" and val.dtype == "float32"
    assert val.name == "am.v1"


def test_reduction_inside_an_expression_is_refused() -> None:
    k = te.reduce_axis((0, 16), name="k")
    A = te.placeholder((8, 16), name="A")
    with pytest.raises(ValueError, match="whole body"):
        te.compute((8,), lambda i: te.sum(A[i, k], axis=k) + 1.0, name="bad")


def test_bad_shapes_and_indices_are_named() -> None:
    with pytest.raises(ValueError, match="placeholder 'A': dimension 1"):
        te.placeholder((4, -1), name="A")
    A = te.placeholder((4, 8), name="A")
    with pytest.raises(IndexError, match="A has 2 dimension"):
        te.compute((4,), lambda i: A[i, 0, 1], name="B")
    with pytest.raises(ValueError, match="2 index argument"):
        te.compute((4,), lambda i, j: A[i, j], name="B")
