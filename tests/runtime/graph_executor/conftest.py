"""Kernels compiled with the real C compiler, and a hand-written graph chaining them.

The graph (float32; x, y: (4, 8), w: (6, 8))::

    add0 = k_add(x, y); relu0 = k_relu(add0); (p, q) = k_split2(relu0)   # p = 2 r, q = r - 1
    add1 = k_add(p, q); out = k_dense(add1, w)                           # add1 @ w.T
    heads: out, q

Storage is shared as a planner would: ``add1`` reuses ``add0``'s buffer (same size) and ``out``
(96 bytes) reuses ``relu0``'s (128 bytes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.driver import CompiledModule
from pytvm.tir.function import IRModule

N, M, K = 4, 8, 6
F32 = "float32"


def _kernels() -> IRModule:
    funcs = {}
    A = te.placeholder((N, M), name="A")
    B = te.placeholder((N, M), name="B")
    C = te.compute((N, M), lambda i, j: A[i, j] + B[i, j], name="C")
    funcs["k_add"] = te.lower_schedule(te.create_schedule(C.op), [A, B, C], "k_add")
    R = te.compute((N, M), lambda i, j: te.max(A[i, j], te.const(0, F32)), name="R")
    funcs["k_relu"] = te.lower_schedule(te.create_schedule(R.op), [A, R], "k_relu")
    P = te.compute((N, M), lambda i, j: A[i, j] * 2.0, name="P")
    Q = te.compute((N, M), lambda i, j: A[i, j] - 1.0, name="Q")
    funcs["k_split2"] = te.lower_schedule(te.create_schedule([P.op, Q.op]), [A, P, Q], "k_split2")
    W = te.placeholder((K, M), name="W")
    k = te.reduce_axis((0, M), name="k")
    Y = te.compute((N, K), lambda i, j: te.sum(A[i, k] * W[j, k], axis=k), name="Y")
    funcs["k_dense"] = te.lower_schedule(te.create_schedule(Y.op), [A, W, Y], "k_dense")
    V = te.placeholder((N * M,), name="V")
    U = te.compute((N * M,), lambda i: 0.0 - V[i], name="U")
    funcs["k_neg32"] = te.lower_schedule(te.create_schedule(U.op), [V, U], "k_neg32")
    return IRModule(funcs)


@pytest.fixture(scope="session")
def kernel_lib() -> CompiledModule:
    """The kernels (k_add, k_relu, k_split2, k_dense; k_neg32 on 32 elements) in one library
    built by ``pytvm.build``.
    """
    lib = pytvm.build(_kernels(), target="c")
    assert isinstance(lib, CompiledModule)
    return lib


def _op(name: str, func: str, inputs: list[list[int]], outputs: int = 1) -> dict[str, Any]:
    return {
        "op": "tvm_op",
        "name": name,
        "inputs": inputs,
        "attrs": {
            "func_name": func,
            "num_inputs": str(len(inputs)),
            "num_outputs": str(outputs),
            "flatten_data": "0",
        },
    }


def graph_doc() -> dict[str, Any]:
    """The graph as a JSON object (tests edit copies of it)."""
    nodes = [
        {"op": "null", "name": "x", "inputs": []},
        {"op": "null", "name": "y", "inputs": []},
        {"op": "null", "name": "w", "inputs": []},
        _op("add0", "k_add", [[0, 0, 0], [1, 0, 0]]),
        _op("relu0", "k_relu", [[3, 0, 0]]),
        _op("split0", "k_split2", [[4, 0, 0]], outputs=2),
        _op("add1", "k_add", [[5, 0, 0], [5, 1, 0]]),
        _op("dense0", "k_dense", [[6, 0, 0], [2, 0, 0]]),
    ]
    nm, km = [N, M], [K, M]
    return {
        "nodes": nodes,
        "arg_nodes": [0, 1, 2],
        "heads": [[7, 0, 0], [5, 1, 0]],
        "node_row_ptr": [0, 1, 2, 3, 4, 5, 7, 8, 9],
        "attrs": {
            "storage_id": ["list_int", [0, 1, 2, 3, 4, 5, 6, 3, 4]],
            "shape": ["list_shape", [nm, nm, km, nm, nm, nm, nm, nm, [N, K]]],
            "dltype": ["list_str", [F32] * 9],
        },
    }


@pytest.fixture
def graph_json() -> str:
    """The graph's JSON text."""
    return json.dumps(graph_doc())


@pytest.fixture
def graph_doc_factory() -> Callable[[], dict[str, Any]]:
    """A fresh copy of the graph's JSON object for each call."""
    return graph_doc


def reference(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The graph's outputs computed with numpy."""
    r = np.maximum(x + y, 0)
    p, q = r * 2, r - 1
    return (p + q) @ w.T, q


@pytest.fixture
def numpy_reference() -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    """:func:`reference`."""
    return reference


@pytest.fixture
def inputs() -> dict[str, np.ndarray]:
    """x, y and w."""
    rng = np.random.default_rng(7)
    return {
        "x": rng.standard_normal((N, M)).astype(F32),
        "y": rng.standard_normal((N, M)).astype(F32),
        "w": rng.standard_normal((K, M)).astype(F32),
    }
