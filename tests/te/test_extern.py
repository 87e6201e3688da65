"""``te.extern``: outputs written by a statement over buffers, bound to the real buffers when
lowered (function arguments, or allocations read by later stages).
"""

from __future__ import annotations

import numpy as np

import pytvm
from pytvm import te, tir
from pytvm.te.extern import ExternOp
from pytvm.tir import stmt as S
from pytvm.tir.expr import Buffer, BufferLoad, Call, Var, const
from pytvm.tir.functor import post_order_visit


def _double(ins: list[Buffer], outs: list[Buffer]) -> S.Stmt:
    i = Var("i", "int32")
    store = S.BufferStore(outs[0], BufferLoad(ins[0], (i,)) * 2.0, (i,))
    return S.For(i, const(0), ins[0].shape[0], S.ForKind.SERIAL, store)


def test_extern_declares_outputs() -> None:
    m = te.size_var("m")
    A = te.placeholder((m,), name="A")
    res = te.extern(
        [A.shape, A.shape],
        [A],
        lambda ins, outs: tir.call_packed("f", ins[0].data, outs[0].data, outs[1].data),
    )
    assert isinstance(res, list) and len(res) == 2 and res[1].value_index == 1
    assert isinstance(res[0].op, ExternOp) and res[0].op.input_tensors == (A,)


def test_extern_call_gets_the_argument_buffers() -> None:
    A = te.placeholder((4,), name="A")
    C = te.extern((4,), [A], lambda ins, outs: tir.call_packed("f", ins[0].data, outs[0].data))
    assert isinstance(C, te.Tensor)
    s = te.create_schedule(C.op)
    func = pytvm.lower(s, [A, C])["main"]
    calls: list[Call] = []
    post_order_visit(func.body, lambda n: calls.append(n) if isinstance(n, Call) else None)
    assert [str(a) for a in calls[0].args[1:]] == [str(p) for p in func.params]


def test_extern_statement_runs_between_computes() -> None:
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.extern((8,), [B], _double, name="C")
    assert isinstance(C, te.Tensor)
    D = te.compute((8,), lambda i: C[i] - 3.0, name="D")
    s = te.create_schedule(D.op)
    f = pytvm.build(s, [A, D], target="llvm")
    a = np.random.uniform(size=8).astype("float32")
    d = pytvm.nd.empty((8,))
    f(pytvm.nd.array(a), d)
    np.testing.assert_allclose(d.numpy(), (a + 1) * 2 - 3, rtol=1e-6)
