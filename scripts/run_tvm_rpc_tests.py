r"""Run Apache TVM's own RPC test file against pytvm (``import pytvm as tvm``) and tabulate it.

The TVM file is not part of pytvm; fetch it from Apache TVM first, for example::

    mkdir -p /tmp/tvm_tests
    curl -o /tmp/tvm_tests/test_runtime_rpc.py \
        https://raw.githubusercontent.com/apache/tvm/main/tests/python/runtime/test_runtime_rpc.py
    # or, from a TVM checkout:
    git -C tvm show HEAD:tests/python/runtime/test_runtime_rpc.py \
        > /tmp/tvm_tests/test_runtime_rpc.py

Then::

    python scripts/run_tvm_rpc_tests.py /tmp/tvm_tests/test_runtime_rpc.py [--pytvm-root DIR]

The file is copied to a temporary directory and changed mechanically only:

- ``import tvm`` -> ``import pytvm as tvm``; ``import tvm_ffi`` -> ``import pytvm.ffi as tvm_ffi``;
- ``from tvm import rpc, te`` and ``from tvm.<module> import ...`` -> the same names from pytvm
  (a name pytvm lacks becomes ``None``, so only the tests that use it fail);
- ``tvm.testing`` -> a small shim written beside the copy (``requires_rpc``, ``requires_llvm``,
  ``skip_if_32bit``, ``assert_allclose``, ``device_enabled``, ``main``), and ``tvm.support``'s
  ``utils.tempdir`` -> the same shim;
- tests whose body uses the compiler (``tvm.compile``, ``te.``, ``tvm.script``'s ``I``/``T``) are
  marked skipped with the reason ``compiler, skipped``.

pytest runs in a subprocess with ``PYTHONPATH`` set to ``--pytvm-root`` (default: this checkout),
a per-test alarm (``--per-test-timeout``), a faulthandler backstop and a wall-clock limit for the
whole run, so a hanging test cannot hang the script. The script checks which ``pytvm`` the
subprocess imported and prints one row per test id (passed / failed / skipped, with the reason)
and the totals.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

COMPILER_REASON = "compiler, skipped"
SHIM_NAME = "_pytvm_testing_shim"

# (pattern, replacement) applied line by line, in order; each is a renaming, nothing more.
_SUBSTITUTIONS: list[tuple[str, str]] = [
    (r"^import tvm_ffi$", "import pytvm.ffi as tvm_ffi"),
    (r"^import tvm\.testing$", f"import {SHIM_NAME} as tvm_testing"),
    (r"^import tvm$", "import pytvm as tvm"),
    (r"^from tvm\.support import (.+)$", rf"from {SHIM_NAME} import \1"),
    (r"^from tvm\.testing import (.+)$", rf"from {SHIM_NAME} import \1"),
]

_SHIM = '''"""tvm.testing's helpers used by TVM's RPC tests, for a run against pytvm."""
import os
import struct
import tempfile

import numpy as np
import pytest

requires_rpc = pytest.mark.skipif(False, reason="pytvm always has RPC")
requires_llvm = pytest.mark.skip(reason="pytvm has no LLVM backend")


def skip_if_32bit(reason):
    return pytest.mark.skipif(struct.calcsize("P") == 4, reason=reason)


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired), rtol=rtol, atol=atol)


def device_enabled(name):
    return False


def main():
    raise SystemExit(pytest.main([__file__]))


class _TempDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="tvm_rpc_test_")

    def relpath(self, name):
        return os.path.join(self.path, name)


class utils:  # tvm.support.utils
    tempdir = _TempDir


cc = None  # tvm.support.cc: C compilation is the compiler's (its tests are skipped)
'''

_CONFTEST = '''"""Per-test time limit, compiler-test skips, and which pytvm was imported."""
import faulthandler
import json
import signal

import pytest

_LIMIT = {limit}
_COMPILER = set(json.loads({compiler!r}))


def pytest_configure(config):
    import pytvm

    with open({where!r}, "w") as f:
        f.write(pytvm.__file__)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.originalname in _COMPILER or item.name in _COMPILER:
            item.add_marker(pytest.mark.skip(reason={reason!r}), append=False)


def _expired(signum, frame):
    raise TimeoutError(f"test exceeded the per-test limit of {{_LIMIT}} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    signal.signal(signal.SIGALRM, _expired)
    signal.alarm(_LIMIT)
    faulthandler.dump_traceback_later(_LIMIT + 15, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
'''


def substitute(source: str) -> str:
    """The TVM test source with its imports renamed to pytvm (see the module docstring)."""
    out: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        done = False
        for pattern, replacement in _SUBSTITUTIONS:
            new, n = re.subn(pattern, replacement, stripped)
            if n:
                out.append(line[: len(line) - len(line.lstrip())] + new)
                done = True
                break
        if done:
            continue
        match = re.match(r"^(\s*)from tvm(\.[\w.]+)? import (.+)$", line)
        if match:
            indent, module, names = match.groups()
            out.append(_guarded_import(indent, f"pytvm{module or ''}", names))
            continue
        out.append(re.sub(r"\btvm\.testing\.", "tvm_testing.", line))
    return "\n".join(out) + "\n"


def _guarded_import(indent: str, module: str, names: str) -> str:
    """``from module import a, b as c`` per name; a name pytvm lacks is bound to ``None``."""
    lines = []
    for item in names.split(","):
        parts = item.split(" as ")
        name, alias = parts[0].strip(), parts[-1].strip()
        lines += [
            f"{indent}try:",
            f"{indent}    from {module} import {name} as {alias}",
            f"{indent}except ImportError:  # not in pytvm",
            f"{indent}    {alias} = None",
        ]
    return "\n".join(lines)


def compiler_tests(source: str) -> list[str]:
    """Names of the test functions whose body uses the compiler."""
    found = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
            continue
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Attribute) or not isinstance(sub.value, ast.Name):
                continue
            base, attr = sub.value.id, sub.attr
            if base in ("te", "I", "T") or (base == "tvm" and attr in ("compile", "script")):
                found.append(node.name)
                break
    return found


def parse_junit(path: Path) -> list[tuple[str, str, str]]:
    """``(test id, outcome, detail)`` per test case of a JUnit XML report."""
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "?")
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                detail = (
                    (child.get("message") or "").splitlines()[0][:110]
                    if child.get("message")
                    else ""
                )
                break
            if child.tag == "skipped":
                outcome = "skipped"
                detail = (child.get("message") or "").removeprefix("Skipped: ")[:110]
        if outcome == "error" and any(r[0] == name for r in rows):
            name += " (teardown)"
        rows.append((name, outcome, detail))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the rewritten TVM test file under pytest and print its table; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tvm_test_file", type=Path)
    parser.add_argument("--pytvm-root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--per-test-timeout", type=int, default=60)
    parser.add_argument("--total-timeout", type=int, default=900)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)

    root = args.pytvm_root.resolve()
    source = args.tvm_test_file.read_text()
    skipped = compiler_tests(source)
    work = Path(tempfile.mkdtemp(prefix="pytvm_tvm_rpc_"))
    try:
        test_file = work / args.tvm_test_file.name
        test_file.write_text(substitute(source))
        (work / f"{SHIM_NAME}.py").write_text(_SHIM)
        where = work / "pytvm_file.txt"
        (work / "conftest.py").write_text(
            _CONFTEST.format(
                limit=args.per_test_timeout,
                compiler=__import__("json").dumps(skipped),
                where=str(where),
                reason=COMPILER_REASON,
            )
        )
        (work / "pytest.ini").write_text("[pytest]\n")
        report = work / "report.xml"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(work)]))
        cmd = [
            sys.executable, "-m", "pytest", test_file.name, "-p", "no:cacheprovider", "-q",
            f"--junitxml={report}", "-o", "junit_family=xunit1",
        ]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=work, env=env, start_new_session=True)
        try:
            rc = proc.wait(timeout=args.total_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            print(f"pytest ran past --total-timeout {args.total_timeout} s and was killed")
        used = where.read_text() if where.exists() else "(not recorded)"
        print(f"\npytvm imported by the tests: {used}")
        if not used.startswith(str(root) + os.sep):
            print(f"error: expected pytvm from {root}")
            return 2
        if not report.exists():
            print(f"no report: pytest exited with {rc} before writing it")
            return 1
        rows = parse_junit(report)
        _print_table(rows)
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _print_table(rows: list[tuple[str, str, str]]) -> None:
    width = max((len(r[0]) for r in rows), default=10)
    print(f"\n{'test':<{width}}  result")
    for name, outcome, detail in rows:
        print(f"{name:<{width}}  {outcome}" + (f" ({detail})" if detail else ""))
    totals: dict[str, int] = {}
    for _, outcome, detail in rows:
        key = "skipped (compiler)" if detail == COMPILER_REASON else outcome
        totals[key] = totals.get(key, 0) + 1
    print("\ntotals: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"total: {len(rows)}")


if __name__ == "__main__":
    sys.exit(main())
