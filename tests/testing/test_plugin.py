"""``pytvm.testing.plugin`` and TVM's parametrization helpers, run on a TVM-style test file in
a real pytest subprocess (the way TVM's own files use them, with no conftest of their own).
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

_TVM_STYLE_TESTS = """
import pytvm as tvm
import pytvm.testing

shape = tvm.testing.parameter((1, 3), (4, 5), ids=["small", "big"])
dtype, atol = tvm.testing.parameters(("float32", 1e-5), ("float16", 1e-3))
calls = []


@tvm.testing.fixture(cache_return_value=True)
def reference(shape):
    calls.append(shape)
    return [shape]


def test_target_and_dev(target, dev):
    assert target == "llvm"
    assert dev.device_type == tvm.cpu(0).device_type


def test_parameters_vary_together(shape, dtype, atol):
    assert (dtype, atol) in (("float32", 1e-5), ("float16", 1e-3))


def test_cached_fixture_is_computed_once_per_value(reference, shape):
    reference.append("mutated")
    assert calls.count(shape) == 1


@tvm.testing.parametrize_targets("llvm", "cuda")
def test_explicit_targets(target):
    assert target == "llvm"


@tvm.testing.requires_cuda
def test_needs_cuda():
    raise AssertionError("must be skipped")


@tvm.testing.uses_gpu
@tvm.testing.known_failing_targets("llvm")
def test_known_failing(target):
    assert False


@tvm.testing.exclude_targets("llvm")
def test_excluded(target):
    raise AssertionError("llvm is excluded")
"""


def _run(tmp_path: Path) -> dict[str, str]:
    test_file = tmp_path / "test_tvm_style.py"
    test_file.write_text(_TVM_STYLE_TESTS)
    report = tmp_path / "report.xml"
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), TVM_TEST_TARGETS="llvm;cuda")
    subprocess.run(
        [sys.executable, "-m", "pytest", str(test_file), "-p", "pytvm.testing.plugin",
         "-p", "no:cacheprovider", "-q", f"--junitxml={report}", "--rootdir", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, timeout=300, check=False,
    )  # fmt: skip
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        tags = [child.tag for child in case]
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if tag in tags:
                outcome = tag
        outcomes[case.get("name", "?")] = outcome
    return outcomes


@pytest.mark.needs_cc
def test_tvm_style_file_runs_under_the_plugin(tmp_path: Path) -> None:
    outcomes = _run(tmp_path)
    assert outcomes["test_target_and_dev[llvm]"] == "passed"
    assert outcomes["test_target_and_dev[cuda]"] == "skipped"
    params = [n for n in outcomes if n.startswith("test_parameters_vary_together")]
    assert len(params) == 4  # 2 shapes x 2 (dtype, atol) pairs, not 2 x 2 x 2
    assert all(outcomes[n] == "passed" for n in params)
    cached = [n for n in outcomes if n.startswith("test_cached_fixture")]
    assert len(cached) == 2 and all(outcomes[n] == "passed" for n in cached)
    assert outcomes["test_explicit_targets[llvm]"] == "passed"
    assert outcomes["test_explicit_targets[cuda]"] == "skipped"
    assert outcomes["test_needs_cuda"] == "skipped"
    assert outcomes["test_known_failing[llvm]"] == "skipped"  # xfail is reported as skipped
    assert not any(n.startswith("test_excluded[llvm") for n in outcomes)
    assert outcomes["test_excluded[cuda]"] == "skipped"
