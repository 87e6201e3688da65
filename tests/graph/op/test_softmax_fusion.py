"""Softmax and log-softmax are reductions to the fuser (``COMM_REDUCE``): the elementwise and
injective operators that feed them (attention's scale and mask, a reshape) are inlined into
their first pass, and elementwise consumers of the same shape join their kernel; the built
graph matches the reference interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm.graph.functor import post_order
from pytvm.graph.interpreter import interpret
from pytvm.graph.transform import fuse_ops
from pytvm.runtime.graph_executor import GraphModule

F32 = "float32"


def _groups(func: g.Function) -> list[list[str]]:
    mod = fuse_ops(g.IRModule.from_expr(func))
    return [
        [str(n.op) for n in post_order(node.op.body) if isinstance(n, g.Call)]
        for node in post_order(mod["main"].body)
        if isinstance(node, g.Call) and isinstance(node.op, g.Function)
    ]


def _run(func: g.Function, feeds: dict[str, np.ndarray]) -> None:
    lib = g.build(g.IRModule.from_expr(func), target="llvm")
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input(None, None, **feeds)
    m.run()
    want = interpret(func, feeds)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=2e-5, atol=1e-6)


def _masked_scores(op: str, heads: int, tokens: int) -> g.Function:
    x = g.Var("x", g.TensorType((1, heads, tokens, tokens), F32))
    mask = g.Var("mask", g.TensorType((1, 1, 1, tokens), F32))
    scaled = g.call("add", g.call("divide", x, g.const(np.float32(8.0))), mask)
    return g.Function([x, mask], g.call(op, scaled, axis=-1))


@pytest.mark.parametrize("op", ["nn.softmax", "nn.log_softmax"])
def test_attention_scale_and_mask_fuse_into_the_softmax(op: str) -> None:
    func = _masked_scores(op, 2, 37)
    assert _groups(func) == [["divide", "add", op]]
    rng = np.random.default_rng(0)
    mask = np.where(rng.random((1, 1, 1, 37)) < 0.2, -1e4, 0).astype(F32)
    _run(func, {"x": rng.standard_normal((1, 2, 37, 37)).astype(F32) * 4, "mask": mask})


def test_reshaped_scores_and_an_elementwise_consumer_share_the_softmax_kernel() -> None:
    x = g.Var("x", g.TensorType((6, 20, 20), F32))
    rows = g.call(
        "reshape", g.call("multiply", x, g.const(np.float32(0.5))), newshape=[2, 3, 20, 20]
    )
    out = g.call("multiply", g.call("nn.softmax", rows, axis=-1), g.const(np.float32(3.0)))
    func = g.Function([x], out)
    assert _groups(func) == [["multiply", "reshape", "nn.softmax", "multiply"]]
    _run(func, {"x": np.random.default_rng(1).standard_normal((6, 20, 20)).astype(F32)})


def test_a_softmax_over_channels_fuses_its_producer() -> None:
    x = g.Var("x", g.TensorType((1, 21, 9, 13), F32))
    func = g.Function([x], g.call("nn.softmax", g.call("nn.relu", x), axis=1))
    assert _groups(func) == [["nn.relu", "nn.softmax"]]
    _run(func, {"x": np.random.default_rng(2).standard_normal((1, 21, 9, 13)).astype(F32)})
