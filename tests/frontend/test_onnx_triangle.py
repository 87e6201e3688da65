"""ONNX Trilu with ``k`` a constant, a run-time input, or absent: compiled, against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm import relay


def _model(upper: int, k: int | None, k_is_input: bool) -> Any:
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5])]
    inits = []
    names = ["x"]
    if k is not None:
        names.append("k")
        if k_is_input:
            inputs.append(helper.make_tensor_value_info("k", TensorProto.INT64, []))
        else:
            inits.append(numpy_helper.from_array(np.array(k, dtype="int64"), "k"))
    graph = helper.make_graph(
        [helper.make_node("Trilu", names, ["y"], upper=upper)],
        "g",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 5])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [-7, -1, 0, 2, 9])
def test_trilu_with_run_time_k(k: int, upper: int, target: str) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype("float32")
    mod, _ = relay.frontend.from_onnx(_model(upper, k, True))
    got = relay.create_executor("graph", mod, target=target).evaluate()(x, np.array(k)).numpy()
    np.testing.assert_array_equal(got, np.triu(x, k) if upper else np.tril(x, k))


@pytest.mark.parametrize("k", [None, 1])
def test_trilu_with_constant_or_default_k(k: int | None) -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 5)).astype("float32")
    mod, _ = relay.frontend.from_onnx(_model(0, k, False))
    got = relay.create_executor("graph", mod).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, np.tril(x, k or 0))


def test_trilu_of_a_huge_input_makes_no_constant() -> None:
    """The triangle is computed in the kernel: no mask of the input's size is allocated."""
    side = 2**20  # a 2**40-element input: 4 TiB of float32
    graph = helper.make_graph(
        [helper.make_node("Trilu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [side, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [side, side])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    mod, params = relay.frontend.from_onnx(model)
    assert not params
    assert "trilu" in mod.astext()
