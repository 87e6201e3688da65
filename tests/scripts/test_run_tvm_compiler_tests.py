"""``scripts/run_tvm_compiler_tests.py`` on a small TVM-shaped tree: renamed imports, TVM's
plugin in place of TVM's root conftest, one row per file, tutorials run as scripts, and the exit
status says whether anything failed.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from pytvm.testing.scripts import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "run_tvm_compiler_tests.py"


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_script("run_tvm_compiler_tests", SCRIPT)


def _tree(root: Path, te_body: str, tutorial: str) -> Path:
    te = root / "tests" / "python" / "te"
    te.mkdir(parents=True)
    (te / "test_te_small.py").write_text(te_body)
    gallery = root / "gallery" / "tutorial"
    gallery.mkdir(parents=True)
    (gallery / "tensor_expr_get_started.py").write_text(tutorial)
    return root


_PASSING = """import tvm
import tvm.testing
from tvm import te

n = tvm.testing.parameter(4, 8)


def test_placeholder(target, dev, n):
    A = te.placeholder((n,), name="A")
    assert A.shape[0] == n and target == "llvm"
"""


def test_a_passing_tree_exits_zero(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = _tree(tmp_path / "tvm", _PASSING, "import tvm\nprint(tvm.cpu(0))\n")
    assert runner.main([str(tree), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("test_te_small.py"))
    assert row.split()[1:] == ["2", "0", "0", "0"]
    assert "passed 3 of 3 tests not skipped (100.0%)" in out


def test_missing_names_and_failing_tutorials_fail_the_run(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "from tvm.te import no_such_name\n\n\ndef test_x():\n    pass\n"
    tree = _tree(tmp_path / "tvm", body, "import tvm\ntvm.no_such_function()\n")
    assert runner.main([str(tree)]) == 1
    out = capsys.readouterr().out
    assert "no_such_name" in out
    assert "AttributeError: module 'pytvm' has no attribute 'no_such_function'" in out


def test_declared_skips_name_their_reason(runner: ModuleType) -> None:
    allowed = {
        runner._GPU, runner._TENSORIZE, runner._AUTOTVM, runner._MICRO, runner._TORCH,
        runner._INTERNET, runner._META_SCHEDULE, runner._USMP, runner._AOT_PASSES,
        runner._ETHOS_CMSIS,
    }  # fmt: skip
    for patterns in runner.SKIPS.values():
        assert set(patterns.values()) <= allowed


def test_a_test_that_kills_the_process_is_an_error_and_the_rest_still_run(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = (
        "import os\nimport tvm\n\n\ndef test_before():\n    pass\n\n\n"
        "def test_abort():\n    os.abort()\n\n\ndef test_after():\n    assert tvm.cpu(0)\n"
    )
    tree = _tree(tmp_path / "tvm", body, "import tvm\n")
    assert runner.main([str(tree), "-v"]) == 1
    out = capsys.readouterr().out
    assert "test_abort  error (the test process died (SIGABRT))" in out
    assert "test_before  passed" in out and "test_after  passed" in out
