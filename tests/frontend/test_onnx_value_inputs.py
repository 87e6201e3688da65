"""Value specialization: a model whose shapes depend on graph inputs' values imports as a
``ValueSpecializedModule``, executors compile it per values (cached), and whatever needs the
graph without the values raises naming them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import relay
from pytvm.frontend.onnx.errors import DynamicValueError
from pytvm.frontend.onnx.specialize import (
    ShapeInputsRequiredError,
    ValueInputsRequiredError,
    ValueSpecializedModule,
)

X = np.arange(60, dtype="float32").reshape(3, 4, 5) / 7.0


def _reduce_sum(axes_initializer: np.ndarray | None = None) -> Any:
    """ReduceSum(x, axes): axes a graph input, or an initializer when given."""
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])]
    inits = []
    if axes_initializer is None:
        inputs.append(helper.make_tensor_value_info("axes", TensorProto.INT64, [1]))
    else:
        inits.append(numpy_helper.from_array(axes_initializer, "axes"))
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "reduce", inputs, out, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _reshape_then_range() -> Any:
    """A model computing Reshape(x, shape) + Cast(Range(start, limit, delta)): two value inputs,
    the second found only once the first is bound.
    """
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Range", ["start", "limit", "delta"], ["q"]),
        helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["r", "w"], ["rw"]),
        helper.make_node("Add", ["rw", "qf"], ["y"]),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
        helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        helper.make_tensor_value_info("start", TensorProto.INT64, []),
        helper.make_tensor_value_info("limit", TensorProto.INT64, []),
        helper.make_tensor_value_info("delta", TensorProto.INT64, []),
    ]
    w = numpy_helper.from_array(np.full(3, 2.0, dtype="float32"), "w")
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph(nodes, "reshape_range", inputs, out, initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _deferred(model: Any, shapes: dict[str, Any]) -> ValueSpecializedModule:
    mod, _ = relay.frontend.from_onnx(model, shapes)
    assert isinstance(mod, ValueSpecializedModule)
    return mod


def _axes(k: int) -> np.ndarray:
    return np.array([k], dtype="int64")


def test_import_records_the_value_inputs_and_typed_params() -> None:
    mod, params = relay.frontend.from_onnx(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    assert isinstance(mod, ValueSpecializedModule)
    assert mod.value_inputs == ("axes",)
    assert [(p.name, str(p.type_annotation)) for p in mod["main"].params] == [
        ("x", "Tensor[(3, 4, 5), float32]"),
        ("axes", "Tensor[(1), int64]"),
    ]
    assert params == {}


@pytest.mark.parametrize("kind", ["vm", "graph", "debug"])
def test_each_call_compiles_for_the_values_it_gives(kind: str) -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    run = relay.create_executor(kind, mod, pytvm.cpu(), "llvm").evaluate()
    for k in (1, 2, -3):
        out = run(X, _axes(k)).numpy()
        np.testing.assert_allclose(out, X.sum(axis=k, keepdims=True), rtol=1e-5)


def test_same_values_reuse_the_compiled_function() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    specializer = mod["main"].specializer
    before = specializer.cache_sizes()
    run = relay.create_executor("vm", mod, pytvm.cpu(), "llvm").evaluate()
    run(X, _axes(-2))  # values no other test here gives (the caches are shared)
    run(X + 1.0, _axes(-2))
    grown = specializer.cache_sizes()
    assert grown == (before[0] + 1, before[1] + 1)
    run(X, _axes(-1))
    assert specializer.cache_sizes() == (grown[0] + 1, grown[1] + 1)
    spec = mod["main"].specialize({"axes": _axes(0)})
    assert spec is mod["main"].specialize({"axes": _axes(0).copy()})


def test_results_equal_a_static_import_with_the_values_as_initializers() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    static, _ = relay.frontend.from_onnx(_reduce_sum(_axes(1)), {"x": (3, 4, 5)})
    got = relay.create_executor("vm", mod).evaluate()(X, _axes(1)).numpy()
    want = relay.create_executor("vm", static).evaluate()(X).numpy()
    assert got.shape == want.shape == (3, 1, 5)
    np.testing.assert_array_equal(got, want)
    pytvm.ir.assert_structural_equal(
        mod["main"].specialize({"axes": _axes(1)}).func, static["main"]
    )


def test_a_value_input_found_at_call_time_is_bound_too() -> None:
    shapes = {"x": (2, 6), "shape": (2,)}
    _, params = relay.frontend.from_onnx(_reshape_then_range(), shapes)
    assert sorted(params) == ["w"]
    mod = _deferred(_reshape_then_range(), shapes)
    assert mod.value_inputs == ("shape",)
    x = np.arange(12, dtype="float32").reshape(2, 6)
    run = relay.create_executor("vm", mod).evaluate()
    scalars = [np.array(v, dtype="int64") for v in (0, 3, 1)]
    out = run(x, np.array([4, 3], dtype="int64"), *scalars, **params).numpy()
    np.testing.assert_allclose(out, x.reshape(4, 3) * 2.0 + np.arange(3, dtype="float32"))
    assert mod["main"].value_inputs == ("shape", "start", "limit", "delta")


def test_two_imports_of_one_model_are_structurally_equal() -> None:
    shapes = {"x": (3, 4, 5), "axes": (1,)}
    a, _ = relay.frontend.from_onnx(_reduce_sum(), shapes)
    b, _ = relay.frontend.from_onnx(_reduce_sum(), shapes)
    pytvm.ir.assert_structural_equal(a, b)
    other, _ = relay.frontend.from_onnx(_reshape_then_range(), {"x": (2, 6), "shape": (2,)})
    assert not pytvm.ir.structural_equal(a, other)


def test_build_without_the_values_names_them() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    with pytest.raises(ValueInputsRequiredError, match=r"relay.build.*\['axes'\].*params="):
        relay.build(mod, "llvm")
    with pytest.raises(ValueInputsRequiredError, match=r"text of main.*\['axes'\]"):
        mod.astext()
    with pytest.raises(ValueInputsRequiredError, match=r"\['axes'\]"):
        str(mod["main"])
    with pytest.raises(TypeError, match="ValueSpecializedModule"):
        pytvm.graph.build(mod)


def test_build_with_the_values_in_params_compiles_the_static_model() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    lib = relay.build(mod, "llvm", params={"axes": _axes(2)})
    m = pytvm.contrib.graph_executor.GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", X)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), X.sum(axis=2, keepdims=True), rtol=1e-5)


def test_values_fixed_ahead_by_executor_params_or_binds() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    fixed = relay.create_executor("graph", mod, params={"axes": _axes(0)}).evaluate()
    np.testing.assert_allclose(fixed(X).numpy(), X.sum(axis=0, keepdims=True), rtol=1e-5)
    axes = mod["main"].params[1]
    bound = relay.create_executor("graph", mod).evaluate(binds={axes: _axes(1)})
    np.testing.assert_allclose(bound(X).numpy(), X.sum(axis=1, keepdims=True), rtol=1e-5)


def test_a_value_of_the_wrong_type_raises() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    run = relay.create_executor("vm", mod).evaluate()
    with pytest.raises(ValueError, match=r"'axes' expects a int64 tensor of shape \(1,\)"):
        run(X, np.array([1], dtype="int32"))
    with pytest.raises(DynamicValueError, match="int64 tensor of shape"):
        mod["main"].specialize({"axes": np.array([1, 2], dtype="int64")})


def test_a_bad_value_fails_at_its_node() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    with pytest.raises(ValueError, match="ReduceSum"):
        relay.create_executor("vm", mod).evaluate()(X, _axes(7))


def test_a_result_outlives_a_call_sharing_its_compiled_function() -> None:
    mod = _deferred(_reduce_sum(), {"x": (3, 4, 5), "axes": (1,)})
    first = relay.create_executor("vm", mod).evaluate()(X, _axes(1))
    relay.create_executor("vm", mod).evaluate()(X * 3.0, _axes(1))
    np.testing.assert_allclose(first.numpy(), X.sum(axis=1, keepdims=True), rtol=1e-5)


def test_a_model_changed_after_the_import_does_not_change_the_module() -> None:
    model = _reduce_sum()
    mod = _deferred(model, {"x": (3, 4, 5), "axes": (1,)})
    model.graph.node[0].attribute[0].i = 0  # keepdims=0 in the caller's copy only
    out = relay.create_executor("vm", mod).evaluate()(X, _axes(0)).numpy()
    assert out.shape == (1, 4, 5)


def _matmul_relu(a_dims: list[Any], b_dims: list[Any]) -> Any:
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    inputs = [
        helper.make_tensor_value_info("a", TensorProto.FLOAT, a_dims),
        helper.make_tensor_value_info("b", TensorProto.FLOAT, b_dims),
    ]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph(nodes, "matmul", inputs, out)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_dimensions_known_at_run_time_compile_per_shape() -> None:
    model = _matmul_relu(["n", 4], [4, 3])  # 'n' symbolic, no shape_dict entry
    mod, _ = relay.frontend.from_onnx(model)
    assert isinstance(mod, ValueSpecializedModule)
    assert [str(p.type_annotation) for p in mod["main"].params] == [
        "Tensor[(?, 4), float32]",
        "Tensor[(4, 3), float32]",
    ]
    run = relay.create_executor("vm", mod).evaluate()
    rng = np.random.default_rng(0)
    b = rng.standard_normal((4, 3)).astype("float32")
    for n in (2, 5):
        a = rng.standard_normal((n, 4)).astype("float32")
        np.testing.assert_allclose(run(a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)
    with pytest.raises(
        ValueError, match=r"'a' expects a float32 tensor of shape Tensor\[\(\?, 4\)"
    ):
        run(np.zeros((2, 5), "float32"), b)


def test_relay_any_in_shape_dict_is_a_run_time_dimension() -> None:
    model = _matmul_relu([2, 4], [4, 3])
    shapes = {"a": [relay.Any(), relay.Any()], "b": [relay.Any(), relay.Any()]}
    mod, _ = relay.frontend.from_onnx(model, shapes)
    run = relay.create_executor("graph", mod).evaluate()
    a, b = np.ones((3, 5), "float32"), np.ones((5, 2), "float32")
    np.testing.assert_array_equal(run(a, b).numpy(), np.full((3, 2), 5.0, "float32"))
    with pytest.raises(ShapeInputsRequiredError, match=r"\['a', 'b'\].*shape_dict"):
        relay.build(mod, "llvm")
