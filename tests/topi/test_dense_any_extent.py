"""Matrix products whose extents have no power-of-two factor: panel products (``dense_pack``,
``matmul_pack``) pad rows and columns, vectorize every column extent and store the valid part.
Compiled for the host and checked against numpy.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm import te, topi
from pytvm.graph.build_module import build as graph_build
from pytvm.runtime.graph_executor import GraphModule
from pytvm.target import Target
from pytvm.topi.generic._tiling import register_row_block, vector_registers
from pytvm.topi.x86.dense import schedule_dense_pack

RNG = np.random.default_rng(21)
Arr = np.ndarray[Any, Any]
AVX512 = "llvm -mattr=+avx512f"


def _rand(*shape: int) -> Arr:
    return RNG.standard_normal(shape).astype("float32")


def _run(outs: te.Tensor, args: list[te.Tensor], arrays: list[Arr]) -> tuple[Arr, str]:
    """Build ``outs`` with the panel schedule for the host; its result and its loop IR."""
    with Target("llvm"):
        s = schedule_dense_pack(outs)
        ir = str(pytvm.lower(s, [*args, outs]))
        f = pytvm.build(s, [*args, outs], target="llvm")
    out = pytvm.nd.empty(tuple(int(str(d)) for d in outs.shape))
    f(*(pytvm.nd.array(a) for a in arrays), out)
    return out.numpy(), ir


@pytest.mark.parametrize(("m", "n"), [(13, 37), (1, 5), (29, 197)])
def test_dense_pack_with_bias_and_relu_vectorizes_any_extent(m: int, n: int) -> None:
    k = 19
    x, w, b = _rand(m, k), _rand(n, k), _rand(n)
    X = te.placeholder((m, k), name="X")
    W = te.placeholder((n, k), name="W")
    B = te.placeholder((n,), name="B")
    with Target("llvm"):
        out = topi.nn.relu(topi.nn.dense_pack(X, W, B))
    got, ir = _run(out, [X, W, B], [x, w, b])
    np.testing.assert_allclose(got, np.maximum(x @ w.T + b, 0), rtol=1e-4, atol=1e-4)
    assert "ramp(" in ir  # the product's tiles are vectors


@pytest.mark.parametrize(
    ("ta", "tb", "batch_b"), [(False, True, 3), (False, False, 3), (True, False, 1)]
)
def test_matmul_pack_batched_transposes_and_broadcasts(ta: bool, tb: bool, batch_b: int) -> None:
    m, k, n = 11, 9, 23
    a, b = _rand(3, m, k), _rand(batch_b, k, n)
    a_in = a.transpose(0, 2, 1).copy() if ta else a
    b_in = b.transpose(0, 2, 1).copy() if tb else b
    A = te.placeholder(a_in.shape, name="A")
    B = te.placeholder(b_in.shape, name="B")
    with Target("llvm"):
        out = topi.nn.matmul_pack(A, B, transpose_a=ta, transpose_b=tb)
    assert [int(str(d)) for d in out.shape] == [3, m, n]
    got, ir = _run(out, [A, B], [a_in, b_in])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    assert "ramp(" in ir


def test_matmul_pack_of_2d_operands() -> None:
    a, b = _rand(7, 5), _rand(5, 3)
    A, B = te.placeholder(a.shape, name="A"), te.placeholder(b.shape, name="B")
    with Target("llvm"):
        out = topi.nn.matmul_pack(A, B)
    got, _ = _run(out, [A, B], [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_pack_panels_zero_fills_past_the_columns() -> None:
    b = _rand(2, 4, 5)  # [batch, K, N]
    B = te.placeholder(b.shape, name="B")
    with Target("llvm"):
        packed = topi.nn.pack_panels(B, 4)
        s = te.create_schedule(packed.op)
        f = pytvm.build(s, [B, packed], target="llvm")
    out = pytvm.nd.empty((2, 2, 4, 4))
    f(pytvm.nd.array(b), out)
    expected = np.zeros((2, 4, 8), "float32")
    expected[:, :, :5] = b
    np.testing.assert_array_equal(out.numpy(), expected.reshape(2, 4, 2, 4).transpose(0, 2, 1, 3))


def test_matmul_pack_rejects_mismatched_operands() -> None:
    A = te.placeholder((3, 4, 5), name="A")
    with pytest.raises(ValueError, match="operand ranks"):
        topi.nn.matmul_pack(A, te.placeholder((5, 6), name="B"))
    with pytest.raises(ValueError, match="reduction extents"):
        topi.nn.matmul_pack(A, te.placeholder((3, 6, 7), name="B"))


@pytest.mark.parametrize("rows", [1, 7, 16, 197, 3136])
def test_register_row_block_fits_the_registers(rows: int) -> None:
    with Target(AVX512):
        for vectors in (1, 2):
            mb = register_row_block(rows, vectors, "float32")
            assert 1 <= mb <= rows
            assert mb * vectors <= vector_registers("float32")
            assert -(-rows // mb) * mb - rows < -(-rows // mb)  # padding < one row per tile


def _graph(nodes: g.Expr, params: list[g.Var]) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, nodes))


def test_graph_dense_with_constant_weight_of_odd_units() -> None:
    x = g.Var("x", g.TensorType((197, 24), "float32"))
    w = _rand(37, 24)
    body = g.call("nn.relu", g.call("nn.dense", x, g.const(w)))
    lib = graph_build(_graph(body, [x]), target="llvm")
    m = GraphModule(lib["default"](pytvm.cpu()))
    xv = _rand(197, 24)
    m.set_input("x", xv)
    m.run()
    np.testing.assert_allclose(
        m.get_output(0).numpy(), np.maximum(xv @ w.T, 0), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize("transpose_b", [True, False])
def test_graph_attention_products_of_odd_token_counts(transpose_b: bool) -> None:
    a, b = _rand(2, 19, 8), _rand(2, 8, 19)
    b_in = b.transpose(0, 2, 1).copy() if transpose_b else b
    x = g.Var("a", g.TensorType(a.shape, "float32"))
    y = g.Var("b", g.TensorType(b_in.shape, "float32"))
    body = g.call("nn.batch_matmul", x, y, transpose_a=False, transpose_b=transpose_b)
    lib = graph_build(_graph(body, [x, y]), target="llvm")
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("a", a)
    m.set_input("b", b_in)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), a @ b, rtol=1e-4, atol=1e-4)


def _outer_loop(ir: str) -> str:
    """The loop variable of the first tiled loop (``.outer``) in a lowered function."""
    lines = (s.strip() for s in ir.splitlines())
    loops = (s[len("for (") :].split(":")[0] for s in lines if s.startswith("for ("))
    return next(v for v in loops if ".outer" in v)


@pytest.mark.parametrize(("m", "n"), [(64, 331), (64, 320), (1, 100)])
def test_dense_pack_panels_outermost_with_fewer_row_tiles(m: int, n: int) -> None:
    # an LM head's shape: few tiles of rows, many panels: each panel is read once, the row tiles
    # inside it; the panels (whole or not) are the outer, parallel loop at any core count
    k = 24
    x, w = _rand(m, k), _rand(n, k)
    X, W = te.placeholder((m, k), name="X"), te.placeholder((n, k), name="W")
    with Target("llvm"):
        packed = topi.nn.dense_pack_weight(W)
        P = te.placeholder(tuple(int(str(d)) for d in packed.shape), name="P")
        out = topi.nn.dense_pack(X, P, units=n)
    with Target("llvm"):
        wp = pytvm.build(te.create_schedule(packed.op), [W, packed], target="llvm")
    pv = pytvm.nd.empty(tuple(int(str(d)) for d in packed.shape))
    wp(pytvm.nd.array(w), pv)
    got, ir = _run(out, [X, P], [x, pv.numpy()])
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-4, atol=1e-4)
    assert _outer_loop(ir).startswith("i1.outer")


def test_dense_pack_row_tiles_outermost_with_fewer_column_tiles() -> None:
    m, k, n = 197, 16, 40
    x, w = _rand(m, k), _rand(n, k)
    X, W = te.placeholder((m, k), name="X"), te.placeholder((n, k), name="W")
    with Target("llvm"):
        out = topi.nn.dense_pack(X, W)
        s = schedule_dense_pack(out)
        ir = str(pytvm.lower(s, [X, W, out]))
    assert _outer_loop(ir).startswith("i0.outer")  # after the weight's packing stage
    got, _ = _run(out, [X, W], [x, w])
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-4, atol=1e-4)


def test_graph_dense_packs_a_constant_weight_at_build_time() -> None:
    # the panels are a parameter of the built graph (folded at build time): no kernel packs them
    x = g.Var("x", g.TensorType((5, 24), "float32"))
    w = _rand(37, 24)
    lib = graph_build(_graph(g.call("nn.dense", x, g.const(w)), [x]), target="llvm")
    shapes = [tuple(v.shape) for v in lib.get_params().values()]
    assert any(len(sh) == 3 and sh[1] == 24 and sh[0] * sh[2] >= 37 for sh in shapes), shapes
    nodes = json.loads(lib.get_graph_json())["nodes"]
    kernels = [nd["attrs"]["func_name"] for nd in nodes if nd["op"] == "tvm_op"]
    assert len(kernels) == 1 and "dense" in kernels[0], kernels
    m = GraphModule(lib["default"](pytvm.cpu()))
    xv = _rand(5, 24)
    m.set_input("x", xv)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), xv @ w.T, rtol=1e-4, atol=1e-4)
