"""ONNX DFT (opsets 17 and 20): real and complex signals, inverse, one-sided, dft_length,
against numpy's FFT, compiled for llvm and C.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm import relay


def _model(shape: list[int], out: list[int], opset: int, length: int | None, **attrs: Any) -> Any:
    names, inits = ["x"], []
    if length is not None:
        names.append("n")
        inits.append(numpy_helper.from_array(np.array(length, dtype="int64"), "n"))
    if opset >= 20 and "axis" in attrs:
        names += [""] * (2 - len(names)) + ["axis"]
        inits.append(numpy_helper.from_array(np.array(attrs.pop("axis"), dtype="int64"), "axis"))
    graph = helper.make_graph(
        [helper.make_node("DFT", names, ["y"], **attrs)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(model: Any, x: np.ndarray, target: str = "llvm") -> np.ndarray:
    mod, params = relay.frontend.from_onnx(model)
    out: np.ndarray = (
        relay.create_executor("graph", mod, target=target).evaluate()(x, **params).numpy()
    )
    return out


def _complex(y: np.ndarray) -> np.ndarray:
    out: np.ndarray = y[..., 0] + 1j * y[..., 1]
    return out


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_dft_of_a_real_signal_along_axis_1(target: str) -> None:
    x = np.random.default_rng(0).standard_normal((2, 6, 3, 1)).astype("float32")
    got = _run(_model([2, 6, 3, 1], [2, 6, 3, 2], 17, None, axis=1), x, target)
    np.testing.assert_allclose(_complex(got), np.fft.fft(x[..., 0], axis=1), atol=1e-4)


def test_inverse_dft_of_a_complex_signal_opset20_default_axis() -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 2)).astype("float32")
    got = _run(_model([2, 3, 5, 2], [2, 3, 5, 2], 20, None, inverse=1), x)
    np.testing.assert_allclose(_complex(got), np.fft.ifft(_complex(x), axis=2), atol=1e-5)


def test_onesided_dft_with_padding_to_dft_length() -> None:
    x = np.random.default_rng(2).standard_normal((1, 5, 1)).astype("float32")
    got = _run(_model([1, 5, 1], [1, 5, 2], 17, 8, onesided=1, axis=1), x)
    np.testing.assert_allclose(_complex(got), np.fft.rfft(x[..., 0], n=8, axis=1), atol=1e-4)
