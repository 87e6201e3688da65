"""Tensor expressions: placeholders, computes, reductions and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api as mypy_api

from pytvm import te, tir
from pytvm.ffi.errors import TVMValueError

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_tuple_body_gives_a_list_and_a_one_element_tuple_a_tensor() -> None:
    A = te.placeholder((8,), name="A")
    lo, hi = te.compute((8,), lambda i: (A[i] - 1.0, A[i] + 1.0), name="C")
    assert lo.op is hi.op and hi.name == "C.v1"
    pair = te.compute((8,), lambda i: [A[i], A[i] * 2.0], name="D")
    assert isinstance(pair, list) and len(pair) == 2
    single = te.compute((8,), lambda i: (A[i],), name="E")
    assert isinstance(single, te.Tensor)


COMPUTE_CALLERS = """\
from __future__ import annotations

from pytvm import te
from pytvm.tir.expr import PrimExpr

A = te.placeholder((8,), name="A")


def one(i: PrimExpr) -> PrimExpr:
    return A(i)


def two(i: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    return A(i), A(i)


def single(i: PrimExpr) -> tuple[PrimExpr]:
    return (A(i),)


def some(i: PrimExpr) -> list[PrimExpr]:
    return [A(i)]


reveal_type(te.compute((8,), one))
reveal_type(te.compute((8,), two))
reveal_type(te.compute((8,), single))
reveal_type(te.compute((8,), some))
"""


def test_compute_is_typed_by_what_its_body_returns(tmp_path: Path) -> None:
    snippet = tmp_path / "compute_callers.py"
    snippet.write_text(COMPUTE_CALLERS)
    # the cache of `make typecheck`, so a warm tree checks in about a second
    cache = str(ROOT / ".mypy_cache")
    args = ["--strict", "--follow-imports=silent", "--cache-dir", cache, str(snippet)]
    report, _, _ = mypy_api.run(args)
    revealed = [
        line.split("Revealed type is ")[1]
        for line in report.splitlines()
        if "compute_callers.py:" in line and "Revealed type is" in line
    ]
    tensor = '"pytvm.te.tensor.Tensor"'
    tensors = '"list[pytvm.te.tensor.Tensor]"'
    either = '"pytvm.te.tensor.Tensor | list[pytvm.te.tensor.Tensor]"'
    assert revealed == [tensor, tensors, tensor, either], report


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


def test_compute_takes_whole_floats_as_shapes_and_refuses_fractions() -> None:
    A = te.placeholder((8,), name="A")
    B = te.compute((8 / 2, 2), lambda i, j: A[i * 2 + j], name="B")  # TVM's tutorial: N / bn
    assert [int(d) for d in B.shape] == [4, 2]
    with pytest.raises(TVMValueError, match=r"dimension 0 is 2\.66"):
        te.compute((8 / 3,), lambda i: A[i])
    with pytest.raises(TVMValueError, match=r"dimension 0 is 4\.0"):
        te.placeholder((4.0,), name="P")


def test_a_tensor_given_twice_in_args_is_refused() -> None:
    from pytvm.driver import lower

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(TVMValueError, match="tensor A is given twice in args"):
        lower(s, [A, B, A])
    with pytest.raises(TVMValueError, match="tensor B is given twice in args"):
        lower(s, [A, B, B])
