"""Heterogeneous placement: on_device annotations, device copies, seed 004's propagation, and a
graph built and run across the CPU and ``ext_dev``.
"""

from __future__ import annotations

import numpy as np

import pytvm
from pytvm import graph as g
from pytvm.graph.functor import post_order
from pytvm.graph.interpreter import interpret
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import device_map, rewrite_annotated_ops
from pytvm.runtime.graph_executor import GraphExecutor, GraphModule
from pytvm.testing.ext_device import EXT_DEV, host_pool_ext_dev

CPU = 1
F32 = "float32"


def _var(name: str) -> g.Var:
    return g.Var(name, g.TensorType((4, 8), F32))


def _copy(x: g.Expr, src: int, dst: int) -> g.Call:
    return g.call("device_copy", x, src_dev_type=src, dst_dev_type=dst)


def test_propagation_gives_the_placement_seed_004_derives() -> None:
    x, y = _var("x"), _var("y")
    add = g.call("add", x, y)
    sqrt = g.call("sqrt", _copy(add, CPU, EXT_DEV))
    log = g.call("log", _copy(add, CPU, EXT_DEV))
    sub = g.call("subtract", _copy(sqrt, EXT_DEV, CPU), _copy(log, EXT_DEV, CPU))
    out = g.call("exp", sub)
    devices = device_map(out)
    placed = {
        n.op if isinstance(n, g.Call) else n.name: devices[id(n)]  # type: ignore[union-attr]
        for n in post_order(out)
        if not (isinstance(n, g.Call) and n.op == "device_copy")
    }
    # pass 1: add, x, y from the copies after add; sqrt and log from the copies after them;
    # pass 2: subtract and exp take the last copy's destination
    assert placed == {
        "x": CPU, "y": CPU, "add": CPU, "sqrt": EXT_DEV, "log": EXT_DEV,
        "subtract": CPU, "exp": CPU,
    }  # fmt: skip


def _annotated() -> g.Function:
    x, y = _var("x"), _var("y")
    add = g.call("add", x, y)
    sqrt = g.call("on_device", g.call("sqrt", add), device_type=EXT_DEV)
    log = g.call("on_device", g.call("log", add), device_type=EXT_DEV)
    return g.Function([x, y], g.call("exp", g.call("subtract", sqrt, log)))


def test_annotations_become_copies_at_each_boundary() -> None:
    after = rewrite_annotated_ops(g.IRModule.from_expr(_annotated()))
    x, y = _var("x"), _var("y")
    add = g.call("add", x, y)
    on_ext = _copy(add, CPU, EXT_DEV)  # one copy of add serves both consumers on ext_dev
    sqrt, log = g.call("sqrt", on_ext), g.call("log", on_ext)
    sub = g.call("subtract", _copy(sqrt, EXT_DEV, CPU), _copy(log, EXT_DEV, CPU))
    expected = g.Function([x, y], g.call("exp", sub))
    assert_structural_equal(after, g.IRModule.from_expr(expected))


def test_a_graph_split_across_cpu_and_ext_dev_runs_where_placed() -> None:
    func = _annotated()
    lib = g.build(g.IRModule.from_expr(func), target="c")
    a = np.random.default_rng(0).uniform(1, 2, (4, 8)).astype(F32)
    b = np.random.default_rng(1).uniform(1, 2, (4, 8)).astype(F32)
    with host_pool_ext_dev() as ext:
        m = GraphModule(lib["default"](pytvm.cpu(), pytvm.ext_dev()))
        m.set_input(x=a, y=b)
        m.run()
        np.testing.assert_allclose(
            m.get_output(0).numpy(), interpret(func, {"x": a, "y": b}), rtol=1e-5
        )
        ex = m.module
        assert isinstance(ex, GraphExecutor)
        graph = ex.graph
        by_name: dict[str, int] = {}
        for nid, node in enumerate(graph.nodes):
            eid = graph.entry_id(nid)
            by_name[node.func_name or node.name] = graph.device_index[eid]  # type: ignore[index]
            buffer = ex.storage.entries[eid]
            assert ext.owns(buffer.data_ptr) == (graph.device_index[eid] == EXT_DEV)  # type: ignore[index]
        kernels = {k: v for k, v in by_name.items() if k.startswith("fused_")}
        assert sorted(kernels.values()) == [CPU, CPU, EXT_DEV, EXT_DEV]
        assert ext.copies.count((CPU, EXT_DEV)) == 1 and ext.copies.count((EXT_DEV, CPU)) == 2
