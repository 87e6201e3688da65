"""``pytvm compile`` and ``pytvm run`` given hostile files and arguments: one error line naming
the file, the input or the array, exit status 1, no traceback, nothing unpickled.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.cli.compile_model import byte_count, parse_input_shapes
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.cli import run_pytvm


def _one_error_line(result: subprocess.CompletedProcess[str], command: str) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith(f"pytvm {command}")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def _relu(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def _fill(path: Path, side: int) -> Path:
    """``y = x + ConstantOfShape([side, side])``: a constant of side² float32 made at import."""
    shape = numpy_helper.from_array(np.array([side, side], dtype=np.int64), "s")
    graph = helper.make_graph(
        [
            helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
            helper.make_node("Add", ["x", "c"], ["y"], name="add"),
        ],
        "fill",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [side, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_an_input_shape_past_int64_is_one_error_naming_the_input(tmp_path: Path) -> None:
    model = _relu(tmp_path / "relu.onnx")
    shapes = "x:[99999999999999999999999,4]"
    result = run_pytvm("compile", str(model), "--input-shapes", shapes, cwd=tmp_path)
    line = _one_error_line(result, "compile")
    assert line == (
        "pytvm compile: error: --input-shapes: input 'x' of shape [99999999999999999999999,4] "
        "has 399999999999999999999996 elements, over the limit of 9223372036854775807 "
        "(2**63 - 1); give the input's real shape"
    )


def test_negative_input_dimensions_are_refused() -> None:
    with pytest.raises(TVMValueError, match=r"input 'x' has a negative dimension"):
        parse_input_shapes("x:[-1,4]")


def test_byte_counts_take_binary_suffixes() -> None:
    assert byte_count("512M") == 512 * 2**20
    assert byte_count("2GiB") == 2 * 2**30
    assert byte_count("1000") == 1000


def test_a_huge_constant_in_the_model_is_one_error_line(tmp_path: Path) -> None:
    model = _fill(tmp_path / "fill.onnx", 2**20)
    line = _one_error_line(run_pytvm("compile", str(model), cwd=tmp_path), "compile")
    assert line.startswith("pytvm compile: error: ONNX node 'fill' (ConstantOfShape, opset 17)")
    assert "4 TiB (4398046511104 bytes), over the limit of 512 MiB" in line


@pytest.mark.needs_cc
def test_max_constant_bytes_sets_the_limit(tmp_path: Path) -> None:
    model = _fill(tmp_path / "fill.onnx", 64)  # a 16 KiB constant
    refused = run_pytvm("compile", str(model), "--max-constant-bytes", "8K", cwd=tmp_path)
    assert "over the limit of 8192 bytes" in _one_error_line(refused, "compile")
    built = run_pytvm(
        "compile", str(model), "-o", "f.so", "--max-constant-bytes", "1M", cwd=tmp_path
    )
    assert built.returncode == 0, built.stderr


@pytest.fixture(scope="module")
def relu_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("relu")
    model = _relu(tmp / "relu.onnx")
    result = run_pytvm("compile", str(model), "-o", "relu.so", "--input-shapes", "x:[2,4]", cwd=tmp)
    assert result.returncode == 0, result.stderr
    return tmp / "relu.so"


def _run_with(relu_so: Path, inputs: Path) -> str:
    return _one_error_line(
        run_pytvm("run", str(relu_so), "--inputs", inputs.name, cwd=inputs.parent), "run"
    )


@pytest.mark.needs_cc
def test_an_object_array_is_refused_and_never_unpickled(relu_so: Path, tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    np.savez(tmp_path / "obj.npz", x=np.array([_Marker(str(marker))], dtype=object))
    line = _run_with(relu_so, tmp_path / "obj.npz")
    assert line.startswith(
        "pytvm run: error: --inputs obj.npz: array 'x' holds Python objects (dtype object)"
    )
    assert not marker.exists()


class _Marker:
    """Unpickling it writes a file: the test sees whether the file was unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (Path.write_text, (Path(self.path), "unpickled"))  # type: ignore[return-value]


@pytest.mark.needs_cc
def test_a_broken_zip_is_refused_naming_the_file(relu_so: Path, tmp_path: Path) -> None:
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04 not a zip at all")
    line = _run_with(relu_so, tmp_path / "broken.npz")
    assert line.startswith("pytvm run: error: --inputs broken.npz: not an .npz")


@pytest.mark.needs_cc
def test_a_npy_file_is_refused_naming_the_file(relu_so: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((2, 4), "float32"))
    assert "--inputs x.npy: not an .npz" in _run_with(relu_so, tmp_path / "x.npy")


@pytest.mark.needs_cc
def test_a_damaged_array_is_refused_naming_it(relu_so: Path, tmp_path: Path) -> None:
    path = tmp_path / "damaged.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x.npy", _npy_bytes(np.ones((2, 4), "float32")))
    data = bytearray(path.read_bytes())
    data[60:70] = b"\xff" * 10  # inside the compressed data of x.npy
    path.write_bytes(bytes(data))
    line = _run_with(relu_so, path)
    assert line.startswith("pytvm run: error: --inputs damaged.npz: array 'x' ")


@pytest.mark.needs_cc
def test_an_array_of_the_wrong_shape_is_refused_before_it_is_loaded(
    relu_so: Path, tmp_path: Path
) -> None:
    np.savez_compressed(tmp_path / "big.npz", x=np.zeros((4096, 4096), "float32"))
    line = _run_with(relu_so, tmp_path / "big.npz")
    assert line == (
        "pytvm run: error: --inputs big.npz: array 'x' is (4096, 4096) float32, but the "
        "module's input 'x' takes (2, 4) float32"
    )


def _npy_bytes(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.needs_cc
def test_an_array_for_no_input_is_refused_naming_it(relu_so: Path, tmp_path: Path) -> None:
    np.savez(tmp_path / "extra.npz", x=np.zeros((2, 4), "float32"), z=np.zeros(3))
    line = _run_with(relu_so, tmp_path / "extra.npz")
    assert line == (
        "pytvm run: error: --inputs extra.npz: array 'z' is no input of the module (its "
        "inputs: ['x'])"
    )
