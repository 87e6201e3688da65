"""The reference models import and, run by the reference interpreter, match ONNX Runtime;
weights are parameters; older exporters' models (weights listed among the inputs) import the
same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest

from pytvm.frontend import from_onnx
from pytvm.graph import TensorType, Var
from pytvm.graph.interpreter import interpret

REFERENCE_MODELS = ("mlp", "cnn_small", "resnet18", "mobilenet_v2", "transformer_block")


def _ort(model: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    data = model if isinstance(model, (str, Path)) else model.SerializeToString()
    sess = onnxruntime.InferenceSession(
        str(data) if isinstance(data, Path) else data, providers=["CPUExecutionProvider"]
    )
    return sess.run(None, feeds)  # type: ignore[no-any-return]


def _input_of(path: Path) -> tuple[str, np.ndarray]:
    model = onnx.load(str(path))
    info = model.graph.input[0]
    shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
    return info.name, np.random.default_rng(1).standard_normal(shape).astype("float32")


@pytest.mark.parametrize("name", REFERENCE_MODELS)
def test_reference_model_matches_onnxruntime(name: str, reference_models: dict[str, Path]) -> None:
    path = reference_models[name]
    mod, params = from_onnx(path)
    input_name, x = _input_of(path)
    got = interpret(mod["main"], {input_name: x, **params})
    (want,) = _ort(path, {input_name: x})
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_weights_are_parameters_with_their_arrays(reference_models: dict[str, Path]) -> None:
    path = reference_models["cnn_small"]
    mod, params = from_onnx(path)
    main = mod["main"]
    model = onnx.load(str(path))
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    assert next(p.name for p in main.params) == "input"
    weight_vars = {p.name: p for p in main.params[1:]}
    assert set(weight_vars) == set(params) and params
    for name, value in params.items():
        assert isinstance(weight_vars[name], Var)
        np.testing.assert_array_equal(value, inits[name])
        assert weight_vars[name].type_annotation == TensorType(value.shape, str(value.dtype))


def test_weights_listed_among_inputs_are_parameters_not_inputs(
    reference_models: dict[str, Path],
) -> None:
    model = onnx.load(str(reference_models["cnn_small"]))
    for init in model.graph.initializer:  # the older exporters' style
        model.graph.input.append(
            onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims))
        )
    mod, params = from_onnx(model)
    main = mod["main"]
    assert [p.name for p in main.params if p.name not in params] == ["input"]
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype("float32")
    (want,) = _ort(model, {"input": x})
    np.testing.assert_allclose(interpret(main, {"input": x, **params}), want, rtol=1e-4, atol=1e-4)


def test_frozen_params_become_constants(reference_models: dict[str, Path]) -> None:
    path = reference_models["mlp"]
    mod, params = from_onnx(path, freeze_params=True)
    assert params == {}
    assert [p.name for p in mod["main"].params] == ["input"]
    x = np.random.default_rng(3).standard_normal((1, 784)).astype("float32")
    (want,) = _ort(path, {"input": x})
    np.testing.assert_allclose(interpret(mod["main"], {"input": x}), want, rtol=1e-4, atol=1e-4)
