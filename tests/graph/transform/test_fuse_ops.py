"""FuseOps: groups by operator pattern, compared with the expected fused graph."""

from __future__ import annotations

import numpy as np

from pytvm import graph as g
from pytvm.graph.attrs import Attrs
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import fuse_ops
from pytvm.ir.transform import PassContext

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _conv(x: g.Expr, w: g.Expr) -> g.Call:
    return g.call("nn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1))


def _primitive(params: list[g.Var], body: g.Expr, hint: str) -> g.Function:
    return g.Function(params, body, Attrs.of(Primitive=1, hint=hint))


def _ops_in_groups(mod: g.IRModule) -> list[list[str]]:
    from pytvm.graph.functor import post_order

    groups = []
    for node in post_order(mod["main"].body):
        if isinstance(node, g.Call) and isinstance(node.op, g.Function):
            groups.append([str(n.op) for n in post_order(node.op.body) if isinstance(n, g.Call)])
    return groups


def test_conv_bias_relu_and_residual_add_fuse_into_one_kernel() -> None:
    w = g.const(np.ones((3, 3, 3, 3), F32))
    b = g.const(np.ones((3, 1, 1), F32))
    x = _var("x", 1, 3, 5, 5)
    out = g.call("add", g.call("nn.relu", g.call("add", _conv(x, w), b)), x)
    after = fuse_ops(g.IRModule.from_expr(g.Function([x], out)))

    p0, p1, p2 = _var("p0", 1, 3, 5, 5), _var("p1", 3, 3, 3, 3), _var("p2", 3, 1, 1)
    conv = _conv(p0, p1)
    fn = _primitive(
        [p0, p1, p2],
        g.call("add", g.call("nn.relu", g.call("add", conv, p2)), p0),
        "nn_conv2d_add_nn_relu_add",
    )
    x2 = _var("x", 1, 3, 5, 5)
    expected = g.Function([x2], g.Call(fn, (x2, w, b)))
    assert_structural_equal(after, g.IRModule.from_expr(expected))


def test_two_convolutions_are_two_kernels() -> None:
    w = g.const(np.ones((3, 3, 3, 3), F32))
    x = _var("x", 1, 3, 5, 5)
    out = g.call("nn.relu", _conv(g.call("nn.relu", _conv(x, w)), w))
    after = fuse_ops(g.IRModule.from_expr(g.Function([x], out)))
    assert _ops_in_groups(after) == [["nn.conv2d", "nn.relu"], ["nn.conv2d", "nn.relu"]]


def test_a_value_read_twice_ends_its_group() -> None:
    x = _var("x", 4, 4)
    e = g.call("exp", x)
    out = g.call("add", g.call("sqrt", e), g.call("log", e))
    after = fuse_ops(g.IRModule.from_expr(g.Function([x], out)))
    # exp feeds two consumers: it is its own kernel; sqrt, log and add fuse together
    assert _ops_in_groups(after) == [["exp"], ["sqrt", "log", "add"]]


def test_injective_ops_fuse_into_a_reduction_and_elementwise_ops_after_it() -> None:
    x = _var("x", 2, 3, 4)
    t = g.call("transpose", g.call("exp", x), axes=(0, 2, 1))
    s = g.call("sum", t, axis=(2,), keepdims=True)
    out = g.call("sqrt", s)
    after = fuse_ops(g.IRModule.from_expr(g.Function([x], out)))
    assert _ops_in_groups(after) == [["exp", "transpose", "sum", "sqrt"]]


def test_a_reduction_does_not_absorb_a_broadcast_that_changes_its_shape() -> None:
    x = _var("x", 2, 3)
    s = g.call("sum", x, axis=(1,), keepdims=True)
    out = g.call("add", s, x)  # (2, 1) + (2, 3): the sum's result is broadcast
    after = fuse_ops(g.IRModule.from_expr(g.Function([x], out)))
    assert _ops_in_groups(after) == [["sum"], ["add"]]


def test_opt_level_zero_leaves_every_operator_alone() -> None:
    x = _var("x", 4)
    out = g.call("sqrt", g.call("exp", x))
    with PassContext(opt_level=0) as ctx:
        after = fuse_ops(g.IRModule.from_expr(g.Function([x], out)), ctx)
    assert _ops_in_groups(after) == [["exp"], ["sqrt"]]
