r"""Run Apache TVM's own RPC test file against pytvm (``import pytvm as tvm``) and tabulate it.

The TVM file is not part of pytvm; fetch it from Apache TVM first, for example::

    mkdir -p /tmp/tvm_tests
    git -C tvm show v0.27.dev0:tests/python/runtime/test_runtime_rpc.py \
        > /tmp/tvm_tests/test_runtime_rpc.py

Then::

    python scripts/run_tvm_rpc_tests.py /tmp/tvm_tests/test_runtime_rpc.py [--pytvm-root DIR]

The file is copied to a temporary directory with its imports renamed from ``tvm`` to ``pytvm``,
and nothing else changed (:func:`substitute`):

- ``import tvm`` -> ``import pytvm as tvm``; ``import tvm.x`` -> ``import pytvm.x, pytvm as tvm``
  (so ``tvm.x.y`` works); ``import tvm.x as y`` -> ``import pytvm.x as y``;
- ``from tvm import a`` / ``from tvm.x import a`` -> ``from pytvm import a`` /
  ``from pytvm.x import a``;
- ``import tvm_ffi`` -> ``import pytvm.ffi as tvm_ffi``; ``from tvm_ffi import a`` ->
  ``from pytvm.ffi import a``.

A module or name pytvm lacks therefore fails the run: the collection error is a row of the
table and the exit status is non-zero. The tests in :data:`KNOWN_GAPS` are marked skipped, each
with the reason (something pytvm does not have); every other test runs (``--run-known-gaps``
runs those too).

pytest runs in a subprocess with ``PYTHONPATH`` set to ``--pytvm-root`` (default: this checkout),
a per-test alarm (``--per-test-timeout``), a faulthandler backstop and a wall-clock limit for the
whole run, so a hanging test cannot hang the script. The script checks which ``pytvm`` the
subprocess imported, prints one row per test id (passed / failed / error / skipped, with the
reason) and the totals, and exits with 0 only when no test failed or errored.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

#: Tests of TVM's file that need something pytvm does not have, and what it is. Each was run
#: first; they fail for exactly this reason.
KNOWN_GAPS: dict[str, str] = {
    "test_rpc_return_remote_object": (
        "its minrpc part (run since rpc.CreatePipeClient exists) asks the C MinRPC server for "
        "ffi.Shape and rpc.testing.GetShapeElem/GetShapeSize, and the C runtime has no object "
        "system; it then starts that server through rpc.Server() with the executable's bytes, "
        "which a pytvm server refuses unless started with allow_popen_binary=True"
    ),
}

# (pattern, replacement) per import line, the first match wins; each is a renaming only.
_RENAMES: list[tuple[str, str]] = [
    (r"import tvm_ffi$", "import pytvm.ffi as tvm_ffi"),
    (r"import tvm_ffi as (\w+)$", r"import pytvm.ffi as \1"),
    (r"from tvm_ffi(\.[\w.]+)? import (.+)$", r"from pytvm.ffi\1 import \2"),
    (r"import tvm$", "import pytvm as tvm"),
    (r"import tvm as (\w+)$", r"import pytvm as \1"),
    (r"import tvm(\.[\w.]+) as (\w+)$", r"import pytvm\1 as \2"),
    (r"import tvm(\.[\w.]+)$", r"import pytvm\1, pytvm as tvm"),
    (r"from tvm(\.[\w.]+)? import (.+)$", r"from pytvm\1 import \2"),
]

_CONFTEST = '''"""Per-test time limit, the known-gap skips, and which pytvm was imported."""
import faulthandler
import json
import signal

import pytest

_LIMIT = {limit}
_GAPS = json.loads({gaps!r})


def pytest_configure(config):
    import pytvm

    with open({where!r}, "w") as f:
        f.write(pytvm.__file__)


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = _GAPS.get(item.originalname) or _GAPS.get(item.name)
        if reason:
            item.add_marker(pytest.mark.skip(reason="pytvm lacks it: " + reason), append=False)


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
    """The TVM test source with every import of ``tvm``/``tvm_ffi`` renamed to pytvm's (see the
    module docstring); every other line is kept as it is.
    """
    out: list[str] = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        code, hash_, comment = stripped.partition("  #")
        renamed = line
        for pattern, replacement in _RENAMES:
            new, n = re.subn(rf"^{pattern}", replacement, code.rstrip())
            if n:
                renamed = indent + new + (f"  #{comment}" if hash_ else "")
                break
        out.append(renamed)
    return "\n".join(out) + "\n"


def parse_junit(path: Path) -> list[tuple[str, str, str]]:
    """``(test id, outcome, detail)`` per test case of a JUnit XML report."""
    rows: list[tuple[str, str, str]] = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "?")
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                detail = _error_line(child.get("message") or "", child.text or "")
                break
            if child.tag == "skipped":
                outcome = "skipped"
                detail = (child.get("message") or "").removeprefix("Skipped: ")[:300]
        if outcome == "error" and any(r[0] == name for r in rows):
            name += " (teardown)"
        rows.append((name, outcome, detail))
    return rows


def _error_line(message: str, text: str) -> str:
    """The line that names the error: the last ``E   `` line of the traceback, else the message."""
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E   ")]
    lines = message.strip().splitlines()
    return (errors[-1] if errors else lines[-1] if lines else "")[:300]


def exit_status(rows: list[tuple[str, str, str]], pytest_rc: int) -> int:
    """0 when every test passed or was skipped and pytest agrees; 1 otherwise."""
    bad = any(outcome in ("failed", "error") for _, outcome, _ in rows)
    return 1 if bad or not rows or pytest_rc not in (0, 5) else 0


def main(argv: list[str] | None = None) -> int:
    """Run the renamed TVM test file under pytest and print its table; return the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("tvm_test_file", type=Path)
    parser.add_argument("--pytvm-root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--per-test-timeout", type=int, default=60)
    parser.add_argument("--total-timeout", type=int, default=900)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--run-known-gaps", action="store_true", help="run the KNOWN_GAPS tests too (no skips)"
    )
    args = parser.parse_args(argv)

    root = args.pytvm_root.resolve()
    source = args.tvm_test_file.read_text()
    work = Path(tempfile.mkdtemp(prefix="pytvm_tvm_rpc_"))
    try:
        test_file = work / args.tvm_test_file.name
        test_file.write_text(substitute(source))
        where = work / "pytvm_file.txt"
        (work / "conftest.py").write_text(
            _CONFTEST.format(
                limit=args.per_test_timeout,
                gaps=json.dumps({} if args.run_known_gaps else KNOWN_GAPS),
                where=str(where),
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
        return exit_status(rows, rc)
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
    for _, outcome, _ in rows:
        totals[outcome] = totals.get(outcome, 0) + 1
    print("\ntotals: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"total: {len(rows)}")


if __name__ == "__main__":
    sys.exit(main())
