"""``pytvm compile --executor aot --output-format mlf`` with tvmc's flags, ``pytvm micro memory``
against built-in maps, and ``pytvm micro run`` on the host board compared with ONNX Runtime.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pytvm.cli.main import main
from pytvm.cli.micro import EXIT_MISMATCH, EXIT_NO_FIT
from pytvm.micro import read_model_library_format

needs_arm_gcc = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None,
    reason="arm-none-eabi-gcc is not installed (make mcu installs it)",
)
AOT_FLAGS = [
    "--executor",
    "aot",
    "--runtime",
    "crt",
    "--executor-aot-interface-api",
    "c",
    "--executor-aot-unpacked-api",
    "1",
    "--output-format",
    "mlf",
]


def _compile(model: Path, out: Path, target: str = "c -mcpu=cortex-m4") -> Path:
    assert main(["compile", str(model), "--target", target, *AOT_FLAGS, "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def mlf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mlf")


@pytest.fixture(scope="module")
def cnn_tar(reference_models: dict[str, Path], mlf_dir: Path) -> Path:
    return _compile(reference_models["cnn_small"], mlf_dir / "cnn_small.tar")


def test_compile_writes_mlf_with_tvmc_flags(cnn_tar: Path) -> None:
    mlf = read_model_library_format(cnn_tar)
    assert mlf.executor["name"] == "aot"
    assert mlf.executor["options"]["interface-api"] == "c"
    assert mlf.executor["options"]["unpacked-api"] is True
    assert mlf.runtime["name"] == "crt"
    assert "-mcpu=cortex-m4" in mlf.lib.cflags
    assert [t.name for t in mlf.inputs] == ["input"]


def test_compile_refuses_bad_flag_combinations(
    reference_models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(reference_models["cnn_small"])
    assert main(["compile", model, "--executor-aot-unpacked-api", "1", "-o", "x.so"]) == 1
    assert "--executor-aot-unpacked-api needs --executor aot" in capsys.readouterr().err
    assert main(["compile", model, *AOT_FLAGS, "-o", str(tmp_path / "x.so")]) == 1
    assert "writes a .tar" in capsys.readouterr().err
    bad = ["compile", model, *AOT_FLAGS, "--executor-options", "nonsense", "-o", "m.tar"]
    assert main(bad) == 1
    assert "key=value" in capsys.readouterr().err


@needs_arm_gcc
def test_micro_memory_refuses_mlp_on_stm32f4(
    reference_models: dict[str, Path], mlf_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = _compile(reference_models["mlp"], mlf_dir / "mlp.tar")
    capsys.readouterr()
    assert main(["micro", "memory", str(tar), "--map", "stm32f4"]) == EXIT_NO_FIT
    out = capsys.readouterr().out
    assert "DOES NOT FIT: stm32f4: flash needs" in out and "bytes over (weights" in out


@needs_arm_gcc
def test_micro_memory_cnn_small_fits(cnn_tar: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["micro", "memory", str(cnn_tar), "--map", "nrf52840"]) == 0
    out = capsys.readouterr().out
    assert "workspace" in out and out.rstrip().endswith("fits")


def _slice_model(path: Path) -> Path:
    """An ONNX model with cnn_small's input and output shapes that computes something else."""
    nodes = [
        helper.make_node("Flatten", ["input"], ["flat"], axis=1),
        helper.make_node("Slice", ["flat", "starts", "ends", "axes"], ["output"]),
    ]
    inits = [
        helper.make_tensor(n, TensorProto.INT64, [1], [v])
        for n, v in (("starts", 0), ("ends", 10), ("axes", 1))
    ]
    graph = helper.make_graph(
        nodes,
        "slice",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_micro_run_on_host_matches_onnxruntime(
    reference_models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = _compile(reference_models["cnn_small"], tmp_path / "host.tar", target="c")
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    np.savez(tmp_path / "x.npz", input=x)
    capsys.readouterr()
    args = ["micro", "run", str(tar), "--board", "host", "--inputs", str(tmp_path / "x.npz")]
    compare = ["--compare", str(reference_models["cnn_small"]), "--print-top", "3"]
    out_npz = tmp_path / "out.npz"
    assert main([*args, *compare, "-o", str(out_npz)]) == 0
    out = capsys.readouterr().out
    assert "output 0 vs ONNX Runtime: max |diff|" in out and ": ok" in out
    assert out.count("top 3:") == 1
    assert np.load(out_npz)["output"].shape == (1, 10)
    other = _slice_model(tmp_path / "other.onnx")
    assert main([*args, "--compare", str(other)]) == EXIT_MISMATCH
    assert "MISMATCH" in capsys.readouterr().out
