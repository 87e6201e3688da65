"""Calls: Op objects, packed/extern/intrinsic calls, and decl_buffer's options."""

from __future__ import annotations

import pytest

from pytvm import ir, tir


def test_call_op_is_an_op_with_a_name() -> None:
    call = tir.call_intrin("float32", "tir.exp", tir.const(1.0))
    assert isinstance(call.op, tir.Op)
    assert call.op.name == "tir.exp" and call.op == "tir.exp"
    assert call.op.same_as(ir.Op.get("tir.exp"))
    exp = tir.exp(tir.Var("x", "float32"))
    assert isinstance(exp, tir.Call) and isinstance(exp.op, tir.Op) and exp.op.name == "tir.exp"


def test_unknown_ops_are_errors() -> None:
    with pytest.raises(ValueError, match="not registered"):
        ir.Op.get("tir.no_such_op")
    with pytest.raises(ValueError, match="not registered"):
        tir.call_intrin("float32", "no_such_op", 1.0)


def test_packed_and_extern_calls_carry_the_name_first() -> None:
    h = tir.Var("h", "handle")
    packed = tir.call_packed("vadd", h, 3)
    assert (packed.op, packed.dtype) == (ir.Op.get("tir.tvm_call_packed"), "int32")
    assert isinstance(packed.args[0], tir.StringImm) and packed.args[0].value == "vadd"
    ext = tir.call_extern("float32", "myfunc", h, "mode")
    assert ext.op == "tir.call_extern" and ext.dtype == "float32"
    assert [type(a).__name__ for a in ext.args] == ["StringImm", "Var", "StringImm"]


def test_decl_buffer_offset_factor_makes_an_offset_variable() -> None:
    buf = tir.decl_buffer((4, 8), "float32", name="A", offset_factor=16, data_alignment=128)
    assert isinstance(buf.elem_offset, tir.Var) and buf.offset_factor == 16
    assert buf.data_alignment == 128 and buf.scope == "global"
    plain = tir.decl_buffer((4,), name="B", scope="local")
    assert plain.dtype == "float32" and plain.scope == "local" and plain.data_alignment == 64
    fixed = tir.decl_buffer((4,), "int32", "C", elem_offset=2)
    assert isinstance(fixed.elem_offset, tir.IntImm) and fixed.elem_offset.value == 2


def test_vscale_is_an_int32_intrinsic_call() -> None:
    lanes = 4 * tir.vscale()
    assert isinstance(lanes, tir.Mul) and isinstance(lanes.b, tir.Call)
    assert lanes.b.op == "tir.vscale" and lanes.dtype == "int32"


def test_iter_var_kinds_have_tvm_names() -> None:
    assert tir.IterVar.Vectorized is tir.IterVarType.VECTORIZED and int(tir.IterVar.Vectorized) == 6
    assert int(tir.IterVar.Unrolled) == 5 and int(tir.IterVar.DataPar) == 0
