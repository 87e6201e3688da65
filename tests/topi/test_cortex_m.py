"""Kernels for a Cortex-M4 (``c -mcpu=cortex-m4``): topi's default schedules and the graph
compiler give scalar C (no vector types, no parallel launch, a few accumulators) that
``arm-none-eabi-gcc -Werror`` compiles needing only newlib, libgcc and the CRT API; the same C
compiled for this machine matches numpy and ONNX Runtime.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import te, topi
from pytvm.driver.source_build import compile_for_host
from pytvm.frontend import from_onnx
from pytvm.runtime.graph_executor import GraphExecutorFactory, GraphModule
from pytvm.runtime.source_module import SourceModule, crt_include_dirs
from pytvm.target import Target

ARM_GCC = shutil.which("arm-none-eabi-gcc")
needs_arm_gcc = pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed")
M4 = Target("c -mcpu=cortex-m4 --system-lib")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Os"]
#: The C runtime's API a kernel may call (never TVMBackendParallelLaunch: one core).
CRT_API = frozenset(
    {
        "TVMAPISetLastError",
        "TVMBackendAllocWorkspace",
        "TVMBackendFreeWorkspace",
        "TVMBackendGetFuncFromEnv",
        "TVMFuncCall",
    }
)


@functools.cache
def _newlib_symbols() -> frozenset[str]:
    """Global symbols newlib's libc and libm and libgcc define, for the M4F multilib."""
    assert ARM_GCC is not None
    out: set[str] = set()
    for lib in ("libc.a", "libm.a", "libgcc.a"):
        path = subprocess.run(
            [ARM_GCC, *M4.cflags[:-1], f"-print-file-name={lib}"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()  # fmt: skip
        nm = subprocess.run(
            ["arm-none-eabi-nm", "-g", "--defined-only", path],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        out |= {f[2] for f in (line.split() for line in nm.splitlines()) if len(f) == 3}
    return frozenset(out)


def _check_scalar_c(mod: SourceModule) -> None:
    source = mod.get_source()
    assert "vector_size" not in source  # no vector types
    calls = set(re.findall(r"\b([a-z_0-9]+)\(", source))
    double_math = {"exp", "log", "tanh", "sqrt", "pow", "erf", "floor", "ceil", "fabs"}
    assert not calls & double_math, f"double-precision libm calls: {calls & double_math}"


def _arm_undefined(mod: SourceModule, tmp: Path) -> set[str]:
    """Compile ``mod`` for the Cortex-M4 with the strict flags; its undefined symbols."""
    assert ARM_GCC is not None
    src = tmp / "kernels.c"
    mod.save(src)
    includes = [f"-I{d}" for d in crt_include_dirs()]
    cmd = [ARM_GCC, *mod.cflags, *STRICT, *includes, "-c", str(src), "-o", str(tmp / "k.o")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    nm = subprocess.run(
        ["arm-none-eabi-nm", "-u", str(tmp / "k.o")],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    return {line.split()[-1] for line in nm.splitlines() if line.strip()}


Builder = Callable[[], tuple[list[te.Tensor], te.Tensor]]


def _kernels() -> dict[str, tuple[Builder, Callable[..., np.ndarray]]]:
    def vadd() -> tuple[list[te.Tensor], te.Tensor]:
        a, b = te.placeholder((64,), name="A"), te.placeholder((64,), name="B")
        return [a, b], topi.add(a, b)

    def dense() -> tuple[list[te.Tensor], te.Tensor]:
        x, w = te.placeholder((16, 16), name="x"), te.placeholder((16, 16), name="w")
        return [x, w], topi.nn.dense(x, w)

    def conv() -> tuple[list[te.Tensor], te.Tensor]:
        x, w = te.placeholder((1, 4, 12, 12), name="x"), te.placeholder((8, 4, 3, 3), name="w")
        return [x, w], topi.nn.conv2d_nchw(x, w, 1, 1, 1)

    def relu() -> tuple[list[te.Tensor], te.Tensor]:
        x = te.placeholder((8, 33), name="x")
        return [x], topi.nn.relu(x)

    def softmax() -> tuple[list[te.Tensor], te.Tensor]:
        x = te.placeholder((4, 12), name="x")
        return [x], topi.nn.softmax(x)

    def conv_ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((1, 8, 12, 12), "float32")
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + 12, j : j + 12], w[:, :, i, j])
        return out

    def softmax_ref(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    return {
        "vadd": (vadd, np.add),
        "dense": (dense, lambda x, w: x @ w.T),
        "conv2d": (conv, conv_ref),
        "relu": (relu, lambda x: np.maximum(x, 0)),
        "softmax": (softmax, softmax_ref),
    }


KERNELS = _kernels()


def _shape(t: te.Tensor) -> tuple[int, ...]:
    return tuple(int(d.value) for d in t.shape)  # type: ignore[attr-defined]


def _build_kernel(name: str) -> tuple[SourceModule, list[te.Tensor], te.Tensor]:
    make, _ = KERNELS[name]
    with M4:
        inputs, out = make()
        s = topi.x86.schedule_default(out)
        mod = pytvm.build(s, [*inputs, out], target=M4, name=name)
    assert isinstance(mod, SourceModule)
    return mod, inputs, out


@pytest.mark.parametrize("name", list(KERNELS))
def test_topi_kernel_is_scalar_and_matches_numpy_on_the_host(name: str) -> None:
    mod, inputs, out = _build_kernel(name)
    _check_scalar_c(mod)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(_shape(t)).astype("float32") for t in inputs]
    got = pytvm.nd.empty(_shape(out), "float32")
    compile_for_host(mod)[name](*[pytvm.nd.array(a) for a in args], got)
    np.testing.assert_allclose(got.numpy(), KERNELS[name][1](*args), rtol=1e-5, atol=1e-5)


@needs_arm_gcc
@pytest.mark.parametrize("name", list(KERNELS))
def test_topi_kernel_compiles_for_cortex_m4(name: str, tmp_path: Path) -> None:
    mod, _, _ = _build_kernel(name)
    undefined = _arm_undefined(mod, tmp_path)
    assert "TVMBackendParallelLaunch" not in undefined
    assert undefined <= _newlib_symbols() | CRT_API, undefined - _newlib_symbols() - CRT_API


def test_conv_keeps_four_accumulators() -> None:
    mod, _, _ = _build_kernel("conv2d")
    assert re.search(r"float conv2d_nchw_local\[4\]", mod.get_source())  # 4 accumulators


# ---------------------------------------------------------------------------- models


def _kws_model() -> onnx.ModelProto:
    """A keyword-spotting CNN (DS-CNN-like): 1x1x49x10 MFCCs, conv 10x4 stride 2 to 64
    channels, two depthwise-separable blocks, average pooling, dense 12.
    """
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def weight(name: str, *shape: int) -> str:
        scale = 1.0 / np.sqrt(np.prod(shape[1:]))
        value = (rng.standard_normal(shape) * scale).astype("float32")
        inits.append(numpy_helper.from_array(value, name))
        return name

    def conv(x: str, name: str, cout: int, cin: int, k: tuple[int, int], **attrs: Any) -> str:
        w, b = weight(f"{name}_w", cout, cin, *k), weight(f"{name}_b", cout)
        nodes.append(helper.make_node("Conv", [x, w, b], [name], kernel_shape=list(k), **attrs))
        nodes.append(helper.make_node("Relu", [name], [f"{name}_r"]))
        return f"{name}_r"

    x = conv("input", "c0", 64, 1, (10, 4), strides=[2, 2], pads=[4, 1, 5, 2])
    for i in range(2):
        x = conv(x, f"dw{i}", 64, 1, (3, 3), group=64, pads=[1, 1, 1, 1])
        x = conv(x, f"pw{i}", 64, 64, (1, 1))
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"]))
    fc = ["flat", weight("fc_w", 12, 64), weight("fc_b", 12)]
    nodes.append(helper.make_node("Gemm", fc, ["output"], transB=1))
    graph = helper.make_graph(
        nodes,
        "kws",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 49, 10])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 12])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.fixture(scope="module")
def models(reference_models: dict[str, Path]) -> dict[str, onnx.ModelProto]:
    return {"cnn_small": onnx.load(str(reference_models["cnn_small"])), "kws": _kws_model()}


@pytest.fixture(scope="module")
def built(models: dict[str, onnx.ModelProto]) -> dict[str, GraphExecutorFactory]:
    out = {}
    for name, model in models.items():
        mod, params = from_onnx(model)
        out[name] = pytvm.graph.build(mod, target=M4, params=params)
    return out


@pytest.mark.parametrize("name", ["cnn_small", "kws"])
def test_model_kernels_match_onnxruntime_on_the_host(
    name: str, models: dict[str, onnx.ModelProto], built: dict[str, GraphExecutorFactory]
) -> None:
    factory = built[name]
    assert isinstance(factory.lib, SourceModule)
    _check_scalar_c(factory.lib)
    host = GraphExecutorFactory(factory.graph_json, factory.params, compile_for_host(factory.lib))
    shape = [d.dim_value for d in models[name].graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    gm = GraphModule(host["default"](pytvm.cpu()))
    gm.set_input("input", x)
    gm.run()
    sess = onnxruntime.InferenceSession(
        models[name].SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = sess.run(None, {"input": x})
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)


@needs_arm_gcc
@pytest.mark.parametrize("name", ["cnn_small", "kws"])
def test_model_kernels_compile_for_cortex_m4(
    name: str, built: dict[str, GraphExecutorFactory], tmp_path: Path
) -> None:
    lib = built[name].lib
    assert isinstance(lib, SourceModule)
    undefined = _arm_undefined(lib, tmp_path)
    assert "TVMBackendParallelLaunch" not in undefined
    assert undefined <= _newlib_symbols() | CRT_API, undefined - _newlib_symbols() - CRT_API


def test_cross_graph_factory_exports_sources_graph_and_params(
    built: dict[str, GraphExecutorFactory], tmp_path: Path
) -> None:
    built["kws"].export_library(tmp_path / "kws.tar")
    with tarfile.open(tmp_path / "kws.tar") as archive:
        names = set(archive.getnames())
    assert {"graph.json", "graph.params", "module.mk"} <= names
    assert any(n.startswith("src/") and n.endswith(".c") for n in names)


def test_dense_weight_panels_are_four_columns(built: dict[str, GraphExecutorFactory]) -> None:
    lib = built["kws"].lib
    assert isinstance(lib, SourceModule)
    assert re.search(r"float T_dense_pack_local\[4\]", lib.get_source())  # 4 accumulators
    assert {tuple(p.shape) for p in built["kws"].params.values()} >= {(3, 64, 4)}  # NK4n
