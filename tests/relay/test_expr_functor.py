"""``relay.expr_functor`` visitors and ``relay.analysis.post_order_visit`` over the graph IR."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import relay
from pytvm.ffi.errors import TVMValueError
from pytvm.relay.expr_functor import ExprMutator, ExprVisitor


def _graph() -> tuple[Any, Any]:
    x = relay.var("x", shape=(3,))
    shared = relay.exp(x)
    return x, relay.Tuple([relay.add(shared, shared), relay.negative(shared)])


def test_visitor_sees_each_shared_node_once() -> None:
    seen: list[str] = []

    class Calls(ExprVisitor):
        def visit_call(self, call: Any) -> None:
            seen.append(call.op)
            super().visit_call(call)

    _, out = _graph()
    Calls().visit(out)
    assert sorted(seen) == ["add", "exp", "negative"]


def test_post_order_visit_puts_producers_first() -> None:
    order: list[str] = []
    x, out = _graph()
    relay.analysis.post_order_visit(out, lambda e: order.append(type(e).__name__))
    assert order[0] == "Var" and order[-1] == "Tuple" and order.count("Var") == 1
    assert relay.analysis.free_vars(out) == [x]


def test_mutator_rewrites_and_the_result_runs() -> None:
    class ExpToSigmoid(ExprMutator):
        def visit_call(self, call: Any) -> Any:
            new = super().visit_call(call)
            return relay.sigmoid(new.args[0]) if new.op == "exp" else new

    x = relay.var("x", shape=(3,))
    func = relay.Function([x], relay.add(relay.exp(x), relay.const(1.0)))
    rewritten = ExpToSigmoid().visit(func)
    assert ExprMutator().visit(rewritten) is rewritten  # nothing changed: same node back
    data = np.array([-1.0, 0.0, 2.0], dtype="float32")
    mod = tvm.graph.IRModule.from_expr(rewritten)
    got = relay.create_executor("graph", mod, tvm.cpu(), "llvm")
    result = got.evaluate()(data).numpy()
    np.testing.assert_allclose(result, 1.0 / (1.0 + np.exp(-data)) + 1.0, rtol=1e-5)


def test_top_level_irmodule_picks_the_module_kind() -> None:
    from pytvm import te, tir

    x = relay.var("x", shape=(3,))
    graph_mod = tvm.IRModule({"main": relay.Function([x], relay.exp(x))})
    assert isinstance(graph_mod, tvm.IRModule) and isinstance(graph_mod, tvm.graph.IRModule)
    a = te.placeholder((4,), name="A")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="B")
    kernel_mod = tvm.IRModule.from_expr(te.create_prim_func([a, b]))
    assert isinstance(kernel_mod, tir.IRModule) and isinstance(kernel_mod, tvm.IRModule)
    assert not isinstance(object(), tvm.IRModule)
    with pytest.raises(TVMValueError, match="separate modules"):
        tvm.IRModule({"f": relay.Function([x], x), "g": te.create_prim_func([a, b])})
