"""The graph executor on real compiled kernels: results against numpy, shared storage, the
packed-function interface, errors that name the input or node, and the per-operator overhead.
"""

from __future__ import annotations

import gc
import json
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.contrib import graph_executor
from pytvm.driver import CompiledModule
from pytvm.ffi import c_function
from pytvm.ffi.c_function import CFunction
from pytvm.runtime import save_param_dict
from pytvm.runtime.graph_executor import GraphExecutor, GraphExecutorFactory, GraphModule

pytestmark = pytest.mark.needs_cc

Doc = Callable[[], dict[str, Any]]
Reference = Callable[..., tuple[np.ndarray, np.ndarray]]


def test_graph_runs_and_matches_numpy(
    kernel_lib: CompiledModule,
    graph_json: str,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
) -> None:
    m = graph_executor.create(graph_json, kernel_lib, pytvm.cpu())
    m.set_input("w", inputs["w"])
    m.run(x=inputs["x"], y=inputs["y"])
    out, q = numpy_reference(inputs["x"], inputs["y"], inputs["w"])
    np.testing.assert_allclose(m.get_output(0).numpy(), out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m.get_output(1).numpy(), q, rtol=1e-6)
    # A new input changes the result: nothing is cached between runs.
    m.set_input(0, inputs["y"])
    m.run()
    np.testing.assert_allclose(
        m.get_output(0).numpy(),
        numpy_reference(inputs["y"], inputs["y"], inputs["w"])[0],
        rtol=1e-5,
        atol=1e-5,
    )


def test_storage_is_shared_as_the_graph_says(kernel_lib: CompiledModule, graph_json: str) -> None:
    ex = GraphExecutor(graph_json, kernel_lib, [pytvm.cpu()])
    buffers = ex.storage.buffers
    assert sorted(buffers) == [0, 1, 2, 3, 4, 5, 6]
    assert buffers[4].nbytes == 4 * 8 * 4  # relu0's 128 bytes; dense0's 96 fit in them
    assert ex.entries[7].data_ptr == ex.entries[3].data_ptr == buffers[3].data_ptr
    assert ex.entries[8].data_ptr == buffers[4].data_ptr and ex.entries[8].shape == (4, 6)
    assert ex.plan.num_c_rows == 5  # every operator runs from the C table


def test_packed_interface_as_tvm(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray]
) -> None:
    create = pytvm.get_global_func("tvm.graph_executor.create")
    ex = create(graph_json, kernel_lib, 1, 0)  # device as type and id, as TVM's Python passes
    assert ex.type_key == "GraphExecutor"
    assert ex["get_num_inputs"]() == 3 and ex["get_num_outputs"]() == 2
    assert ex["get_input_index"]("w") == 2 and ex["get_input_index"]("nope") == -1
    assert ex["get_input_name"](1) == "y"
    ex["set_input"]("x", pytvm.nd.array(inputs["x"]))
    ex["set_input"](1, inputs["y"])
    ex["load_params"](save_param_dict({"w": inputs["w"]}))
    ex["run"]()
    np.testing.assert_array_equal(ex["get_input"]("w").numpy(), inputs["w"])
    out = pytvm.nd.empty((4, 6), "float32")
    assert ex["get_output"](0, out) is None
    np.testing.assert_array_equal(out.numpy(), ex["get_output"](0).numpy())
    m = GraphModule(ex)
    assert m.get_input_info() == (
        {"x": (4, 8), "y": (4, 8), "w": (6, 8)},
        {"x": "float32", "y": "float32", "w": "float32"},
    )
    assert m.get_output(1, pytvm.nd.empty((4, 8), "float32")).shape == (4, 8)
    same = create(graph_json, kernel_lib, pytvm.cpu())
    assert same["get_graph_json"]() == graph_json


def test_set_input_errors_name_the_input(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray]
) -> None:
    m = graph_executor.create(graph_json, kernel_lib, pytvm.cpu())
    with pytest.raises(
        ValueError, match=r"input 'x' expects shape \(4, 8\) float32, got \(8, 4\) float32"
    ):
        m.set_input("x", inputs["x"].T)
    with pytest.raises(
        ValueError, match=r"input 'y' expects shape \(4, 8\) float32, got \(4, 8\) float64"
    ):
        m.set_input(y=inputs["y"].astype("float64"))
    with pytest.raises(ValueError, match=r"the graph has no input 'z'; inputs: 'x', 'y', 'w'"):
        m.set_input("z", inputs["x"])
    with pytest.raises(ValueError, match=r"input index 3 is not in 0\.\.2"):
        m.set_input(3, inputs["x"])
    ex = m.module
    with pytest.raises(
        ValueError, match=r"input 'x' expects shape \(4, 8\) float32, got \(4, 8\) int32"
    ):
        ex["set_input"]("x", pytvm.nd.array(inputs["x"].astype("int32")))
    with pytest.raises(ValueError, match=r"get_output: output 2 is not in 0\.\.1"):
        m.get_output(2)
    with pytest.raises(ValueError, match=r"output 0 is \(4, 6\) float32, out is \(4, 8\) float32"):
        m.get_output(0, pytvm.nd.empty((4, 8), "float32"))


def test_params_that_are_not_inputs_are_named(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray]
) -> None:
    m = graph_executor.create(graph_json, kernel_lib, pytvm.cpu())
    blob = save_param_dict({"w": inputs["w"], "bias": inputs["x"], "gamma": inputs["x"]})
    with pytest.raises(
        ValueError, match=r"2 parameter\(s\) are not inputs of the graph: 'bias', 'gamma'"
    ):
        m.load_params(blob)
    with pytest.raises(ValueError, match=r"input 'w' expects shape \(6, 8\) float32, got \(4, 8\)"):
        m.load_params(save_param_dict({"w": inputs["x"]}))


def test_share_params_uses_the_other_executors_arrays(
    kernel_lib: CompiledModule,
    graph_json: str,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
) -> None:
    first = graph_executor.create(graph_json, kernel_lib, pytvm.cpu())
    blob = save_param_dict({"w": inputs["w"]})
    first.load_params(blob)
    second = graph_executor.create(graph_json, kernel_lib, pytvm.cpu())
    second.share_params(first, blob)
    assert second.get_input("w").data_ptr == first.get_input("w").data_ptr
    second.run(x=inputs["x"], y=inputs["y"])
    expected = numpy_reference(inputs["x"], inputs["y"], inputs["w"])[0]
    np.testing.assert_allclose(second.get_output(0).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_operator_errors_name_the_node(
    kernel_lib: CompiledModule, graph_doc_factory: Doc, inputs: dict[str, np.ndarray]
) -> None:
    doc = graph_doc_factory()
    doc["nodes"][7]["attrs"]["func_name"] = "k_missing"
    with pytest.raises(
        ValueError,
        match=r"graph node 'dense0' \(#7\): the library \(library\) "
        r"and its imports have no function 'k_missing'",
    ):
        graph_executor.create(json.dumps(doc), kernel_lib, pytvm.cpu())
    doc = graph_doc_factory()
    doc["attrs"]["shape"][1][2] = [6, 4]  # w no longer fits k_dense
    m = graph_executor.create(json.dumps(doc), kernel_lib, pytvm.cpu())
    m.set_input(w=np.zeros((6, 4), "float32"))
    with pytest.raises(
        ValueError,
        match=r"graph node 'dense0' \(k_dense\): k_dense: argument W: expected shape \(6, 8\), "
        r"got \(6, 4\)",
    ):
        m.run()
    with pytest.raises(
        ValueError, match=r"remote\[0\]:cpu\(0\) is an RPC device but this executor"
    ):
        GraphExecutor(json.dumps(graph_doc_factory()), kernel_lib, [pytvm.Device(129, 0)])


def test_python_functions_flatten_and_nop_run_between_c_stretches(
    kernel_lib: CompiledModule, inputs: dict[str, np.ndarray]
) -> None:
    calls: list[tuple[int, ...]] = []

    def py_twice(src: pytvm.nd.NDArray, dst: pytvm.nd.NDArray) -> None:
        calls.append(src.shape)
        dst.copyfrom(src.numpy() * 2)

    lib = pytvm.runtime.Module.from_functions("py", {"py_twice": py_twice})
    lib.import_module(kernel_lib)
    op = {"num_inputs": "1", "num_outputs": "1"}
    doc = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "tvm_op", "name": "neg", "inputs": [[0, 0, 0]],
             "attrs": {**op, "func_name": "k_neg32", "flatten_data": "1"}},
            {"op": "tvm_op", "name": "twice", "inputs": [[1, 0, 0]],
             "attrs": {**op, "func_name": "py_twice", "flatten_data": "0"}},
            {"op": "tvm_op", "name": "nothing", "inputs": [[2, 0, 0]],
             "attrs": {**op, "func_name": "__nop", "flatten_data": "0"}},
            {"op": "tvm_op", "name": "relu", "inputs": [[2, 0, 0]],
             "attrs": {**op, "func_name": "k_relu", "flatten_data": "0"}},
        ],
        "arg_nodes": [0], "heads": [[4, 0, 0]], "node_row_ptr": [0, 1, 2, 3, 4, 5],
        "attrs": {"storage_id": ["list_int", [0, 1, 2, 3, 1]],
                  "shape": ["list_shape", [[4, 8]] * 5], "dltype": ["list_str", ["float32"] * 5]},
    }  # fmt: skip
    m = graph_executor.create(json.dumps(doc), lib, pytvm.cpu())
    m.run(x=inputs["x"])
    np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(-2 * inputs["x"], 0))
    assert calls == [(4, 8)]  # a Python function gets the node's own shape
    ex = m.module
    assert isinstance(ex, GraphExecutor)
    assert [s.row for s in ex.plan.steps] == [0, -1, 1]
    with pytvm.trace() as t:  # while tracing, each kernel call is a span
        m.run()
    names = [e.name for e in t.events if e.layer == c_function.CALL_LAYER]
    assert names == ["k_neg32", "k_relu"]

    def broken(src: Any, dst: Any) -> None:
        raise KeyError("no table for this shape")

    bad = pytvm.runtime.Module.from_functions("py", {"py_twice": broken})
    bad.import_module(kernel_lib)
    m = graph_executor.create(json.dumps(doc), bad, pytvm.cpu())
    with pytest.raises(KeyError, match=r"graph node 'twice' \(py_twice\): no table for this shape"):
        m.run()


def _chain(n: int) -> str:
    nodes: list[dict[str, Any]] = [{"op": "null", "name": "x", "inputs": []}]
    for i in range(n):
        attrs = {"func_name": "k_inc", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}
        nodes.append({"op": "tvm_op", "name": f"inc{i}", "inputs": [[i, 0, 0]], "attrs": attrs})
    return json.dumps(
        {
            "nodes": nodes,
            "arg_nodes": [0],
            "heads": [[n, 0, 0]],
            "node_row_ptr": list(range(n + 2)),
            "attrs": {
                "storage_id": ["list_int", [0] + [1 + i % 2 for i in range(n)]],
                "shape": ["list_shape", [[1]] * (n + 1)],
                "dltype": ["list_str", ["float32"] * (n + 1)],
            },
        }
    )


def test_per_operator_overhead_of_a_hundred_tiny_ops() -> None:
    A = te.placeholder((1,), name="A")
    B = te.compute((1,), lambda i: A[i] + 1.0, name="B")
    lib = pytvm.build(te.create_schedule(B.op), [A, B], target="c", name="k_inc")
    n = 100
    m = graph_executor.create(_chain(n), lib, pytvm.cpu())
    m.set_input("x", np.zeros(1, "float32"))
    m.run()
    assert m.get_output(0).numpy().tolist() == [100.0]
    run = m.module["run"]
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(1000):
            run()
        best = min(best, (time.perf_counter() - start) / 1000)
    args = (pytvm.nd.array(np.zeros(1, "float32")), pytvm.nd.empty((1,), "float32"))
    func = lib["k_inc"]
    assert isinstance(func, CFunction)
    kernel = func.time_call(args, 100_000) / 100_000
    overhead_us = (best / n - kernel) * 1e6
    print(
        f"graph executor: {best * 1e6:.2f} us per run of {n} ops, {overhead_us:.3f} us/op overhead"
    )
    assert overhead_us < 2.0


def test_dropping_the_last_reference_frees_the_executor(
    kernel_lib: CompiledModule, graph_json: str
) -> None:
    gc.disable()  # no cycle collector: only reference counts may free them
    try:
        ex = GraphExecutor(graph_json, kernel_lib, [pytvm.cpu()])
        run = ex["run"]
        gone = weakref.ref(ex)
        del ex
        assert gone() is not None  # a function still holds its executor
        del run
        assert gone() is None
        factory = GraphExecutorFactory(graph_json, {}, kernel_lib)
        factory["default"](pytvm.cpu())
        factory_gone = weakref.ref(factory)
        del factory
        assert factory_gone() is None
    finally:
        gc.enable()


def test_entries_at_offsets_in_one_arena(
    kernel_lib: CompiledModule,
    graph_doc_factory: Doc,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
) -> None:
    doc = graph_doc_factory()  # every intermediate in storage 3, at byte offsets (pytvm's plans)
    doc["attrs"]["storage_id"] = ["list_int", [0, 1, 2, 3, 3, 3, 3, 3, 3]]
    doc["attrs"]["storage_offset"] = ["list_int", [0, 0, 0, 0, 128, 256, 384, 0, 128]]
    m = graph_executor.create(json.dumps(doc), kernel_lib, pytvm.cpu())
    m.run(**inputs)
    out, q = numpy_reference(inputs["x"], inputs["y"], inputs["w"])
    np.testing.assert_allclose(m.get_output(0).numpy(), out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m.get_output(1).numpy(), q, rtol=1e-6)
    ex = m.module
    assert isinstance(ex, GraphExecutor)
    arena = ex.storage.buffers[3]
    assert arena.nbytes == 512
    assert [e.data_ptr - arena.data_ptr for e in ex.entries[3:]] == [0, 128, 256, 384, 0, 128]
    doc["attrs"]["storage_offset"][1][8] = -4
    with pytest.raises(
        ValueError, match="graph node 'dense0' entry 8: storage_offset -4 is negative"
    ):
        graph_executor.create(json.dumps(doc), kernel_lib, pytvm.cpu())
