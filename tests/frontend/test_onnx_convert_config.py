"""from_onnx's convert_config and shape_dict checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError, UnknownInputError


def _batched_matmul() -> object:
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 4, 5]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 5])],
    )
    return helper.make_model(graph)


@pytest.mark.parametrize("nt", [True, False])
def test_use_nt_batch_matmul_chooses_the_layout_not_the_result(nt: bool) -> None:
    mod, _ = relay.frontend.from_onnx(_batched_matmul(), convert_config={"use_nt_batch_matmul": nt})
    text = mod.astext()
    assert ("transpose_b=True" in text) == nt
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    b = rng.standard_normal((2, 4, 5)).astype("float32")
    out = relay.create_executor("debug", mod).evaluate()(a, b).numpy()
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_unknown_options_and_inputs_are_refused() -> None:
    with pytest.raises(OnnxImportError, match="unknown convert_config"):
        relay.frontend.from_onnx(_batched_matmul(), convert_config={"fast": True})
    with pytest.raises(AssertionError, match="not inputs of the graph"):
        relay.frontend.from_onnx(_batched_matmul(), shape={"z": [5]})
    assert issubclass(UnknownInputError, OnnxImportError)


def test_export_node_renamed_model_names_unnamed_nodes(tmp_path: Path) -> None:
    import onnx

    relay.frontend.from_onnx(_batched_matmul(), export_node_renamed_model_path=str(tmp_path))
    (saved,) = [f for f in tmp_path.iterdir() if f.name.startswith("tvm_exported_model_")]
    assert onnx.load(str(saved)).graph.node[0].name == "MatMul_0"


def test_pow_with_an_exponent_given_at_run_time() -> None:
    node = helper.make_node("Pow", ["x", "y"], ["out"])
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])],
    )
    mod, _ = relay.frontend.from_onnx(helper.make_model(graph))
    rng = np.random.default_rng(0)
    x, y = (rng.uniform(0.5, 2, (2, 3)).astype("float32") for _ in range(2))
    out = relay.create_executor("graph", mod).evaluate()(x, y).numpy()
    np.testing.assert_allclose(out, np.power(x, y), rtol=1e-5)
