"""ONNX ``If`` and ``Loop`` resolved at import, against ONNX Runtime: a known condition selects
its branch, an unknown one selects per element between both branches, branches of different
shapes import per the condition's value; loops unroll with carried values, scan outputs, an
early exit, a trip count from a graph input, nesting and values of the enclosing graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.frontend.onnx import OnnxImportError, from_onnx
from pytvm.frontend.onnx.backend import prepare
from pytvm.frontend.onnx.ops_control import MAX_UNROLLED_ITERATIONS
from pytvm.graph import IRModule

ort = pytest.importorskip("onnxruntime")

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def _info(name: str, dtype: int, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any],
           inits: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:  # fmt: skip
    tensors = [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()]
    graph = helper.make_graph(nodes, "g", inputs, outputs, tensors)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], **options: Any) -> None:
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = prepare(model, **options).run(feeds)
    assert len(got) == len(want)
    for ours, theirs in zip(got, want, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _branches(then_shape: list[int], else_shape: list[int]) -> dict[str, onnx.GraphProto]:
    """``then``: ``x * w`` (a weight of the enclosing graph); ``else``: ``x + 1`` sliced to
    ``else_shape``.
    """
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t"])], "then", [],
                               [_info("t", F, then_shape)])  # fmt: skip
    starts = numpy_helper.from_array(np.zeros(len(else_shape), "int64"), "starts")
    ends = numpy_helper.from_array(np.array(else_shape, "int64"), "ends")
    one = numpy_helper.from_array(np.array(1.0, "float32"), "one")
    else_nodes = [helper.make_node("Add", ["x", "one"], ["e0"]),
                  helper.make_node("Slice", ["e0", "starts", "ends"], ["e"])]  # fmt: skip
    else_g = helper.make_graph(else_nodes, "else", [], [_info("e", F, else_shape)],
                               [one, starts, ends])  # fmt: skip
    return {"then_branch": then_g, "else_branch": else_g}


def _if_model(cond_node: Any, then_shape: list[int], else_shape: list[int]) -> onnx.ModelProto:
    nodes = [cond_node, helper.make_node("If", ["c"], ["y"], **_branches(then_shape, else_shape))]
    w = np.arange(6, dtype="float32").reshape(2, 3)
    return _model(nodes, [_info("x", F, [2, 3]), _info("p", F, [1])], [_info("y", F, None)],
                  {"w": w, "k": np.array([True])})  # fmt: skip


def test_if_with_a_known_condition_imports_only_its_branch() -> None:
    model = _if_model(helper.make_node("Identity", ["k"], ["c"]), [2, 3], [1, 2])
    mod, _ = from_onnx(model)
    assert isinstance(mod, IRModule)
    assert "where" not in str(mod["main"]) and "multiply" in str(mod["main"])
    _check(model, {"x": np.ones((2, 3), "float32"), "p": np.ones(1, "float32")})


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_if_with_an_unknown_condition_selects_between_both_branches(p: float) -> None:
    model = _if_model(helper.make_node("Greater", ["p", "zero"], ["c"]), [2, 3], [2, 3])
    model.graph.initializer.append(numpy_helper.from_array(np.array(0.0, "float32"), "zero"))
    mod, _ = from_onnx(model)
    assert "where" in str(mod["main"])
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    _check(model, {"x": x, "p": np.array([p], "float32")})


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_if_with_branches_of_other_shapes_imports_per_condition_value(p: float) -> None:
    model = _if_model(helper.make_node("Greater", ["p", "zero"], ["c"]), [2, 3], [1, 2])
    model.graph.initializer.append(numpy_helper.from_array(np.array(0.0, "float32"), "zero"))
    x = np.random.default_rng(1).standard_normal((2, 3)).astype("float32")
    _check(model, {"x": x, "p": np.array([p], "float32")})


def test_if_refuses_branches_of_other_shapes_on_a_condition_from_weights() -> None:
    nodes = [
        helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], name="pick", **_branches([2, 3], [1, 2])),
    ]
    w = np.arange(6, dtype="float32").reshape(2, 3)
    model = _model(nodes, [_info("x", F, [2, 3])], [_info("y", F, None)],
                   {"w": w, "zero": np.array(0.0, "float32")})  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"'pick' \(If.*then_branch.*else_branch"):
        from_onnx(model)


def _body(extra: list[Any] | None = None, stop_at: float | None = None) -> onnx.GraphProto:
    """``acc += x * i`` (``x`` from the enclosing graph), scan ``acc``; the condition passes
    through, or becomes ``acc.sum() < stop_at``.
    """
    nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["x", "fi"], ["xi"]),
        helper.make_node("Add", ["acc_in", "xi"], ["acc_out"]),
        helper.make_node("Identity", ["acc_out"], ["scan"]),
        *(extra or []),
    ]
    inits = []
    if stop_at is None:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    else:
        nodes += [helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
                  helper.make_node("Less", ["total", "limit"], ["c_out"])]  # fmt: skip
        inits.append(numpy_helper.from_array(np.array(stop_at, "float32"), "limit"))
    ins = [_info("i", I64, []), _info("c_in", B, []), _info("acc_in", F, [2])]
    outs = [_info("c_out", B, []), _info("acc_out", F, [2]), _info("scan", F, [2])]
    return helper.make_graph(nodes, "body", ins, outs, inits)


def _loop_model(body: onnx.GraphProto, trip: str = "M", cond: str = "") -> onnx.ModelProto:
    node = helper.make_node("Loop", [trip, cond, "acc0"], ["acc", "scans"], name="loop", body=body)
    inputs = [_info("x", F, [2]), _info("acc0", F, [2])]
    return _model([node], inputs, [_info("acc", F, None), _info("scans", F, None)],
                  {"M": np.array(5, "int64"), "T": np.array(True)})  # fmt: skip


def _loop_feeds() -> dict[str, np.ndarray]:
    return {"x": np.array([1.0, -2.0], "float32"), "acc0": np.array([0.5, 0.25], "float32")}


def test_loop_with_a_static_trip_count_unrolls_with_scan_outputs() -> None:
    _check(_loop_model(_body()), _loop_feeds())


def test_loop_stops_when_the_body_condition_turns_false() -> None:
    # the condition is computed from graph inputs: the backend imports per their values, which
    # it passes as initializers (frozen into constants here, so the condition folds)
    feeds = {"x": np.array([1.0, 2.0], "float32"), "acc0": np.zeros(2, "float32")}
    _check(_loop_model(_body(stop_at=9.0), trip="", cond="T"), feeds, freeze_params=True)
    _check(_loop_model(_body(stop_at=9.0), trip="M", cond="T"), feeds, freeze_params=True)


def test_loop_condition_from_weights_is_refused_with_a_fix() -> None:
    model = _loop_model(_body(stop_at=9.0), trip="", cond="T")
    ones = np.ones(2, "float32")
    model.graph.initializer.extend([numpy_helper.from_array(ones, n) for n in ("x", "acc0")])
    del model.graph.input[:]
    with pytest.raises(OnnxImportError, match=r"'loop' \(Loop.*freeze_params=True"):
        from_onnx(model)
    mod, _ = from_onnx(model, freeze_params=True)
    assert isinstance(mod, IRModule)


def test_loop_trip_count_from_a_graph_input_imports_per_value() -> None:
    node = helper.make_node("Loop", ["n", "", "acc0"], ["acc", "scans"], body=_body())
    inputs = [_info("n", I64, []), _info("x", F, [2]), _info("acc0", F, [2])]
    model = _model([node], inputs, [_info("acc", F, None), _info("scans", F, None)])
    for n in (3, 7):
        _check(model, {"n": np.array(n, "int64"), **_loop_feeds()})


def test_if_nested_in_a_loop_body() -> None:
    branches = {
        "then_branch": helper.make_graph([helper.make_node("Neg", ["acc_out"], ["r"])], "t", [],
                                         [_info("r", F, [2])]),
        "else_branch": helper.make_graph([helper.make_node("Abs", ["acc_out"], ["r2"])], "e", [],
                                         [_info("r2", F, [2])]),
    }  # fmt: skip
    extra = [
        helper.make_node("Mod", ["i", "two"], ["odd"]),
        helper.make_node("Equal", ["odd", "one"], ["is_odd"]),
        helper.make_node("If", ["is_odd"], ["picked"], **branches),
    ]
    body = _body(extra)
    body.output[2].name = "picked"  # scan the branch's result
    body.initializer.extend([numpy_helper.from_array(np.array(2, "int64"), "two"),
                             numpy_helper.from_array(np.array(1, "int64"), "one")])  # fmt: skip
    _check(_loop_model(body), _loop_feeds())


def test_loop_past_the_unroll_limit_names_the_node() -> None:
    model = _loop_model(_body())
    model.graph.initializer[0].CopyFrom(
        numpy_helper.from_array(np.array(MAX_UNROLLED_ITERATIONS + 1, "int64"), "M")
    )
    with pytest.raises(OnnxImportError, match=r"'loop' \(Loop.*more than"):
        from_onnx(model)


def test_loop_without_trip_count_or_condition_is_refused() -> None:
    with pytest.raises(OnnxImportError, match="never ends"):
        from_onnx(_loop_model(_body(), trip=""))
