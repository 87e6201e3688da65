"""ONNX BitShift: shifts of unsigned integers, compiled, against numpy's."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError

_TYPES = {"uint8": TensorProto.UINT8, "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64}


def _model(direction: str, dtype: str, shift_shape: list[int]) -> object:
    node = helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)
    proto = _TYPES.get(dtype, TensorProto.INT32)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", proto, [2, 4]),
            helper.make_tensor_value_info("s", proto, shift_shape),
        ],
        [helper.make_tensor_value_info("y", proto, [2, 4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("dtype", sorted(_TYPES))
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_matches_numpy(dtype: str, direction: str) -> None:
    rng = np.random.default_rng(0)
    bits = np.dtype(dtype).itemsize * 8
    x = rng.integers(0, np.iinfo(dtype).max, (2, 4), dtype=dtype, endpoint=True)
    s = rng.integers(0, bits, (4,)).astype(dtype)
    mod, _ = relay.frontend.from_onnx(_model(direction, dtype, [4]))
    out = relay.create_executor("graph", mod).evaluate()(x, s).numpy()
    expected = np.left_shift(x, s) if direction == "LEFT" else np.right_shift(x, s)
    np.testing.assert_array_equal(out, expected)


def test_bitshift_of_signed_integers_is_refused() -> None:
    with pytest.raises(OnnxImportError, match="unsigned"):
        relay.frontend.from_onnx(_model("LEFT", "int32", [4]))
