"""``pytvm.graph.build``: fused kernels compiled, planned, run locally, exported, run remotely."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm import rpc
from pytvm.graph.interpreter import interpret
from pytvm.runtime.graph_executor import GraphExecutorFactoryModule, GraphModule
from pytvm.testing.rpc import server_session

F32 = "float32"


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _block(x: g.Expr, seed: int) -> g.Expr:
    """Conv + batch norm + relu + residual add: one repeated block of a small ResNet."""
    w = g.const(_rand(4, 4, 3, 3, seed=seed) * 0.2)
    conv = g.call(
        "nn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), name=f"c{seed}"
    )
    stats = [np.abs(_rand(4, seed=seed + i)) + 0.5 for i in range(4)]
    bn = g.call("nn.batch_norm", conv, *map(g.const, stats))
    return g.call("add", g.call("nn.relu", bn), x)


def _net() -> g.Function:
    x = g.Var("x", g.TensorType((1, 4, 6, 6), F32))
    y = _block(_block(_block(x, 1), 2), 3)
    pooled = g.call("mean", y, axis=(2, 3), keepdims=False)
    dense = g.call("nn.dense", pooled, g.const(_rand(5, 4, seed=7)))
    return g.Function([x], g.call("nn.softmax", dense, axis=-1))


@pytest.fixture(scope="module")
def built() -> GraphExecutorFactoryModule:
    return g.build(g.IRModule.from_expr(_net()), target="c")


def _run(m: GraphModule, x: np.ndarray) -> np.ndarray:
    m.set_input("x", x)
    m.run()
    return m.get_output(0).numpy()


def test_a_built_graph_matches_the_reference_interpreter(built: GraphExecutorFactoryModule) -> None:
    x = _rand(1, 4, 6, 6, seed=42)
    m = GraphModule(built["default"](pytvm.cpu()))
    np.testing.assert_allclose(_run(m, x), interpret(_net(), {"x": x}), rtol=1e-5, atol=1e-6)


def test_repeated_blocks_compile_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="pytvm.graph"):
        lib = g.build(g.IRModule.from_expr(_net()), target="c")
    # three conv blocks with different weights are one kernel (weights are inputs)
    assert "compile-engine cache: 2 hits" in caplog.text
    nodes = json.loads(lib.get_graph_json())["nodes"]
    kernels = {n["attrs"]["func_name"] for n in nodes if n["op"] == "tvm_op"}
    assert len(kernels) == 4  # conv block, mean, dense, softmax


@pytest.mark.parametrize("planner", ["arena", "storage_token"])
def test_both_planners_run_correctly_and_report_their_savings(planner: str) -> None:
    x = _rand(1, 4, 6, 6, seed=3)
    lib = g.build(g.IRModule.from_expr(_net()), target="c", memory_planner=planner)
    np.testing.assert_allclose(
        _run(GraphModule(lib["default"](pytvm.cpu())), x),
        interpret(_net(), {"x": x}),
        rtol=1e-5,
        atol=1e-6,
    )
    plan = g.plan_memory(g.IRModule.from_expr(_net()), planner=planner)
    cpu = plan.devices[1]
    assert cpu.lower_bound <= cpu.planned_bytes < cpu.no_reuse_bytes
    if planner == "arena":
        assert cpu.planned_bytes <= 1.05 * cpu.lower_bound


def test_export_library_is_one_file_that_loads_and_runs(
    built: GraphExecutorFactoryModule, tmp_path: Path
) -> None:
    path = tmp_path / "net.so"
    built.export_library(str(path))
    loaded = pytvm.runtime.load_module(str(path))
    x = _rand(1, 4, 6, 6, seed=5)
    m = GraphModule(loaded["default"](pytvm.cpu()))
    np.testing.assert_allclose(_run(m, x), interpret(_net(), {"x": x}), rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def remote() -> Iterator[rpc.RPCSession]:
    with server_session() as sess:
        yield sess


def test_the_exported_graph_runs_on_a_remote_server(
    built: GraphExecutorFactoryModule, remote: rpc.RPCSession, tmp_path: Path
) -> None:
    path = tmp_path / "net.so"
    built.export_library(str(path))
    remote.upload(str(path))
    m = GraphModule(remote.load_module("net.so")["default"](remote.cpu()))
    x = _rand(1, 4, 6, 6, seed=6)
    np.testing.assert_allclose(_run(m, x), interpret(_net(), {"x": x}), rtol=1e-5, atol=1e-6)


def test_a_long_build_draws_a_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    config = {"graph.progress": True, "graph.progress_delay_s": 0.0}
    with pytvm.transform.PassContext(config=config):
        g.build(g.IRModule.from_expr(_net()), target="c")
    err = capsys.readouterr().err
    assert "lowering kernels: fused_" in err and "compiling 4 kernels for c" in err
    assert err.endswith("\x1b[K\n") and "] built 4 kernels in " in err


def _reshaping_net() -> g.Function:
    """Reshapes between matrix products (not fused into them): of an intermediate read by a
    later kernel, of the input, and as the output: three ``__nop`` views.
    """
    x = g.Var("x", g.TensorType((6, 4), F32))
    a = g.call("nn.dense", x, g.const(_rand(5, 4, seed=1)))
    b = g.call("nn.dense", g.call("reshape", a, newshape=(3, 10)), g.const(_rand(7, 10, seed=2)))
    c = g.call("nn.dense", g.call("reshape", x, newshape=(3, 8)), g.const(_rand(7, 8, seed=3)))
    return g.Function([x], g.call("reshape", g.call("add", b, c), newshape=(21,)))


@pytest.mark.parametrize("planner", ["arena", "storage_token"])
def test_reshape_only_functions_are_views_not_kernels(planner: str) -> None:
    lib = g.build(g.IRModule.from_expr(_reshaping_net()), target="llvm", memory_planner=planner)
    graph = json.loads(lib.get_graph_json())
    nodes, rows = graph["nodes"], graph["node_row_ptr"]
    storage = graph["attrs"]["storage_id"][1]
    nops = [
        nid
        for nid, n in enumerate(nodes)
        if n["op"] == "tvm_op" and n["attrs"]["func_name"] == "__nop"
    ]
    assert len(nops) == 3  # the three reshapes
    for nid in nops:
        ((src, index, _),) = nodes[nid]["inputs"]
        assert storage[rows[nid]] == storage[rows[src] + index]  # the view shares the memory
    m = GraphModule(lib["default"](pytvm.cpu()))
    for seed in (5, 6):  # a second run: the views see the new data
        x = _rand(6, 4, seed=seed)
        np.testing.assert_allclose(
            _run(m, x), interpret(_reshaping_net(), {"x": x}), rtol=1e-5, atol=1e-5
        )


def _mlp() -> g.Function:
    """Unnamed dense + bias + relu layers: two alike, two of other shapes (one fused pattern)."""
    x = g.Var("x", g.TensorType((2, 8), F32))
    y: g.Expr = x
    for seed, (units, width) in enumerate([(16, 8), (16, 16), (16, 16), (4, 16)]):
        dense = g.call("nn.dense", y, g.const(_rand(units, width, seed=seed)))
        y = g.call("nn.relu", g.call("add", dense, g.const(_rand(units, seed=seed + 10))))
    return g.Function([x], y)


def test_the_plan_and_the_graph_name_kernels_alike() -> None:
    mod = g.IRModule.from_expr(_mlp())
    plan = g.plan_memory(mod)
    graph = json.loads(g.build(mod, target="c").get_graph_json())
    row = graph["node_row_ptr"]
    names = [
        node["name"] if i == 0 else f"{node['name']}:{i}"
        for nid, node in enumerate(graph["nodes"])
        for i in range(row[nid + 1] - row[nid])
    ]
    assert list(plan.entry_names) == names
    kernels = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"]
    assert kernels == [
        "fused_nn_dense_add_nn_relu",
        "fused_nn_dense_add_nn_relu_1",
        "fused_nn_dense_add_nn_relu_1",
        "fused_nn_dense_add_nn_relu_2",
    ]
