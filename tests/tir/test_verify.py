from __future__ import annotations

import pytest

from pytvm import tir
from pytvm.ffi.errors import TVMValueError
from pytvm.tir.verify import verify

S = tir.ForKind.SERIAL
A = tir.decl_buffer((4, 4), "float32", "A")


def _func(body: tir.Stmt) -> tir.PrimFunc:
    return tir.PrimFunc((A.data,), body, {A.data: A}, {"global_symbol": "k"})


def test_well_formed_function_passes() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    T = tir.decl_buffer((4,), "float32", "T")
    body = tir.Allocate(T, tir.For(i, tir.const(0), tir.const(4), S, tir.LetStmt(j, i + 1,
        tir.BufferStore(T, A.vload((i, j % 4)), (i,)))))  # fmt: skip
    verify(_func(body))
    verify(tir.IRModule.from_expr(_func(body)), stage="x")


def test_undefined_variable_and_unallocated_buffer() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    T = tir.decl_buffer((4,), "float32", "T")
    with pytest.raises(TVMValueError, match=r"function k: variable j .*after pass p1"):
        verify(_func(tir.For(i, tir.const(0), tir.const(4), S,
                             tir.BufferStore(A, tir.const(0.0), (i, j)))), stage="p1")  # fmt: skip
    with pytest.raises(TVMValueError, match="variable T"):
        verify(_func(tir.BufferStore(T, tir.const(0.0), (tir.const(0),))))


def test_loop_variable_rebound_inside_its_loop() -> None:
    i = tir.Var("i")
    inner = tir.For(i, tir.const(0), tir.const(4), S, tir.BufferStore(A, tir.const(0.0), (i, i)))
    with pytest.raises(TVMValueError, match="bound again"):
        verify(_func(tir.For(i, tir.const(0), tir.const(4), S, inner)))


def test_arity_and_lanes() -> None:
    load = tir.BufferLoad(A, (tir.const(0),))
    with pytest.raises(TVMValueError, match="1 indices for a 2-d buffer"):
        verify(_func(tir.Evaluate(load)))
    flat = tir.decl_buffer((16,), "float32", "F", data=A.data)
    ramp = tir.Ramp(tir.const(0), tir.const(1), 4)
    select = tir.Select(tir.Broadcast(tir.const(True), 2), tir.BufferLoad(flat, (ramp,)),
                        tir.BufferLoad(flat, (ramp,)))  # fmt: skip
    with pytest.raises(TVMValueError, match="condition of 2 lanes"):
        verify(_func(tir.BufferStore(flat, select, (ramp,))))


def test_float_index_is_rejected() -> None:
    flat = tir.decl_buffer((16,), "float32", "F", data=A.data)
    with pytest.raises(TVMValueError, match="index of type float32"):
        verify(_func(tir.Evaluate(tir.BufferLoad(flat, (tir.const(1.0),)))))
