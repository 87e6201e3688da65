"""ONNX's backend interface over pytvm: prepare and run like ``onnxruntime.backend``, results
cached by model content, inputs that must be known at import time specialized per value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.ffi.errors import TVMValueError
from pytvm.frontend.onnx import backend

F = TensorProto.FLOAT
RNG = np.random.default_rng(4)


def _mlp(seed: int = 0) -> onnx.ModelProto:
    w = np.random.default_rng(seed).standard_normal((6, 3)).astype("float32")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
        helper.make_node("Neg", ["y"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", F, [2, 6])],
        [
            helper.make_tensor_value_info("y", F, [2, 3]),
            helper.make_tensor_value_info("z", F, [2, 3]),
        ],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return sess.run(None, feeds)  # type: ignore[no-any-return]


def test_prepare_and_run_match_onnxruntime() -> None:
    model = _mlp()
    x = RNG.standard_normal((2, 6)).astype("float32")
    rep = backend.prepare(model, "CPU")
    outs = rep.run([x])
    assert isinstance(outs, tuple) and len(outs) == 2
    for got, want in zip(outs, _ort(model, {"x": x}), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    by_name = rep.run({"x": x})
    np.testing.assert_array_equal(by_name[1], outs[1])
    np.testing.assert_array_equal(backend.run_model(model, [x])[0], outs[0])


def test_compiled_and_interpreted_runs_agree() -> None:
    model = _mlp(seed=5)
    x = RNG.standard_normal((2, 6)).astype("float32")
    compiled = backend.prepare(model, executor="graph").run([x])
    interpreted = backend.prepare(model, executor="interpreter").run([x])
    for a, b in zip(compiled, interpreted, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(TVMValueError, match="executor 'vm' is not one of"):
        backend.prepare(model, executor="vm")


def test_the_same_model_is_prepared_once() -> None:
    before = backend.cached_models()
    first = backend.prepare(_mlp(seed=11))
    again = backend.prepare(_mlp(seed=11))
    assert backend.cached_models() == before + 1
    assert first._run is again._run
    backend.prepare(_mlp(seed=12))  # another model: prepared anew
    assert backend.cached_models() == before + 2


def test_models_from_a_path_or_bytes(tmp_path: Path) -> None:
    model = _mlp(seed=3)
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    x = RNG.standard_normal((2, 6)).astype("float32")
    want = _ort(model, {"x": x})[0]
    np.testing.assert_allclose(backend.prepare(str(path)).run([x])[0], want, rtol=1e-5)
    np.testing.assert_allclose(
        backend.prepare(model.SerializeToString()).run(x)[0], want, rtol=1e-5
    )


def test_devices() -> None:
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    with pytest.raises(TVMValueError, match="CUDA"):
        backend.prepare(_mlp(), "CUDA")


def test_a_shape_fed_as_an_input_is_specialized_per_value() -> None:
    node = helper.make_node("Reshape", ["x", "shape"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", F, [4, 6]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", F, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rep = backend.prepare(model)
    x = RNG.standard_normal((4, 6)).astype("float32")
    before = backend.cached_models()
    for shape in ([3, 8], [-1, 2], [3, 8]):
        (y,) = rep.run([x, np.array(shape, "int64")])
        np.testing.assert_array_equal(y, x.reshape(shape))
    assert backend.cached_models() == before + 2  # one per distinct shape


def test_wrong_inputs_are_named() -> None:
    rep = backend.prepare(_mlp())
    with pytest.raises(TVMValueError, match=r"takes 1 input\(s\) \['x'\], got 2"):
        rep.run([np.zeros((2, 6), "float32")] * 2)
    with pytest.raises(TVMValueError, match=r"no value for input\(s\) \['x'\]"):
        rep.run({"y": np.zeros((2, 6), "float32")})
