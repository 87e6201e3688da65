"""The AOT executor's C runs models like onnxruntime, compiles under the CRT's strict flags for
the host (gcc, clang) and Cortex-M4, allocates nothing, and lays out its workspace as planned.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import relay
from pytvm.graph.aot import AOTExecutorFactoryModule, build_aot
from pytvm.graph.aot.factory import c_identifier

pytestmark = pytest.mark.needs_cc

ARM_GCC = shutil.which("arm-none-eabi-gcc")
needs_arm_gcc = pytest.mark.skipif(
    ARM_GCC is None, reason="arm-none-eabi-gcc is not installed (Cortex-M4 compile check)"
)
FORBIDDEN = ("malloc", "calloc", "realloc", "free", "TVMBackend", "TVMAPI", "TVMFunc", "printf")


@pytest.fixture(scope="module")
def cnn_small(reference_models: dict[str, Path]) -> tuple[onnx.ModelProto, Any, Any]:
    model = onnx.load(str(reference_models["cnn_small"]))
    mod, params = relay.frontend.from_onnx(model)
    return model, mod, params


@pytest.fixture(scope="module")
def cnn_host(cnn_small: tuple[onnx.ModelProto, Any, Any]) -> AOTExecutorFactoryModule:
    _, mod, params = cnn_small
    return build_aot(mod, "c", params)


def two_io_model() -> onnx.ModelProto:
    """Inputs ``x`` and ``y.bias`` (a name C cannot spell); outputs ``relu`` and ``logits``
    (a flatten in between: a view, no kernel; a softmax, whose exp prints braced groups).
    """
    rng = np.random.default_rng(7)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32) * 0.3
    fc = rng.standard_normal((10, 6 * 5 * 5)).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["conv", "y.bias"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["relu"]),
        helper.make_node("Flatten", ["relu"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc"], ["scores"], transB=1),
        helper.make_node("Softmax", ["scores"], ["logits"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "two_io",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5]),
            helper.make_tensor_value_info("y.bias", TensorProto.FLOAT, [1, 6, 5, 5]),
        ],
        [
            helper.make_tensor_value_info("relu", TensorProto.FLOAT, [1, 6, 5, 5]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10]),
        ],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(y) for y in session.run(None, feeds)]


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_cnn_small_runs_like_onnxruntime(
    cc: str,
    cnn_small: tuple[onnx.ModelProto, Any, Any],
    cnn_host: AOTExecutorFactoryModule,
    tmp_path: Path,
    aot_c: Any,
) -> None:
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    model = cnn_small[0]
    x = np.random.default_rng(0).standard_normal(cnn_host.inputs[0].shape).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {cnn_host.inputs[0].name: x})
    path = aot_c.host_shared_object(cnn_host, tmp_path, cc)
    (got,) = aot_c.run_shared_object(path, cnn_host, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    # a second run on the same static workspace gives the same answer
    np.testing.assert_array_equal(aot_c.run_shared_object(path, cnn_host, [x])[0], got)


def test_two_inputs_two_outputs_run_like_onnxruntime(compile_and_run: Any) -> None:
    model = two_io_model()
    mod, params = relay.frontend.from_onnx(model)
    factory = relay.build(
        mod,
        target="c",
        executor=relay.backend.Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=relay.backend.Runtime("crt", {"system-lib": True}),
        params=params,
        mod_name="two_io",
    )
    assert isinstance(factory, AOTExecutorFactoryModule)
    assert [(t.name, t.c_name) for t in factory.inputs] == [("x", "x"), ("y.bias", "y_bias")]
    assert [t.c_name for t in factory.outputs] == ["output0", "output1"]
    rng = np.random.default_rng(1)
    feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in factory.inputs}
    expected = onnxruntime_outputs(model, feeds)
    got = compile_and_run(factory, list(feeds.values()))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    header = factory.lib.headers["tvmgen_two_io.h"]
    assert "#define TVMGEN_TWO_IO_Y_BIAS_SIZE 600\n" in header
    assert "#define TVMGEN_TWO_IO_OUTPUT1_SIZE 40\n" in header
    assert "struct tvmgen_two_io_inputs {\n  void* x;\n  void* y_bias;\n};" in header
    assert factory.io_bytes == 400 + 600 + 600 + 40


@needs_arm_gcc
def test_cortex_m4_c_compiles_strict_and_allocates_nothing(
    cnn_small: tuple[onnx.ModelProto, Any, Any], tmp_path: Path, aot_c: Any
) -> None:
    _, mod, params = cnn_small
    factory = build_aot(mod, "c -mcpu=cortex-m4", params)
    assert factory.lib.cflags[:4] == aot_c.M4_FLAGS
    assert ARM_GCC is not None
    objects = []
    for source in aot_c.write_sources(factory, tmp_path):
        obj = source.with_suffix(".o")
        aot_c.compile_c(
            ARM_GCC,
            [
                *aot_c.STRICT,
                "-O2",
                *aot_c.M4_FLAGS,
                f"-I{tmp_path}",
                "-c",
                str(source),
                "-o",
                str(obj),
            ],
            tmp_path,
        )
        objects.append(obj)
    nm = shutil.which("arm-none-eabi-nm") or "nm"
    undefined = aot_c.undefined_symbols(nm, objects)
    assert not {s for s in undefined if s.startswith(FORBIDDEN)}, undefined
    # every external symbol is the module's
    kernels = {k.name for k in factory.kernels}
    assert kernels <= undefined  # lib1 calls lib0's kernels
    assert all(k.startswith("tvmgen_default_") for k in kernels)


def test_host_objects_allocate_nothing(
    cnn_host: AOTExecutorFactoryModule, tmp_path: Path, host_cc: str, aot_c: Any
) -> None:
    objects = []
    for source in aot_c.write_sources(cnn_host, tmp_path):
        obj = source.with_suffix(".o")
        aot_c.compile_c(
            host_cc,
            [
                *aot_c.STRICT,
                "-O2",
                *cnn_host.lib.cflags,
                f"-I{tmp_path}",
                "-c",
                str(source),
                "-o",
                str(obj),
            ],
            tmp_path,
        )
        objects.append(obj)
    undefined = aot_c.undefined_symbols("nm", objects)
    assert not {s for s in undefined if s.lstrip("_").startswith(FORBIDDEN)}, undefined
    assert "pytvm/c_runtime_api.h" not in cnn_host.lib.get_source()


def test_workspace_is_the_arena_plus_the_largest_scratch(
    cnn_small: tuple[onnx.ModelProto, Any, Any], cnn_host: AOTExecutorFactoryModule
) -> None:
    _, mod, params = cnn_small
    plan = pytvm.graph.plan_memory(mod, params, "arena", target="c")
    pinned = {plan.storage_id[b.eid] for b in plan.buffers if b.pinned}
    arena = sum(n for sid, n in plan.storage_bytes.items() if sid not in pinned)
    scratch = max(k.scratch_bytes for k in cnn_host.kernels)
    assert scratch > 0  # the convolutions pad their input in scratch
    assert cnn_host.workspace_bytes == -(-arena // 16) * 16 + scratch
    assert (
        f"#define TVMGEN_DEFAULT_WORKSPACE_SIZE {cnn_host.workspace_bytes}\n"
        in (cnn_host.lib.headers["tvmgen_default.h"])
    )
    assert (
        f"tvmgen_default_workspace[{cnn_host.workspace_bytes}]"
        in cnn_host.lib.sources["default_lib1.c"]
    )
    intermediates = [b for b in cnn_host.memory_plan if b.kind == "intermediate"]
    assert max(b.offset + b.nbytes for b in intermediates) == arena
    for b in cnn_host.memory_plan:
        assert b.offset + b.nbytes <= cnn_host.workspace_bytes
    scratches = [b for b in cnn_host.memory_plan if b.kind == "scratch"]
    assert {b.nbytes for b in scratches} == {
        k.scratch_bytes for k in cnn_host.kernels if k.scratch_bytes
    }


def test_factory_lists_constants_inputs_and_kernels(cnn_host: AOTExecutorFactoryModule) -> None:
    assert cnn_host.constant_bytes == sum(v.nbytes for v in cnn_host.get_params().values())
    assert [t.name for t in cnn_host.inputs] == ["input"]
    assert cnn_host.inputs[0].nbytes == 3 * 32 * 32 * 4
    assert [t.c_name for t in cnn_host.outputs] == ["output"]
    assert cnn_host.kernels[0].name == "tvmgen_default_fused_nn_conv2d_add_nn_relu"
    assert set(cnn_host.lib.sources) == {"default_lib0.c", "default_lib1.c"}
    assert "fn (" in cnn_host.get_executor_config() or "def @main" in cnn_host.ir_text
    lib1 = cnn_host.lib.sources["default_lib1.c"]
    for name in cnn_host.params:
        assert f"static const float tvmgen_default_{name}[" in lib1


def test_export_library_tar_has_sources_headers_and_makefile(
    cnn_host: AOTExecutorFactoryModule, tmp_path: Path
) -> None:
    path = tmp_path / "model.tar"
    cnn_host.export_library(str(path))
    with tarfile.open(path) as archive:
        names = set(archive.getnames())
    assert {
        "src/default_lib0.c",
        "src/default_lib1.c",
        "include/tvmgen_default.h",
        "module.mk",
    } <= names


def test_unsupported_executor_options_raise(cnn_small: tuple[onnx.ModelProto, Any, Any]) -> None:
    _, mod, params = cnn_small
    with pytest.raises(ValueError, match="has no option 'unpacked_api'"):
        relay.backend.Executor("aot", {"unpacked_api": True})
    with pytest.raises(ValueError, match="interface-api='cpp' is not one of 'c'"):
        build_aot(
            mod, "c", params, executor=relay.backend.Executor("aot", {"interface-api": "cpp"})
        )
    with pytest.raises(ValueError, match="must be a 'c' target"):
        build_aot(mod, "llvm", params)
    with pytest.raises(ValueError, match="mod_name 'my-model' must be a C identifier"):
        build_aot(mod, "c", params, mod_name="my-model")


def test_c_identifier_is_tvms_sanitize_name() -> None:
    assert c_identifier("input:0") == "input_0"
    assert c_identifier("0x") == "_0x"
