"""Hybrid scripts parse into a ``HybridOp`` whose body is a statement over tensors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import te, tir
from pytvm.ffi.errors import TVMValueError
from pytvm.te.hybrid import HYBRID_GLOBALS, HybridOp, script
from pytvm.te.hybrid.runtime import const_range, output_tensor, parallel, unroll


@script
def scale_rows(a: Any, b: Any) -> Any:
    """A docstring is skipped."""
    c = output_tensor((a.shape[0], b.shape[0]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            assert i >= 0, "negative index"
            c[i, j] = a[i] * b[j]
    return c


def test_loops_stores_and_asserts() -> None:
    n, m = te.size_var("n"), te.size_var("m")
    a, b = te.placeholder((n,), name="a"), te.placeholder((m,), name="b")
    c = scale_rows(a, b)
    op = c.op
    assert isinstance(op, HybridOp) and op.name == "scale_rows" and op.inputs == (a, b)
    loop = op.body
    assert isinstance(loop, tir.For) and loop.loop_var.name == "i" and loop.extent is n
    inner = loop.body
    assert isinstance(inner, tir.For) and inner.extent is m
    assert isinstance(inner.body, tir.SeqStmt) and len(inner.body) == 2
    check, store = inner.body[0], inner.body[1]
    assert isinstance(check, tir.AssertStmt) and check.message == "negative index"
    assert isinstance(store, tir.ProducerStore) and store.producer.op.name == "c"
    assert [str(i) for i in store.indices] == ["i", "j"]
    assert [iv.var.name for iv in op.axis] == ["i", "j"]


def test_scalars_become_realized_tensors_and_constants_fold() -> None:
    @script
    def window(a: Any) -> Any:
        three = 3.0
        b = output_tensor((a.shape[0] - 2,), a.dtype)
        for i in range(a.shape[0] - 2):
            acc = 0.0
            for j in range(3):
                acc += a[i + j]
            b[i] = acc / three
        return b

    b = window(te.placeholder((10,), name="a"))
    realize = b.op.body.body
    assert isinstance(realize, tir.ProducerRealize) and realize.producer.op.name == "acc"
    assert [(str(r.min), str(r.extent)) for r in realize.bounds] == [("0", "1")]
    assert isinstance(realize.body, tir.SeqStmt)
    last = realize.body[2]
    assert isinstance(last, tir.ProducerStore) and isinstance(last.value, tir.Div)
    assert isinstance(last.value.b, tir.FloatImm) and last.value.b.value == 3.0


def test_loop_kinds_and_const_range_unrolls_in_python() -> None:
    @script
    def kinds(a: Any) -> Any:
        d = output_tensor((4,), "int32")
        e = output_tensor((4,), "int32")
        for i in parallel(4):
            d[i] = a[i]
        for k in const_range(4):
            e[k] = a[k] + k
        return d, e

    d, e = kinds(te.placeholder((4,), "int32", name="a"))
    assert d.op is e.op and d.op.num_outputs == 2
    assert d.op.body[0].kind is tir.ForKind.PARALLEL
    stores = d.op.body.seq[1:]
    assert [s.indices[0].value for s in stores] == [0, 1, 2, 3]


def test_static_conditions_keep_one_branch() -> None:
    @script
    def pick(a: Any, flag: Any) -> Any:
        b = output_tensor((2,), "int32")
        for i in unroll(2):
            if flag > 0:
                b[i] = a[i]
            else:
                b[i] = -a[i]
        return b

    b = pick(te.placeholder((2,), "int32", name="a"), tir.const(1))
    assert isinstance(b.op.body.body, tir.ProducerStore)
    assert isinstance(b.op.body.body.value, tir.ProducerLoad)


def test_list_arguments_and_captured_constants() -> None:
    weights = [2, 3]

    @script
    def weighted(xs: Any) -> Any:
        out = output_tensor((3,), xs[0].dtype)
        for i in range(3):
            for j in const_range(len(xs)):
                out[i] += xs[j][i] * weights[j]
        return out

    xs = [te.placeholder((3,), name=f"x{k}") for k in range(2)]
    out = weighted(xs)
    assert out.op.inputs == tuple(xs)


def test_emulation_runs_python_and_restores_globals() -> None:
    a = np.arange(3, dtype="float32")
    b = np.arange(2, dtype="float32")
    np.testing.assert_allclose(scale_rows(a, b), np.outer(a, b))
    for name in HYBRID_GLOBALS:
        if name not in ("output_tensor", "const_range", "parallel", "unroll"):
            assert name not in globals()
    assert globals()["output_tensor"] is output_tensor


def test_mixed_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="all numpy values"):
        scale_rows(te.placeholder((2,), name="a"), np.zeros(2))


def test_undeclared_names_are_refused() -> None:
    @script
    def bad(a: Any) -> Any:
        b = output_tensor((2,), "float32")
        b[0] = missing  # type: ignore[name-defined]  # noqa: F821
        return b

    with pytest.raises(TVMValueError, match="missing is used before it is assigned"):
        bad(te.placeholder((2,), name="a"))
