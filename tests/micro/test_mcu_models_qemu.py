"""The microcontroller models (models/make_mcu_models.py), float32 and int8 (QDQ), end to end on
the emulated Cortex-M4: ONNX -> relay.build with the AOT executor for ``c -mcpu=cortex-m4`` -> the
``qemu-cortex-m4`` project -> ``pytvm.micro.Session`` over the board's UART ->
``create_aot_executor()``: the outputs equal ONNX Runtime's (int8: within one output code), and
the device's time evaluator (QEMU with ``-icount shift=0``) counts the run's instructions. One
project per model, one session each.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

import pytvm as tvm
from pytvm import relay
from pytvm.frontend import from_onnx
from pytvm.micro import Session, generate_project, get_microtvm_template_projects
from pytvm.micro.project import GeneratedProject
from pytvm.relay.backend import Executor, Runtime

MAKE_MCU_MODELS = Path(__file__).resolve().parents[2] / "models" / "make_mcu_models.py"

pytestmark = [
    pytest.mark.skipif(
        shutil.which("arm-none-eabi-gcc") is None,
        reason="arm-none-eabi-gcc is not installed (gcc-arm-none-eabi)",
    ),
    pytest.mark.skipif(
        shutil.which("qemu-system-arm") is None,
        reason="qemu-system-arm is not installed (qemu-system-arm)",
    ),
]


def _models() -> Any:
    spec = importlib.util.spec_from_file_location("make_mcu_models", MAKE_MCU_MODELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mcu = _models()


@dataclass(frozen=True)
class Built:
    project: GeneratedProject
    input_name: str
    x: np.ndarray
    expected: np.ndarray
    macs: int
    #: The output's quantization step for an int8 model (its codes may differ by one), else 0.
    step: float


@pytest.fixture(
    scope="module",
    params=["kws_cnn", "person_detect_cnn", "kws_cnn_int8", "person_detect_cnn_int8"],
)
def built(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Built]:
    """The model's qemu-cortex-m4 project, built, with its input and ONNX Runtime's output."""
    model = mcu.MODELS[request.param]()
    mod, params = from_onnx(model)
    executor = Executor("aot", {"interface-api": "c", "unpacked-api": True, "link-params": True})
    with tvm.transform.PassContext(opt_level=3):
        factory = relay.build(
            mod,
            target="c -mcpu=cortex-m4",
            executor=executor,
            runtime=Runtime("crt", {"system-lib": True}),
            params=params,
            mod_name="default",
        )
    project = generate_project(
        get_microtvm_template_projects("qemu-cortex-m4"),
        factory,
        tmp_path_factory.mktemp(request.param) / "project",
        {"icount_shift": 0},
    )
    project.build()
    project.flash()
    name, x = mcu.input_for(model, 1)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = sess.run(None, {name: x})
    step = mcu.output_step(model)
    yield Built(project, name, x, np.asarray(expected), mcu.count_macs(model), step)


def test_model_in_qemu_matches_onnxruntime(built: Built) -> None:
    with Session(transport_context_manager=built.project.transport()) as sess:
        executor = sess.create_aot_executor()
        assert executor.get_num_inputs() == 1
        executor.set_input(built.input_name, built.x)
        executor.run()
        got = executor.get_output(0).numpy()
        if built.step:  # int8: within one output code of ONNX Runtime's
            np.testing.assert_allclose(got, built.expected, rtol=0, atol=built.step * 1.01)
        else:
            np.testing.assert_allclose(got, built.expected, rtol=1e-4, atol=1e-5)
            assert int(got.argmax()) == int(built.expected.argmax())
        # -icount shift=0: one instruction per ns of the board's clock
        timer = executor.module.time_evaluator("run", sess.device, number=1, repeat=1)
        instructions = timer().mean * 1e9
    assert built.macs < instructions < 20 * built.macs
