"""Int8 keyword spotting on a Cortex-M4: models/make_mcu_models.py's ``kws_cnn`` quantized by
ONNX Runtime (QDQ; int8 weights per channel or per tensor; uint8 or int8 activations), imported,
built for ``c -mcpu=cortex-m4`` (the DSP kernel for its convolutions and dense layer) and with the
DSP extension turned off (``-mattr=-dsp``: the scalar kernels). The C compiles warning-free for
the M4F needing only newlib, libgcc and the CRT API, and compiled for this machine it gives ONNX
Runtime's output codes (within one).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import numpy_helper

import pytvm
from pytvm.driver.source_build import compile_for_host
from pytvm.frontend import from_onnx
from pytvm.runtime.graph_executor import GraphExecutorFactory, GraphModule
from pytvm.runtime.source_module import SourceModule, crt_include_dirs
from pytvm.target import Target
from pytvm.testing.cortex_m_int8 import ARM_GCC, arm_compile, newlib_symbols, quantize_qdq

needs_arm_gcc = pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed")
MAKE_MCU_MODELS = Path(__file__).resolve().parents[2] / "models" / "make_mcu_models.py"
#: The flags of the issue: warnings are errors.
FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Os"]
CRT_API = frozenset(
    {
        "TVMAPISetLastError",
        "TVMBackendAllocWorkspace",
        "TVMBackendFreeWorkspace",
        "TVMBackendGetFuncFromEnv",
        "TVMFuncCall",
    }
)
# name -> (activation type, weights per channel)
VARIANTS = {"u8_per_channel": ("QUInt8", True), "s8_per_tensor": ("QInt8", False)}
TARGETS = {
    "dsp": "c -mcpu=cortex-m4 --system-lib",
    "scalar": "c -mcpu=cortex-m4 -mattr=-dsp --system-lib",
}


def _make_mcu_models() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_mcu_models", MAKE_MCU_MODELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def models() -> dict[str, onnx.ModelProto]:
    float_model = _make_mcu_models().make_kws_cnn()
    return {
        name: quantize_qdq(float_model, activation, per_channel)
        for name, (activation, per_channel) in VARIANTS.items()
    }


@pytest.fixture(scope="module")
def built(models: dict[str, onnx.ModelProto]) -> dict[tuple[str, str], GraphExecutorFactory]:
    out = {}
    for name, model in models.items():
        mod, params = from_onnx(model)
        for kind, target in TARGETS.items():
            out[name, kind] = pytvm.graph.build(mod, target=Target(target), params=params)
    return out


def _output_step(model: onnx.ModelProto) -> float:
    """The scale of the model's output codes (its last DequantizeLinear's)."""
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    last = next(n for n in reversed(model.graph.node) if n.op_type == "DequantizeLinear")
    return float(consts[last.input[1]])


@pytest.mark.parametrize("kind", list(TARGETS))
@pytest.mark.parametrize("name", list(VARIANTS))
def test_int8_kws_matches_onnxruntime_codes_on_the_host(
    name: str,
    kind: str,
    models: dict[str, onnx.ModelProto],
    built: dict[tuple[str, str], GraphExecutorFactory],
) -> None:
    model, factory = models[name], built[name, kind]
    assert isinstance(factory.lib, SourceModule)
    source = factory.lib.get_source()
    assert ("pytvm_smlad(" in source) == (kind == "dsp")
    assert "vector_size" not in source
    host = GraphExecutorFactory(factory.graph_json, factory.params, compile_for_host(factory.lib))
    gm = GraphModule(host["default"](pytvm.cpu()))
    step = _output_step(model)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    sess = onnxruntime.InferenceSession(model.SerializeToString(), options)
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((1, 1, 49, 10)).astype("float32")
        gm.set_input("input", x)
        gm.run()
        (want,) = sess.run(None, {"input": x})
        codes = np.abs(gm.get_output(0).numpy() - want) / step
        assert codes.max() <= 1 + 1e-3, (seed, codes.max())


@needs_arm_gcc
@pytest.mark.parametrize("kind", list(TARGETS))
def test_int8_kws_compiles_for_cortex_m4_warning_free(
    kind: str, built: dict[tuple[str, str], GraphExecutorFactory], tmp_path: Path
) -> None:
    lib = built["u8_per_channel", kind].lib
    assert isinstance(lib, SourceModule)
    assert "-DPYTVM_CRT=1" in lib.cflags
    includes = [str(d) for d in crt_include_dirs()]
    undefined, asm = arm_compile(lib.get_source(), [*lib.cflags, *FLAGS], includes, tmp_path)
    assert ("\tsmlad\t" in asm) == (kind == "dsp")
    assert "TVMBackendParallelLaunch" not in undefined
    allowed = newlib_symbols(tuple(lib.cflags)) | CRT_API
    assert undefined <= allowed, undefined - allowed


@needs_arm_gcc
def test_int8_kws_aot_compiles_for_cortex_m4_pedantic(
    models: dict[str, onnx.ModelProto], tmp_path: Path
) -> None:
    """The AOT executor's unpacked C (no CRT) with the DSP helpers, under -pedantic."""
    from pytvm import relay
    from pytvm.relay import backend

    mod, params = from_onnx(models["s8_per_tensor"])
    executor = backend.Executor(
        "aot", {"interface-api": "c", "unpacked-api": True, "link-params": True}
    )
    runtime = backend.Runtime("crt", {"system-lib": True})
    factory = relay.build(
        mod, target="c -mcpu=cortex-m4", executor=executor, runtime=runtime, params=params
    )
    lib = factory.lib
    assert isinstance(lib, SourceModule)
    kernels = lib.sources["default_lib0.c"]
    assert "pytvm_smlad(" in kernels
    flags = [f for f in lib.cflags if f != "-DPYTVM_CRT=1"]
    undefined, asm = arm_compile(kernels, [*flags, *FLAGS, "-pedantic"], [], tmp_path)
    assert "\tsmlad\t" in asm
    assert undefined <= newlib_symbols(tuple(flags)), undefined - newlib_symbols(tuple(flags))
