from __future__ import annotations

from pytvm import tir
from pytvm.tir.transform import StorageRewrite

S, P = tir.ForKind.SERIAL, tir.ForKind.PARALLEL
A = tir.decl_buffer((16,), "float32", "A")


def _run(body: tir.Stmt) -> tir.Stmt:
    func = tir.PrimFunc((A.data,), body, {A.data: A}, {"global_symbol": "f", "tir.flattened": True})
    return StorageRewrite(tir.IRModule.from_expr(func))["f"].body


def _copy(dst: tir.Buffer, src: tir.Buffer, i: tir.Var) -> tir.Stmt:
    return tir.For(i, tir.const(0), tir.const(4), S, tir.BufferStore(dst, src.vload((i,)), (i,)))


def test_disjoint_lifetimes_share_memory() -> None:
    T1 = tir.decl_buffer((8,), "float32", "T1")
    T2 = tir.decl_buffer((4,), "float32", "T2")
    i, j, k, m = (tir.Var(c) for c in "ijkm")
    before = tir.Allocate(T1, tir.Allocate(T2, tir.seq(
        _copy(T1, A, i), _copy(A, T1, j),  # T1 dies here
        _copy(T2, A, k), _copy(A, T2, m),
    )))  # fmt: skip
    after = _run(before)
    assert isinstance(after, tir.Allocate) and after.buffer is T1
    assert not isinstance(after.body, tir.Allocate)
    third = after.body.seq[2]  # type: ignore[attr-defined]
    assert third.body.buffer.data is T1.data  # T2 now lives in T1's memory
    assert third.body.buffer.shape == T2.shape


def test_overlapping_or_larger_buffers_keep_their_own() -> None:
    T1 = tir.decl_buffer((4,), "float32", "T1")
    T2 = tir.decl_buffer((8,), "float32", "T2")
    T3 = tir.decl_buffer((4,), "int32", "T3")
    i, j, k = (tir.Var(c) for c in "ijk")
    before = tir.Allocate(T1, tir.Allocate(T2, tir.Allocate(T3, tir.seq(
        _copy(T1, A, i), _copy(T2, T1, j),  # T2 is larger than T1
        tir.For(k, tir.const(0), tir.const(4), S, tir.BufferStore(T3, k, (k,))),  # other dtype
    ))))  # fmt: skip
    tir.assert_structural_equal(_run(before), before)


def test_allocation_hoisted_out_of_serial_loop_not_parallel() -> None:
    T = tir.decl_buffer((4,), "float32", "T")
    U = tir.decl_buffer((4,), "float32", "U")
    o, p, i, j = (tir.Var(c) for c in "opij")
    before = tir.seq(
        tir.For(o, tir.const(0), tir.const(2), S, tir.Allocate(T, _copy(T, A, i))),
        tir.For(p, tir.const(0), tir.const(2), P, tir.Allocate(U, _copy(U, A, j))),
    )
    expected = tir.Allocate(T, tir.seq(
        tir.For(o, tir.const(0), tir.const(2), S, _copy(T, A, i)),
        tir.For(p, tir.const(0), tir.const(2), P, tir.Allocate(U, _copy(U, A, j))),
    ))  # fmt: skip
    tir.assert_structural_equal(_run(before), expected)


def test_size_depending_on_loop_stays_inside() -> None:
    o, i = tir.Var("o"), tir.Var("i")
    T = tir.decl_buffer((o + 1,), "float32", "T")
    before = tir.For(o, tir.const(0), tir.const(4), S, tir.Allocate(T, _copy(T, A, i)))
    tir.assert_structural_equal(_run(before), before)


def test_symbolic_sizes_share_when_equal() -> None:
    n = tir.Var("n")
    X = tir.decl_buffer((n,), "float32", "X")
    T1 = tir.decl_buffer((n * 2,), "float32", "T1")
    T2 = tir.decl_buffer((n * 2,), "float32", "T2")
    T3 = tir.decl_buffer((n * 3,), "float32", "T3")
    i, j, k, m, p, q = (tir.Var(c) for c in "ijkmpq")

    def copy(dst: tir.Buffer, src: tir.Buffer, v: tir.Var) -> tir.Stmt:
        return tir.For(v, tir.const(0), n, S, tir.BufferStore(dst, src.vload((v,)), (v,)))

    body = tir.Allocate(T1, tir.Allocate(T2, tir.Allocate(T3, tir.seq(
        copy(T1, X, i), copy(X, T1, j),
        copy(T2, X, k), copy(X, T2, m),  # same symbolic size as T1: shares it
        copy(T3, X, p), copy(X, T3, q),  # larger (n*3): keeps its own
    ))))  # fmt: skip
    func = tir.PrimFunc((X.data,), body, {X.data: X}, {"global_symbol": "f", "tir.flattened": True})
    after = StorageRewrite(tir.IRModule.from_expr(func))["f"].body
    assert isinstance(after, tir.Allocate) and after.buffer is T1
    assert isinstance(after.body, tir.Allocate) and after.body.buffer is T3
    steps = after.body.body.seq  # type: ignore[attr-defined]
    assert steps[2].body.buffer.data is T1.data and steps[4].body.buffer.data is T3.data
