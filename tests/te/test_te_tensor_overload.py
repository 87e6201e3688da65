"""te.Tensor as TVM defines it: identity equality, hashing, operators that build computes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import pytvm
from pytvm import te, tir, topi


def test_an_output_of_an_op_equals_the_tensor_and_hashes_alike() -> None:
    A = te.placeholder((4, 3), name="A")
    T = te.compute((4, 3), lambda i, j: A[i, j] * 2.0, name="T")
    assert T.op.output(0) == T and T.op.output(0) is not T
    assert hash(T.op.output(0)) == hash(T)
    assert {T.op.output(0): 1}[T] == 1
    assert A != T and not (A == T)
    assert A.same_as(A) and not T.op.output(0).same_as(T)


def test_outputs_of_one_op_differ_by_value_index() -> None:
    A = te.placeholder((4,), name="A")
    lo, hi = te.compute((4,), lambda i: (A[i] - 1.0, A[i] + 1.0), name="C")
    assert lo != hi and lo.op is hi.op
    assert (lo.value_index, hi.value_index) == (0, 1)
    assert hi.op.output(1) == hi


def test_number_and_tensor_build_an_elementwise_compute() -> None:
    n = te.var("n")
    B = te.placeholder((10, 5), name="B")
    for made in (1 + B, B * 2, n + B, B - n, B / 2.0, -B):
        assert isinstance(made, te.Tensor)
        assert made.op.tag == topi.tag.ELEMWISE
        assert [str(d) for d in made.shape] == ["10", "5"]


def test_tensors_of_different_shapes_broadcast() -> None:
    A = te.placeholder((), name="A")
    B = te.placeholder((10, 5), name="B")
    assert (A + B).op.tag == topi.tag.BROADCAST
    assert isinstance(B[0, 0] + A, te.Tensor)
    assert isinstance(1 + B[0, 0], tir.PrimExpr)


def test_astype_of_a_tensor_and_of_an_element() -> None:
    B = te.placeholder((10, 5), name="B")
    assert B.astype("float16").dtype == "float16"
    assert B[0][0].astype("float16").dtype == "float16"


def test_tensor_arithmetic_compiles_and_runs() -> None:
    n, m = 5, 10
    x = te.var("x")
    A, B, C = (te.placeholder((n, m), name=name) for name in "ABC")
    D = 3 + A - B * C + x
    s = te.create_schedule(D.op)
    f = pytvm.build(s, [x, A, B, C, D], target="c", name="combo")
    rng = np.random.default_rng(0)
    a, b, c = (rng.uniform(size=(n, m)).astype("float32") for _ in range(3))
    d = pytvm.nd.array(np.zeros((n, m), "float32"))
    f(2, pytvm.nd.array(a), pytvm.nd.array(b), pytvm.nd.array(c), d)
    np.testing.assert_allclose(d.numpy(), 3 + a - b * c + 2, rtol=1e-5)


def test_tensors_are_not_expressions() -> None:
    A = te.placeholder((4,), name="A")
    with pytest.raises(TypeError):
        tir.convert(A)  # type: ignore[arg-type]


def test_tensors_pickle_with_their_operation() -> None:
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B", attrs={"k": [1, 2]})
    back = pickle.loads(pickle.dumps(B))
    assert back.op.name == "B" and dict(back.op.attrs) == {"k": [1, 2]}
    assert tir.structural_equal(back.op.body[0], B.op.body[0], map_free_vars=True)
