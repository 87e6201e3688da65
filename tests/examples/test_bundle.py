"""examples/bundle: a model's AOT C with main.c as one program, on the host and on the
mps2-an386 board in QEMU, prints the outputs ONNX Runtime computes; it links no allocator.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BUNDLE = Path(__file__).resolve().parents[2] / "examples" / "bundle"
MODEL = "kws_cnn"
NO_CROSS = shutil.which("arm-none-eabi-gcc") is None
NO_QEMU = shutil.which("qemu-system-arm") is None


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BUNDLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


run_bundle = _load("run_bundle")


def _make(out: Path, *goals: str, model: str = MODEL, **variables: str) -> None:
    argv = ["make", "-s", "-C", str(BUNDLE), *goals, f"MODEL={model}", f"OUT={out}"]
    argv += [f"{k}={v}" for k, v in variables.items()]
    argv.append(f"PYTHON={sys.executable}")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{argv}:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kws_cnn bundle's files (model C, bundle_data.h, input, onnxruntime's output)."""
    path = tmp_path_factory.mktemp("bundle") / MODEL
    _make(path, "model")
    return path


def _expected(out: Path) -> np.ndarray:
    return np.asarray(np.load(out / "expected_output.npy"))


def test_build_model_writes_the_bundle_files(out: Path) -> None:
    assert (out / "model" / "include" / "tvmgen_default.h").is_file()
    assert sorted(p.name for p in (out / "model" / "src").glob("*.c"))[:2] == [
        "default_lib0.c",
        "default_lib1.c",
    ]
    data = (out / "bundle_data.h").read_text()
    assert "static float bundle_input0[490] = {" in data
    x = np.load(out / "input.npy")
    assert x.shape == (1, 1, 49, 10)
    assert (out / "input0.bin").read_bytes() == x.tobytes()
    assert _expected(out).shape == (1, 12)


@pytest.mark.needs_cc
def test_host_bundle_matches_onnxruntime(out: Path) -> None:
    _make(out, "host")
    run = run_bundle.run_host(out, repeat=2)
    assert run.status == 0 and run.best_ns > 0
    expected = _expected(out)
    np.testing.assert_allclose(
        run.outputs[0].reshape(expected.shape), expected, rtol=1e-5, atol=1e-6
    )
    assert run.top == int(expected.argmax())
    # the same input from a raw file gives the same outputs
    done = subprocess.run(
        [str(out / "host" / "bundle"), str(out / "input0.bin")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    np.testing.assert_array_equal(run_bundle.parse_output(done.stdout).outputs[0], run.outputs[0])


@pytest.mark.needs_cc
def test_host_bundle_rejects_an_input_file_of_the_wrong_size(out: Path, tmp_path: Path) -> None:
    _make(out, "host")
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 12)
    done = subprocess.run(
        [str(out / "host" / "bundle"), str(short)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "must hold exactly 1960 bytes" in done.stderr


@pytest.mark.skipif(NO_CROSS, reason="arm-none-eabi-gcc is not installed (gcc-arm-none-eabi)")
@pytest.mark.skipif(NO_QEMU, reason="qemu-system-arm is not installed (qemu-system-arm)")
def test_qemu_bundle_matches_onnxruntime_and_links_no_allocator(out: Path) -> None:
    _make(out, "qemu")
    elf = out / "qemu" / "bundle.elf"
    symbols = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert not {"malloc", "_malloc_r", "free", "_sbrk", "TVMInitializeRuntime"} & set(symbols)
    assert "tvmgen_default_run" in symbols
    run = run_bundle.run_qemu(out, icount_shift=0)
    assert run.status == 0
    expected = _expected(out)
    np.testing.assert_allclose(
        run.outputs[0].reshape(expected.shape), expected, rtol=1e-4, atol=1e-5
    )
    assert run.top == int(expected.argmax())
    # -icount shift=0: the board clock counts instructions; a few million for 2.66M MACs
    assert 1_000_000 < run.best_ns < 200_000_000
    assert run.stack_bytes is not None and 0 < run.stack_bytes < 65536


def test_parse_output_reads_the_exact_bits() -> None:
    text = (
        "bundle: model m\nbundle: best of 3 runs: 120 ns\n"
        'output 0 "y": 2 x float32\n  0 0x3f800000 1.00000000\n  1 0xbf000000 -0.50000000\n'
        "top class: 0 (1.00000000)\nbundle: done status 0\n"
    )
    run = run_bundle.parse_output(text)
    np.testing.assert_array_equal(run.outputs[0], np.array([1.0, -0.5], np.float32))
    assert (run.top, run.best_ns, run.status, run.stack_bytes) == (0, 120, 0, None)
    with pytest.raises(RuntimeError, match="did not finish"):
        run_bundle.parse_output("bundle: model m\n")


@pytest.mark.needs_cc
def test_host_bundle_from_model_library_format(tmp_path: Path) -> None:
    out = tmp_path / "mlf"
    _make(out, "host", MLF="1")
    assert (out / "model.mlf.tar").is_file()
    run = run_bundle.run_host(out)
    expected = _expected(out)
    np.testing.assert_allclose(
        run.outputs[0].reshape(expected.shape), expected, rtol=1e-5, atol=1e-6
    )


@pytest.mark.skipif(NO_CROSS, reason="arm-none-eabi-gcc is not installed (gcc-arm-none-eabi)")
@pytest.mark.skipif(NO_QEMU, reason="qemu-system-arm is not installed (qemu-system-arm)")
def test_qemu_bundle_of_the_int8_model(tmp_path: Path) -> None:
    out = tmp_path / "kws_cnn_int8"
    _make(out, "qemu", model="kws_cnn_int8")
    run = run_bundle.run_qemu(out, icount_shift=0)
    expected = _expected(out)
    step = run_bundle.tolerance(out)
    assert 1 / 256 < step < 1 / 254  # one step of the int8 softmax output
    np.testing.assert_allclose(run.outputs[0].reshape(expected.shape), expected, atol=step)
    assert run.top == int(expected.argmax())
