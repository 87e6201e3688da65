"""models/make_mcu_models.py: the microcontroller-sized models are valid ONNX, have the sizes of
the networks they copy, and compile with pytvm to the outputs ONNX Runtime computes.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import pytvm
from pytvm import graph
from pytvm.contrib import graph_executor
from pytvm.frontend import from_onnx

MAKE_MCU_MODELS = Path(__file__).resolve().parents[2] / "models" / "make_mcu_models.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_mcu_models", MAKE_MCU_MODELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mcu = _load()


@pytest.mark.parametrize(
    ("name", "in_shape", "out_shape", "macs", "nbytes"),
    [
        # DS-CNN small: ~22.6K weights, 2.66M MACs (ML-KWS: 38.6K params, 5.4M ops with BN)
        ("kws_cnn", (1, 1, 49, 10), (1, 12), 2_656_768, 90_416),
        # MobileNetV1-0.25 on 96x96x1: ~211K weights, 7.16M MACs
        ("person_detect_cnn", (1, 1, 96, 96), (1, 2), 7_157_888, 842_824),
    ],
)
def test_model_shapes_and_sizes(
    name: str, in_shape: tuple[int, ...], out_shape: tuple[int, ...], macs: int, nbytes: int
) -> None:
    model = mcu.MODELS[name]()
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version >= 13
    _, x = mcu.input_for(model, 0)
    assert x.shape == in_shape and x.dtype == np.float32
    assert mcu.verify(model).shape == out_shape
    assert mcu.count_macs(model) == macs
    assert mcu.param_bytes(model) == nbytes


def test_int8_models_are_qdq_of_the_float_ones() -> None:
    model = mcu.make_kws_cnn_int8()
    onnx.checker.check_model(model, full_check=True)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("Conv") == 9 and ops.count("QuantizeLinear") > 9
    assert model.graph.name == "kws_cnn_int8"
    assert mcu.count_macs(model) == mcu.count_macs(mcu.make_kws_cnn())
    assert mcu.param_bytes(model) < mcu.param_bytes(mcu.make_kws_cnn()) / 2
    assert mcu.output_step(model) == pytest.approx(1 / 255)  # softmax in [0, 1], int8 codes
    assert mcu.output_step(mcu.make_kws_cnn()) == 0.0
    np.testing.assert_array_equal(
        mcu.input_for(model, 2)[1], mcu.input_for(mcu.make_kws_cnn(), 2)[1]
    )


def test_models_are_deterministic() -> None:
    assert mcu.make_kws_cnn().SerializeToString() == mcu.make_kws_cnn().SerializeToString()
    _, a = mcu.input_for(mcu.make_kws_cnn(), 3)
    _, b = mcu.input_for(mcu.make_kws_cnn(), 3)
    np.testing.assert_array_equal(a, b)


def test_same_padding_of_stride_two() -> None:
    # TensorFlow's SAME: the odd extra row/column of padding goes at the end
    assert mcu.same_pads((49, 10), (10, 4), 2) == [4, 1, 5, 1]
    assert mcu.same_pads((96, 96), (3, 3), 2) == [0, 0, 1, 1]
    assert mcu.same_pads((25, 5), (3, 3), 1) == [1, 1, 1, 1]


@pytest.mark.llvm
@pytest.mark.parametrize("name", ["kws_cnn", "person_detect_cnn", "kws_cnn_int8"])
def test_pytvm_llvm_matches_onnxruntime(name: str) -> None:
    model = mcu.MODELS[name]()
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](pytvm.cpu()))
    inp, x = mcu.input_for(model, 1)
    m.set_input(inp, x)
    m.run()
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = sess.run(None, {inp: x})
    # an int8 model's output may differ by one quantization step
    atol = mcu.output_step(model) * 1.001 or 1e-6
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-5, atol=atol)


def test_script_writes_the_models(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(MAKE_MCU_MODELS), str(tmp_path), "--only", "kws_cnn"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "kws_cnn" in done.stdout and "MACs=  2656768" in done.stdout
    assert onnx.load(str(tmp_path / "kws_cnn.onnx")).graph.name == "kws_cnn"
