"""``scripts/run_tvm_compiler_tests.py`` on TVM-shaped microTVM/AOT files: ``importorskip`` of a
``tvm`` module is renamed like an import, ``tests/python/micro`` and ``tests/python/relay/aot``
are collected, and the files the script declares out of scope are skipped with their reason.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from pytvm.testing.scripts import load_script

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_script("run_tvm_compiler_tests_micro", SCRIPTS / "run_tvm_compiler_tests.py")


def test_importorskip_of_tvm_is_renamed(runner: ModuleType) -> None:
    substitute = runner.substitute  # tvm_test_harness.substitute, as the script imports it
    text = 'pytest.importorskip("tvm.micro")\npytest.importorskip("tflite")\n'
    assert substitute(text) == 'pytest.importorskip("pytvm.micro")\npytest.importorskip("tflite")\n'


_MICRO_TEST = """import pytest

pytest.importorskip("tvm.micro")

import tvm
import tvm.micro
from tvm.micro.testing import AOT_DEFAULT_RUNNER
from tvm.testing.aot import AOTTestRunner


@tvm.testing.requires_micro
def test_transport_names():
    assert issubclass(tvm.micro.transport.TransportLogger, tvm.micro.transport.Transport)
    assert isinstance(AOT_DEFAULT_RUNNER, AOTTestRunner)
"""


def test_micro_and_aot_files_run_and_out_of_scope_ones_skip(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    micro = tmp_path / "tests" / "python" / "micro"
    aot = tmp_path / "tests" / "python" / "relay" / "aot"
    micro.mkdir(parents=True)
    aot.mkdir(parents=True)
    (micro / "test_micro_names.py").write_text(_MICRO_TEST)
    (aot / "test_crt_aot_usmp.py").write_text("import tvm.tir.usmp\n\n\ndef test_x():\n    pass\n")
    assert runner.main([str(tmp_path), "--jobs", "1", "-v"]) == 0
    out = capsys.readouterr().out
    assert "test_transport_names  passed" in out
    assert "test_crt_aot_usmp.py  skipped (USMP" in out
