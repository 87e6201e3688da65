from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pytvm import tir
from pytvm.tir.transform import LoopPartition, Simplify

S, V, P = tir.ForKind.SERIAL, tir.ForKind.VECTORIZED, tir.ForKind.PARALLEL


def _likely(cond: tir.PrimExpr) -> tir.PrimExpr:
    return tir.Call("bool", "tir.likely", (cond,))


def _mod(body: tir.Stmt, *bufs: tir.Buffer) -> tir.IRModule:
    params = tuple(b.data for b in bufs)
    func = tir.PrimFunc(params, body, {b.data: b for b in bufs}, {"global_symbol": "f"})
    return tir.IRModule.from_expr(func)


def _split_loop(
    n: tir.PrimExpr, extent: tir.PrimExpr, kind: tir.ForKind
) -> tuple[tir.IRModule, tir.Var, tir.Var, tir.Buffer, tir.Buffer]:
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    io, ii = tir.Var("io"), tir.Var("ii")
    idx = io * 8 + ii
    store = tir.BufferStore(B, A.vload((idx,)) * 2.0, (idx,))
    body = tir.For(
        io, tir.const(0), extent, P,
        tir.For(ii, tir.const(0), tir.const(8), kind, tir.IfThenElse(_likely(idx < n), store)),
    )  # fmt: skip
    return _mod(body, A, B), io, ii, A, B


def test_symbolic_extent_splits_into_main_and_guarded_tail() -> None:
    n = tir.Var("n")
    before, io, ii, A, B = _split_loop(n, (n + 7) // 8, V)
    after = LoopPartition(before)
    io2 = tir.Var("io")
    idx, idx2 = io * 8 + ii, io2 * 8 + ii
    main = tir.For(
        io, tir.const(0), n // 8, P,
        tir.For(ii, tir.const(0), tir.const(8), V,
                tir.IfThenElse(tir.const(True), tir.BufferStore(B, A.vload((idx,)) * 2.0, (idx,)))),
    )  # fmt: skip
    tail = tir.For(  # at most one iteration: serial, not a parallel launch
        io2, n // 8, (n + 7) // 8 - n // 8, S,
        tir.For(ii, tir.const(0), tir.const(8), V,
                tir.IfThenElse(idx2 < n, tir.BufferStore(B, A.vload((idx2,)) * 2.0, (idx2,)))),
    )  # fmt: skip
    tir.assert_structural_equal(after["f"].body, tir.seq(main, tail), map_free_vars=True)


def test_constant_non_divisible_extent() -> None:
    before, *_ = _split_loop(tir.const(20), tir.const(3), S)
    after = LoopPartition(before)["f"].body
    assert isinstance(after, tir.SeqStmt)
    main, tail = after.seq
    assert isinstance(main, tir.For) and isinstance(tail, tir.For)
    assert (main.extent.value, tail.min.value, tail.extent.value) == (2, 2, 1)  # type: ignore[attr-defined]
    assert "likely" not in str(after)


def test_divisible_guard_drops_tail() -> None:
    before, *_ = _split_loop(tir.const(24), tir.const(3), S)
    after = LoopPartition(before)["f"].body
    assert isinstance(after, tir.For)
    assert after.extent.value == 3  # type: ignore[attr-defined]
    inner = after.body
    assert isinstance(inner, tir.For) and isinstance(inner.body, tir.IfThenElse)
    tir.assert_structural_equal(inner.body.condition, tir.const(True))


def test_lower_bound_guard_gives_suffix_main() -> None:
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i")
    body = tir.For(
        i, tir.const(0), tir.const(16), S,
        tir.IfThenElse(_likely(i >= 3), tir.BufferStore(A, tir.const(1.0), (i,))),
    )  # fmt: skip
    after = LoopPartition(_mod(body, A))["f"].body
    assert isinstance(after, tir.SeqStmt)
    tail, main = after.seq
    assert isinstance(main, tir.For) and isinstance(tail, tir.For)
    assert (tail.extent.value, main.min.value, main.extent.value) == (3, 3, 13)  # type: ignore[attr-defined]


def test_guard_not_on_loop_var_is_kept_and_likely_stripped() -> None:
    A = tir.decl_buffer((16,), "float32", "A")
    i, m = tir.Var("i"), tir.Var("m")
    body = tir.For(
        i, tir.const(0), tir.const(16), S,
        tir.IfThenElse(_likely(A.vload((i,)) > 0.0), tir.BufferStore(A, tir.const(1.0), (i,))),
    )  # fmt: skip
    del m
    after = LoopPartition(_mod(body, A))["f"].body
    expected = tir.For(
        i, tir.const(0), tir.const(16), S,
        tir.IfThenElse(A.vload((i,)) > 0.0, tir.BufferStore(A, tir.const(1.0), (i,))),
    )  # fmt: skip
    tir.assert_structural_equal(after, expected)


def test_likely_of_conjunction_is_cut_per_bound(run_tir: Callable[..., None]) -> None:
    n, m = tir.Var("n"), tir.Var("m")
    A = tir.decl_buffer((n, m), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    guard = _likely(tir.And(i < n, j < m))
    body = tir.For(i, tir.const(0), tir.const(8), S, tir.For(j, tir.const(0), tir.const(8), S,
                   tir.IfThenElse(guard, tir.BufferStore(A, tir.const(1.0), (i, j)))))  # fmt: skip
    after = LoopPartition(_mod(body, A))["f"].body
    # i is cut at min(n, 8): a main part whose only guard left is j < m, and a tail
    assert isinstance(after, tir.SeqStmt) and len(after.seq) == 2
    assert "likely" not in str(after)
    for rows, cols in ((3, 5), (8, 8), (10, 2)):
        a, b = np.zeros((rows, cols), "float32"), np.zeros((rows, cols), "float32")
        run_tir(_mod(body, A)["f"], [a])
        run_tir(_mod(after, A)["f"], [b])
        np.testing.assert_array_equal(a, b)


def _conditions_left(stmt: tir.Stmt) -> list[tir.PrimExpr]:
    """The ``IfThenElse`` conditions in ``stmt`` that are not the constant ``True``."""
    left: list[tir.PrimExpr] = []

    class _Conditions(tir.IRVisitor):
        def visit_IfThenElse(self, node: tir.IfThenElse) -> None:
            if not (isinstance(node.condition, tir.IntImm) and node.condition.value):
                left.append(node.condition)
            self.generic_visit(node)

    _Conditions().visit(stmt)
    return left


def _two_bound_guards() -> tuple[tir.IRModule, tir.Buffer]:
    """``for v: for i in [0, 16): if likely(v*16+i < n): if likely(v*16+i < m): A[.] = 1``."""
    n, m = tir.Var("n"), tir.Var("m")
    A = tir.decl_buffer((n, m), "float32", "A")
    v, i = tir.Var("v"), tir.Var("i")
    idx = v * 16 + i
    store = tir.BufferStore(A, tir.const(1.0), (idx, idx))
    body = tir.For(
        v, tir.const(0), (tir.max(n, m) + 15) // 16, S,
        tir.For(i, tir.const(0), tir.const(16), S,
                tir.IfThenElse(_likely(idx < n), tir.IfThenElse(_likely(idx < m), store))),
    )  # fmt: skip
    return _mod(body, A), A


def test_guard_left_in_a_tail_stays_blocked_after_a_cut_on_another(
    run_tir: Callable[..., None],
) -> None:
    # The tail of the cut on `< n` is cut on `< m`; the tail of that renames v, and `< n` must
    # stay blocked under the new name (it used not to be: the two cuts alternated without end).
    before, A = _two_bound_guards()
    after = LoopPartition(before)["f"].body
    assert isinstance(after, tir.SeqStmt)
    loops = after.seq
    assert len(loops) == 4 and all(isinstance(loop, tir.For) for loop in loops)
    assert not _conditions_left(loops[0])  # the main part runs guard-free
    assert "likely" not in str(after)
    for n, m in ((40, 21), (21, 40), (32, 32), (5, 37)):
        a, b = np.zeros((n, m), "float32"), np.zeros((n, m), "float32")
        run_tir(before["f"], [a])
        run_tir(_mod(after, A)["f"], [b])
        np.testing.assert_array_equal(a, b)
        assert a.sum() == min(n, m)


def _tiled_matmul_at() -> tuple[tir.IRModule, tuple[tir.Buffer, ...]]:
    """13x21x7 matmul tiled 4x8 with k split by 3, a local stage computed at the tile loop.

    As the schedule lowers it: each stage's statement sits under one ``likely`` guard per bound
    (nested), the same bound recurring under differently named inner loops.
    """
    m, n, k = 13, 21, 7
    A = tir.decl_buffer((m, k), "float32", "A")
    B = tir.decl_buffer((k, n), "float32", "B")
    C = tir.decl_buffer((m, n), "float32", "C")
    CL = tir.decl_buffer((4, 8), "float32", "C.local")
    CL = tir.Buffer(CL.data, CL.dtype, CL.shape, CL.name, scope="local")
    xo, yo, ko, ki = tir.Var("xo"), tir.Var("yo"), tir.Var("ko"), tir.Var("ki")

    def guarded(x: tir.Var, y: tir.Var, store: tir.Stmt, k_guard: bool = False) -> tir.Stmt:
        inner = tir.IfThenElse(_likely(yo * 8 + y < n), store)
        stmt = tir.IfThenElse(_likely(xo * 4 + x < m), inner)
        return tir.IfThenElse(_likely(ko * 3 + ki < k), stmt) if k_guard else stmt

    def tile(x: tir.Var, y: tir.Var, body: tir.Stmt) -> tir.Stmt:
        return tir.For(
            x, tir.const(0), tir.const(4), S, tir.For(y, tir.const(0), tir.const(8), V, body)
        )

    i0, i1, i2, i3, xi, yi = (tir.Var(s) for s in ("i0", "i1", "i0", "i1", "xi", "yi"))
    init = tile(i0, i1, guarded(i0, i1, tir.BufferStore(CL, tir.const(0.0), (i0, i1))))
    kk = ko * 3 + ki
    acc = CL.vload((i2, i3)) + A.vload((xo * 4 + i2, kk)) * B.vload((kk, yo * 8 + i3))
    update = tir.For(ko, tir.const(0), tir.const(3), S, tir.For(
        i2, tir.const(0), tir.const(4), S, tir.For(
            ki, tir.const(0), tir.const(3), S, tir.For(
                i3, tir.const(0), tir.const(8), V,
                guarded(i2, i3, tir.BufferStore(CL, acc, (i2, i3)), k_guard=True)))))  # fmt: skip
    out = tile(xi, yi, guarded(xi, yi, tir.BufferStore(
        C, CL.vload((xi, yi)), (xo * 4 + xi, yo * 8 + yi))))  # fmt: skip
    tiles = tir.For(yo, tir.const(0), tir.const(3), S, tir.Allocate(CL, tir.seq(init, update, out)))
    body = tir.For(xo, tir.const(0), tir.const(4), P, tiles)
    return _mod(body, A, B, C), (A, B, C)


def test_tiled_matmul_with_a_stage_at_the_tile_loop(run_tir: Callable[..., None]) -> None:
    before, _ = _tiled_matmul_at()
    after = LoopPartition(before)
    body = after["f"].body
    assert isinstance(body, tir.SeqStmt) and len(body.seq) == 2  # full row tiles, last row tile
    yo_parts = body.seq[0].body  # type: ignore[attr-defined]
    assert isinstance(yo_parts, tir.SeqStmt) and len(yo_parts.seq) == 2
    full_tile = yo_parts.seq[0].body  # type: ignore[attr-defined]
    assert isinstance(full_tile, tir.Allocate) and isinstance(full_tile.body, tir.SeqStmt)
    init, k_parts, out = full_tile.body.seq
    assert isinstance(k_parts, tir.SeqStmt)
    k_main, k_tail = k_parts.seq  # k is cut where its own guard stops holding
    for part in (init, k_main, out):  # a full tile runs guard-free
        assert not _conditions_left(part)
    assert _conditions_left(k_tail)
    # Constant bounds: what the tails keep is decided there, so nothing is left to test at run time.
    assert not _conditions_left(Simplify(after)["f"].body)
    rng = np.random.default_rng(0)
    a = rng.random((13, 7), dtype=np.float32)
    b = rng.random((7, 21), dtype=np.float32)
    c = np.zeros((13, 21), "float32")
    run_tir(after["f"], [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_cache_read_computed_at_an_outer_split_loop() -> None:
    # A stage computed at `jo` (its copy loop guarded like C's own loops) with C's inner loops
    # unrolled and vectorized: the guard of the copy and of C share one cut point.
    import pytvm
    from pytvm import te

    A = te.placeholder((16, 12), name="A")
    B = te.placeholder((12, 20), name="B")
    r = te.reduce_axis((0, 12), "k")
    C = te.compute((16, 20), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C.op)
    BB = s.cache_read(B, "global", [C.op])
    io, ii = s[C].split(C.op.axis[0], factor=4)
    jo, ji = s[C].split(C.op.axis[1], factor=8)
    s[C].reorder(jo, io, r, ii, ji)
    s[BB].compute_at(s[C], jo)
    s[C].unroll(ii)
    s[C].vectorize(ji)
    lowered = pytvm.lower(s, [A, B, C])
    assert not _conditions_left(lowered["main"].body)
    f = pytvm.build(s, [A, B, C], target="c", name="mm")
    rng = np.random.default_rng(1)
    a = rng.random((16, 12), dtype=np.float32)
    b = rng.random((12, 20), dtype=np.float32)
    c = pytvm.nd.empty((16, 20), "float32")
    f["mm"](pytvm.nd.array(a), pytvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5)
