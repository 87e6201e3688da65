"""TVM's ``te.schedule`` namespace: InferBound, ScheduleOps, rfactor, groups, thread relaxing,
and the reductions whose ranges use the data axes (compiled and run against numpy).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te
from pytvm.te import schedule as tsch
from pytvm.tir import stmt as S


def _run(s: te.Schedule, args: list[te.Tensor], inputs: list[np.ndarray]) -> np.ndarray:
    f = tvm.build(s, args, target="c")
    arrays = [tvm.nd.array(a) for a in inputs]
    out = tvm.nd.empty(tuple(_int(d) for d in args[-1].shape), args[-1].dtype)
    f(*arrays, out)
    return out.numpy()


def test_infer_bound_gives_attached_region_in_axis_vars() -> None:
    A = te.placeholder((64, 16), name="A")
    A1 = te.compute((64, 16), lambda i, j: A[i, j], name="A1")
    A2 = te.compute((64, 16), lambda i, j: A1[i, j] + 3, name="A2")
    s = te.create_schedule(A2.op)
    xo, _ = s[A2].split(A2.op.axis[0], 8)
    s[A1].compute_at(s[A2], xo)
    bounds = tsch.InferBound(s)
    assert _int(bounds[A1.op.axis[0]].extent) == 8
    assert str(bounds[A1.op.axis[0]].min) == str(xo.var * 8)


def test_split_by_more_than_a_constant_extent_is_clamped() -> None:
    Inp = te.placeholder((8,), name="I")
    E = te.compute((8,), lambda i: Inp[i] * 2, name="E")
    s = te.create_schedule(E.op)
    _, xi = s[E].split(E.op.axis[0], factor=32)
    assert _int(tsch.InferBound(s)[xi].extent) == 8


def test_shared_buffer_covers_every_thread_of_its_block() -> None:
    A = te.placeholder((128,), name="A")
    A1 = te.compute((128,), lambda i: A[i], name="A1")
    A2 = te.compute((128,), lambda i: A1[i] + 2, name="A2")
    s = te.create_schedule(A2.op)
    s[A1].set_scope("shared")
    bx, tx = s[A2].split(A2.op.axis[0], factor=32)
    s[A2].bind(bx, te.thread_axis("blockIdx.x"))
    s[A2].bind(tx, te.thread_axis("threadIdx.x"))
    s[A1].compute_at(s[A2], tx)
    assert _int(tsch.InferBound(s)[A1.op.axis[0]].extent) == 32
    s[A1].set_scope("local")
    assert _int(tsch.InferBound(s)[A1.op.axis[0]].extent) == 1
    with pytest.raises(ValueError, match=r"binds i\.outer to blockIdx\.x"):
        tvm.lower(s, [A, A2])


def test_schedule_ops_allocates_inputs_and_outputs() -> None:
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1, name="B")
    s = te.create_schedule(B.op)
    stmt = tsch.ScheduleOps(s, tsch.InferBound(s))
    assert isinstance(stmt, S.Allocate)


def test_rfactor_partial_and_final_stages_compute_the_sum() -> None:
    A = te.placeholder((6, 37), name="A")
    k = te.reduce_axis((0, 37), name="k")
    B = te.compute((6,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    _, ki = s[B].split(k, factor=8)
    BF = s.rfactor(B, ki, factor_axis=1)
    assert [_int(d) for d in BF.shape] == [6, 8]
    assert _int(cast(Any, s[B].op).body[0].axis[0].dom.extent) == 8
    a = np.random.rand(6, 37).astype("float32")
    np.testing.assert_allclose(_run(s, [A, B], [a]), a.sum(axis=1), rtol=1e-5)


def test_groups_attach_their_stages_together() -> None:
    x = te.compute((4, 5), lambda i, j: te.const(1.0, "float32"), name="x")
    x1 = te.compute(x.shape, lambda *i: x(*i) + 1, name="x1")
    x2 = te.compute(x.shape, lambda *i: x1(*i) + 2, name="x2")
    s = te.create_schedule(x2.op)
    g = s.create_group(outputs=x1, inputs=x, include_inputs=True)
    assert s[x].group is g and s[x1].group is g and g.num_child_stages == 2
    g.compute_at(s[x2], x2.op.axis[0])
    bounds = tsch.InferBound(s)
    assert _int(bounds[x.op.axis[0]].extent) == 1
    assert _int(bounds[x1.op.axis[1]].extent) == 5
    np.testing.assert_allclose(_run(s, [x2], []), np.full((4, 5), 4.0, "float32"))


def test_stage_read_only_by_a_stage_attached_at_the_same_loop() -> None:
    # The x86 softmax schedule: the max is attached where only exp (attached there too) reads it.
    A = te.placeholder((3, 7), name="A")
    k = te.reduce_axis((0, 7), name="k")
    M = te.compute((3,), lambda i: te.max(A[i, k], axis=k), name="M")
    E = te.compute((3, 7), lambda i, j: te.exp(A[i, j] - M[i]), name="E")
    k2 = te.reduce_axis((0, 7), name="k2")
    S_ = te.compute((3,), lambda i: te.sum(E[i, k2], axis=k2), name="S")
    Out = te.compute((3, 7), lambda i, j: E[i, j] / S_[i], name="O")
    s = te.create_schedule(Out.op)
    for t in (M, E, S_):
        s[t].compute_at(s[Out], Out.op.axis[0])
    a = np.random.rand(3, 7).astype("float32")
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(_run(s, [A, Out], [a]), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_reduction_over_no_axes_is_its_source() -> None:
    A = te.placeholder((3, 4), name="A")
    B = te.compute((3, 4), lambda i, j: te.sum(A[i, j], axis=[]), name="B")
    a = np.random.rand(3, 4).astype("float32")
    np.testing.assert_allclose(_run(te.create_schedule(B.op), [A, B], [a]), a)


def test_reduction_range_and_combiner_using_the_data_axis() -> None:
    X = te.placeholder((10,), name="x")

    def f(n: tvm.tir.Var) -> tvm.tir.PrimExpr:
        rv = te.reduce_axis((0, n))
        init = lambda dtype: tvm.tir.Select(n > 1, te.const(0, dtype), n.astype(dtype))  # noqa: E731
        acc = te.comm_reducer(lambda a, b: te.max(a + b, n.astype("float32")), init, name="acc")
        reduced: tvm.tir.PrimExpr = acc(X[rv], axis=rv)
        return reduced

    Y = te.compute(X.shape, f, name="y")
    s = te.create_schedule(Y.op)
    s.cache_write(Y, "local")
    x = np.random.rand(10).astype("float32")
    want = []
    for n in range(10):
        v = 0.0 if n > 1 else float(n)
        for r in range(n):
            v = max(v + float(x[r]), float(n))
        want.append(v)
    np.testing.assert_allclose(_run(s, [X, Y], [x]), np.array(want, "float32"), rtol=1e-5)


def test_read_graph_and_post_order() -> None:
    A = te.placeholder((4,), name="A")
    A1 = te.compute((4,), lambda i: A[i], name="A1")
    A2 = te.compute((4,), lambda i: A1[i] + 3, name="A2")
    g = tsch.CreateReadGraph([A2.op])
    assert g[A2.op][0] is A1 or g[A2.op][0].op is A1.op
    assert tsch.PostDFSOrder([A2.op], g) == [A.op, A1.op, A2.op]


def test_fusing_no_axes_of_a_scalar_reduction_gives_one_loop() -> None:
    X = te.placeholder((10,), dtype="int32", name="X")
    k = te.reduce_axis((0, 10), name="k")
    Y = te.compute((), lambda: te.sum(X[k], axis=k), name="Y")
    s = te.create_schedule(Y.op)
    single = s[Y].fuse()
    assert isinstance(s[Y].relations[0], tsch.Singleton)
    assert s[Y].leaf_iter_vars == [single, k]
    s[Y].split(single, nparts=20)
    f = tvm.build(s, [X, Y], target="c")
    out = tvm.nd.empty((), "int32")
    f(tvm.nd.array(np.arange(10, dtype="int32")), out)
    assert int(out.numpy()) == 45


def _int(e: Any) -> int:
    return int(e)
