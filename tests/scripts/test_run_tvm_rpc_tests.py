"""``scripts/run_tvm_rpc_tests.py``: its substitutions only rename ``tvm`` to ``pytvm``, and a
module or name pytvm lacks fails the run (nothing is bound to ``None``).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from pytvm.testing.scripts import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "run_tvm_rpc_tests.py"


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_script("run_tvm_rpc_tests", SCRIPT)


def test_imports_are_renamed_and_nothing_else(runner: ModuleType) -> None:
    source = (
        "import tvm\n"
        "import tvm, inspect, sys\n"
        "import tvm.testing\n"
        "import tvm_ffi\n"
        "from tvm import rpc, te\n"
        "from tvm.rpc.proxy import Proxy  # comment kept\n"
        "from tvm.script import tirx as T\n"
        "import tvm.contrib.utils as u\n"
        "def f():\n"
        "    from tvm.support import cc\n"
        "    return tvm.testing.device_enabled('llvm'), 'tvm.rpc'\n"
    )
    assert runner.substitute(source) == (
        "import pytvm as tvm\n"
        "import pytvm as tvm, inspect, sys\n"
        "import pytvm.testing, pytvm as tvm\n"
        "import pytvm.ffi as tvm_ffi\n"
        "from pytvm import rpc, te\n"
        "from pytvm.rpc.proxy import Proxy  # comment kept\n"
        "from pytvm.script import tirx as T\n"
        "import pytvm.contrib.utils as u\n"
        "def f():\n"
        "    from pytvm.support import cc\n"
        "    return tvm.testing.device_enabled('llvm'), 'tvm.rpc'\n"
    )
    assert "None" not in runner.substitute("from tvm.rpc import no_such_name\n")


def test_a_missing_name_fails_the_run(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_file = tmp_path / "test_gap.py"
    test_file.write_text(
        "import tvm\nfrom tvm.rpc import no_such_name\n\n\ndef test_uses_it():\n    assert True\n"
    )
    assert runner.main([str(test_file), "--total-timeout", "300"]) == 1
    out = capsys.readouterr().out
    assert "error" in out
    assert "no_such_name" in out
    assert "test_uses_it" not in out.split("result", 1)[1].replace("test_gap", "")


def test_passing_and_failing_tests_set_the_exit_status(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_file = tmp_path / "test_small.py"
    test_file.write_text(
        "import tvm\nfrom tvm.rpc.tracker import Tracker\n\n\n"
        "def test_ok():\n    assert tvm.rpc.Tracker is Tracker\n"
    )
    assert runner.main([str(test_file), "--total-timeout", "300"]) == 0
    assert "test_ok  passed" in capsys.readouterr().out
    test_file.write_text(
        "import tvm\n\n\ndef test_bad():\n    assert tvm.cpu(0).device_type == 2\n"
    )
    assert runner.main([str(test_file), "--total-timeout", "300"]) == 1
    assert "test_bad  failed" in capsys.readouterr().out
    rows = [runner.Row("a", "passed"), runner.Row("b", "skipped", "why")]
    assert runner.exit_status(rows, 0) == 0
    assert runner.exit_status([runner.Row("a", "error", "x")], 1) == 1
    assert runner.exit_status([], 0) == 1
