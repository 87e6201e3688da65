"""TVM's ``tvm.testing`` names on ``pytvm.testing``, with pytvm's honest answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pytvm.testing
from pytvm.testing import env


def test_env_answers_for_pytvm() -> None:
    assert env.build_flag_enabled("USE_RPC")
    assert not env.build_flag_enabled("USE_CUDA")
    assert env.build_flag_enabled("USE_LLVM") == env.has_llvm()
    assert env.has_llvm()  # the venv has llvmlite


def test_device_enabled_is_true_only_for_the_host() -> None:
    assert pytvm.testing.device_enabled("cpu")
    assert pytvm.testing.device_enabled("llvm -mcpu=native") == env.has_llvm()
    assert pytvm.testing.device_enabled({"kind": "llvm"}) == env.has_llvm()
    assert not pytvm.testing.device_enabled("opencl")
    assert not pytvm.testing.device_enabled("cuda")


def test_assert_allclose_checks_shapes_and_values() -> None:
    pytvm.testing.assert_allclose([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(AssertionError):
        pytvm.testing.assert_allclose([1.0, 2.0], [1.0, 2.1])
    with pytest.raises(AssertionError):
        pytvm.testing.assert_allclose([1.0], [1.0, 1.0])


@pytvm.testing.skip_if_32bit(reason="a 64-bit check")
@pytvm.testing.requires_rpc
@pytvm.testing.requires_llvm
def test_markers_decorate_tests() -> None:
    assert sys.maxsize > 2**32


def test_main_runs_the_calling_file(tmp_path: Path) -> None:
    test_file = tmp_path / "test_small.py"
    test_file.write_text(
        "import pytvm.testing\n\n"
        "def test_one():\n    assert True\n\n"
        "if __name__ == '__main__':\n    pytvm.testing.main()\n"
    )
    done = subprocess.run(
        [sys.executable, str(test_file), "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
