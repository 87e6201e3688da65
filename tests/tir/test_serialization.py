"""ir.save_json / load_json: IR nodes survive the round trip with their sharing."""

from __future__ import annotations

import pytest

from pytvm import ir, te, tir


def test_a_tensor_expression_round_trips_with_attrs() -> None:
    A = te.placeholder((4, 3), name="A")
    with te.tag_scope(tag="gemm"):
        C = te.compute((4,), lambda i: A[i, 0] + 1.0, attrs={"hello": 1, "arr": [10, 12]})
    CC = ir.load_json(ir.save_json(C))
    assert isinstance(CC, te.Tensor) and CC.op.tag == "gemm"
    assert CC.op.attrs["hello"] == 1 and list(CC.op.attrs["arr"]) == [10, 12]
    assert tir.structural_equal(CC.op.body[0], C.op.body[0], map_free_vars=True)


def test_shared_nodes_stay_shared_and_ops_stay_ops() -> None:
    x = tir.Var("x", "float32")
    e = tir.exp(x) * tir.exp(x) + x
    back = ir.load_json(ir.save_json(e))
    assert back.b is back.a.a.args[0]
    assert back.a.a.op.name == "tir.exp"


def test_loop_ir_round_trips() -> None:
    i = tir.Var("i")
    A = tir.decl_buffer((8,), "float32", "A")
    loop = tir.For(
        i,
        tir.const(0),
        tir.const(8),
        tir.ForKind.SERIAL,
        tir.BufferStore(A, A.vload([i]) + 1.0, (i,)),
    )
    back = ir.load_json(ir.save_json(loop))
    assert back.kind is tir.ForKind.SERIAL
    assert tir.structural_equal(back, loop, map_free_vars=True)


def test_bad_text_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not JSON"):
        ir.load_json("{")
    with pytest.raises(ValueError, match="save_json"):
        ir.load_json('{"root": 1}')
    with pytest.raises(TypeError, match="cannot serialize"):
        ir.save_json(tir.Evaluate(tir.const(0)).__class__)  # a class is not a node
