from __future__ import annotations

from pytvm import tir
from pytvm.ir.transform import PassContext
from pytvm.tir.transform import VectorizeLoop

S, V = tir.ForKind.SERIAL, tir.ForKind.VECTORIZED
N = tir.Var("n")


def _mod(body: tir.Stmt, *bufs: tir.Buffer) -> tir.IRModule:
    func = tir.PrimFunc(
        (*(b.data for b in bufs), N), body, {b.data: b for b in bufs}, {"global_symbol": "f"}
    )
    return tir.IRModule.from_expr(func.with_attr("tir.flattened", True))


def _run(body: tir.Stmt, *bufs: tir.Buffer) -> tir.Stmt:
    return VectorizeLoop(_mod(body, *bufs))["f"].body


A = tir.decl_buffer((64,), "float32", "A")
B = tir.decl_buffer((64,), "float32", "B")
io, ii = tir.Var("io"), tir.Var("ii")


def test_linear_index_becomes_ramp_and_invariants_broadcast() -> None:
    x = tir.Var("x", "float32")
    store = tir.BufferStore(B, tir.exp(A.vload((io * 8 + ii,))) * x + 1.0, (io * 8 + ii,))
    before = tir.For(io, tir.const(0), tir.const(8), S, tir.For(ii, tir.const(0), tir.const(8), V,
                                                                store))  # fmt: skip
    ramp = tir.Ramp(io * 8, tir.const(1), 8)
    value = tir.Call("float32x8", "tir.exp", (A.vload((ramp,)),))
    expected = tir.For(io, tir.const(0), tir.const(8), S, tir.BufferStore(
        B, tir.Add(tir.Mul(value, tir.Broadcast(x, 8)), tir.Broadcast(tir.const(1.0), 8)), (ramp,)
    ))  # fmt: skip
    mod = _mod(before, A, B)
    func = tir.PrimFunc((A.data, B.data, x), before, {A.data: A, B.data: B},
                        {"global_symbol": "f", "tir.flattened": True})  # fmt: skip
    after = VectorizeLoop(tir.IRModule.from_expr(func))["f"].body
    del mod
    tir.assert_structural_equal(after, expected)


def test_select_and_comparison_are_lane_wise() -> None:
    i = tir.Var("i")
    value = tir.Select(A.vload((i,)) > 0.0, A.vload((i,)), tir.const(0.0))
    before = tir.For(i, tir.const(4), tir.const(4), V, tir.BufferStore(B, value, (i,)))
    ramp = tir.Ramp(tir.const(4), tir.const(1), 4)
    load = A.vload((ramp,))
    expected = tir.BufferStore(B, tir.Select(
        tir.GT(load, tir.Broadcast(tir.const(0.0), 4)), load, tir.Broadcast(tir.const(0.0), 4)
    ), (ramp,))  # fmt: skip
    tir.assert_structural_equal(_run(before, A, B), expected)


def _serial(before: tir.For) -> tir.Stmt:
    from dataclasses import replace

    return replace(before, kind=S)


def test_reduction_into_one_element_stays_serial() -> None:
    k = tir.Var("k")
    before = tir.For(k, tir.const(0), tir.const(8), V,
                     tir.BufferStore(B, B.vload((tir.const(0),)) + A.vload((k,)),
                                     (tir.const(0),)))  # fmt: skip
    tir.assert_structural_equal(_run(before, A, B), _serial(before))


def test_guard_inner_loop_gather_and_wide_loops_stay_serial() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    guarded = tir.For(i, tir.const(0), tir.const(8), V,
                      tir.IfThenElse(i < 5, tir.BufferStore(B, tir.const(1.0), (i,))))  # fmt: skip
    nested = tir.For(i, tir.const(0), tir.const(4), V, tir.For(j, tir.const(0), tir.const(4), S,
                     tir.BufferStore(B, tir.const(1.0), (i * 4 + j,))))  # fmt: skip
    gather = tir.For(i, tir.const(0), tir.const(8), V,
                     tir.BufferStore(B, A.vload((i * i,)), (i,)))  # fmt: skip
    wide = tir.For(i, tir.const(0), tir.const(128), V, tir.BufferStore(B, tir.const(1.0), (i,)))
    symbolic = tir.For(i, tir.const(0), N, V, tir.BufferStore(B, tir.const(1.0), (i,)))
    shifted = tir.For(i, tir.const(0), tir.const(8), V,
                      tir.BufferStore(B, B.vload((i + 1,)), (i,)))  # fmt: skip
    for loop in (guarded, nested, gather, wide, symbolic, shifted):
        tir.assert_structural_equal(_run(loop, A, B), _serial(loop))


def test_disable_vectorize_config() -> None:
    i = tir.Var("i")
    loop = tir.For(i, tir.const(0), tir.const(8), V, tir.BufferStore(B, A.vload((i,)), (i,)))
    with PassContext(config={"tir.disable_vectorize": True, "tir.verify": True}):
        tir.assert_structural_equal(_run(loop, A, B), _serial(loop))
