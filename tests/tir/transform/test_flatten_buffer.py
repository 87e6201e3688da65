from __future__ import annotations

import pytest

from pytvm import tir
from pytvm.ffi.errors import TVMValueError
from pytvm.tir.transform import FlattenBuffer
from pytvm.tir.verify import verify

S = tir.ForKind.SERIAL


def _mod(body: tir.Stmt, *bufs: tir.Buffer) -> tir.IRModule:
    func = tir.PrimFunc(
        tuple(b.data for b in bufs), body, {b.data: b for b in bufs}, {"global_symbol": "f"}
    )
    return tir.IRModule.from_expr(func)


def test_row_major_with_symbolic_shape_keeps_data_var() -> None:
    n = tir.Var("n")
    A = tir.decl_buffer((n, 4), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.For(i, tir.const(0), n, S, tir.For(j, tir.const(0), tir.const(4), S,
                   tir.BufferStore(A, A.vload((i, j)) + 1.0, (i, j))))  # fmt: skip
    after = FlattenBuffer(_mod(body, A))["f"]
    store = after.body.body.body  # type: ignore[attr-defined]
    assert isinstance(store, tir.BufferStore)
    flat = store.buffer
    assert flat.data is A.data and flat.ndim == 1
    tir.assert_structural_equal(flat.shape[0], n * 4)
    tir.assert_structural_equal(store.indices[0], i * 4 + j)
    assert after.buffer_map[A.data] is A  # the argument keeps its N-d shape
    assert after.attrs["tir.flattened"] is True


def test_strided_buffer_and_allocate() -> None:
    A = tir.decl_buffer((3, 5), "float32", "A", strides=(8, 1))
    T = tir.decl_buffer((2, 3, 4), "float32", "T", scope="local")
    i = tir.Var("i")
    body = tir.Allocate(T, tir.For(i, tir.const(0), tir.const(3), S, tir.seq(
        tir.BufferStore(T, A.vload((i, 2)), (tir.const(1), i, tir.const(3))),
        tir.BufferStore(A, T.vload((1, i, 3)), (i, tir.const(0))),
    )))  # fmt: skip
    after = FlattenBuffer(_mod(body, A))["f"].body
    assert isinstance(after, tir.Allocate)
    tir.assert_structural_equal(after.buffer.shape[0], tir.const(24))
    first, second = after.body.body.seq  # type: ignore[attr-defined]
    tir.assert_structural_equal(first.indices[0], 12 + i * 4 + 3)
    tir.assert_structural_equal(first.value.indices[0], i * 8 + 2)
    tir.assert_structural_equal(second.indices[0], i * 8)


def test_verify_rejects_multi_dim_access_after_flatten() -> None:
    A = tir.decl_buffer((2, 2), "float32", "A")
    body = tir.BufferStore(A, tir.const(0.0), (tir.const(0), tir.const(1)))
    func = _mod(body, A)["f"].with_attr("tir.flattened", True)
    with pytest.raises(TVMValueError, match="2-d after flattening"):
        verify(func, stage="flatten_buffer")
