"""ONNX element types pytvm lacks (float8, bfloat16, int4, strings) are refused by name, in
inputs, initializers and Cast, never computed as some other type.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pytvm.frontend import from_onnx
from pytvm.frontend.onnx.errors import OnnxImportError


def _cast_model(to: int) -> onnx.ModelProto:
    node = helper.make_node("Cast", ["x"], ["y"], to=to)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", to, [4])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize(
    "to", [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2FNUZ, TensorProto.BFLOAT16]
)
def test_cast_to_a_type_pytvm_lacks_is_refused_by_name(to: int) -> None:
    name = TensorProto.DataType.Name(to)
    with pytest.raises(OnnxImportError, match=name):
        from_onnx(_cast_model(to))


def test_an_initializer_of_a_type_pytvm_lacks_is_refused() -> None:
    weight = helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [2], [1.0, 2.0])
    node = helper.make_node("Identity", ["w"], ["y"])
    graph = helper.make_graph(
        [node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [weight]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(OnnxImportError, match="FLOAT8E4M3FN"):
        from_onnx(model)


def test_supported_casts_still_convert() -> None:
    mod, _ = from_onnx(_cast_model(TensorProto.FLOAT16))
    assert "float16" in str(mod) and np.dtype("float16").itemsize == 2
