"""``pytvm compile`` and ``pytvm run``: an ONNX model compiled to one file, run here and
through a tracker, checked against ONNX Runtime; bad input named in one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.testing.cli import run_pytvm
from pytvm.testing.rpc import tracker_with_server

pytestmark = pytest.mark.needs_cc


def _model(path: Path) -> Path:
    """Conv -> relu -> flatten -> gemm -> softmax on a 1x3x8x8 input (batch dynamic)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype("float32"), "w")
    fc = numpy_helper.from_array(rng.standard_normal((10, 256)).astype("float32"), "fc")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc"], ["g"], transB=1, name="gemm"),
        helper.make_node("Softmax", ["g"], ["y"], axis=1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes,
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
        [w, fc],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("cli")
    model = _model(tmp / "net.onnx")
    result = run_pytvm(
        "compile", str(model), "-o", "net.so", "--input-shapes", "x:[1,3,8,8]", cwd=tmp
    )
    assert result.returncode == 0, result.stderr
    assert (tmp / "net.so").is_file()
    return model, tmp / "net.so"


def test_run_checks_against_onnx_runtime_and_times(
    compiled: tuple[Path, Path], tmp_path: Path
) -> None:
    model, lib = compiled
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype("float32")
    np.savez(tmp_path / "x.npz", x=x)
    result = run_pytvm(
        "run", str(lib), "--inputs", "x.npz", "-o", "out.npz", "--print-time", "--repeat", "3",
        "--print-top", "3", "--compare", str(model), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "output 0: shape (1, 10) float32" in result.stdout
    assert re.search(r"top 3: \d+ \(", result.stdout)
    assert "mean (ms)" in result.stdout
    error = re.search(r"output 0 vs ONNX Runtime: max abs error (\S+),", result.stdout)
    assert error is not None and float(error.group(1)) < 1e-5
    with np.load(tmp_path / "out.npz") as out:
        assert out["output_0"].shape == (1, 10)


def test_run_names_an_input_missing_from_the_npz(
    compiled: tuple[Path, Path], tmp_path: Path
) -> None:
    np.savez(tmp_path / "bad.npz", z=np.zeros(3, "float32"))
    result = run_pytvm("run", str(compiled[1]), "--inputs", "bad.npz", cwd=tmp_path)
    assert result.returncode == 1
    assert "pytvm run: error: bad.npz has no array for input(s) ['x']" in result.stderr


def test_compile_refuses_a_file_that_is_not_onnx(tmp_path: Path) -> None:
    (tmp_path / "junk.onnx").write_bytes(b"\x00not a model")
    result = run_pytvm("compile", "junk.onnx", cwd=tmp_path)
    assert result.returncode == 1
    assert "pytvm compile: error: junk.onnx is not a readable ONNX model" in result.stderr


def test_compile_refuses_unreadable_input_shapes(tmp_path: Path) -> None:
    model = _model(tmp_path / "net.onnx")
    result = run_pytvm("compile", str(model), "--input-shapes", "x:[1,a]", cwd=tmp_path)
    assert result.returncode == 1
    assert "x:[1,a] has a non-integer dimension" in result.stderr


@pytest.fixture
def tracker_with_board() -> Iterator[int]:
    with tracker_with_server("board") as tracker_port:
        yield tracker_port


def test_run_through_a_tracker_runs_on_the_board(
    compiled: tuple[Path, Path], tracker_with_board: int, tmp_path: Path
) -> None:
    model, lib = compiled
    result = run_pytvm(
        "run", str(lib), "--rpc-tracker", f"127.0.0.1:{tracker_with_board}", "--rpc-key",
        "board", "--print-time", "--repeat", "2", "--compare", str(model), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "remote time (ms)" in result.stdout
    error = re.search(r"max abs error (\S+),", result.stdout)
    assert error is not None and float(error.group(1)) < 1e-5


def test_viz_memory_draws_the_plan(tmp_path: Path) -> None:
    model = _model(tmp_path / "net.onnx")
    result = run_pytvm(
        "viz", "memory", str(model), "-o", "plan.svg", "--input-shapes", "x:[1,3,8,8]",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    svg = (tmp_path / "plan.svg").read_text()
    assert svg.startswith("<svg") and "planner arena" in svg
    assert "lower bound" in result.stderr
