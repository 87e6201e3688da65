"""What the scripts that run Apache TVM's own test files against pytvm share.

:func:`substitute` renames ``tvm``/``tvm_ffi`` imports to pytvm's and changes nothing else;
:func:`run_pytest` runs renamed files under pytest in a subprocess, with a per-test alarm, a
faulthandler backstop and a wall-clock limit, and returns one row per test from the JUnit report.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# (pattern, replacement) per import line, the first match wins; each is a renaming only.
_RENAMES: list[tuple[str, str]] = [
    (r"import tvm_ffi$", "import pytvm.ffi as tvm_ffi"),
    (r"import tvm_ffi as (\w+)$", r"import pytvm.ffi as \1"),
    (r"from tvm_ffi(\.[\w.]+)? import (.+)$", r"from pytvm.ffi\1 import \2"),
    (r"import tvm$", "import pytvm as tvm"),
    (r"import tvm, ([\w, ]+)$", r"import pytvm as tvm, \1"),
    (r"import tvm as (\w+)$", r"import pytvm as \1"),
    (r"import tvm(\.[\w.]+) as (\w+)$", r"import pytvm\1 as \2"),
    (r"import tvm(\.[\w.]+)$", r"import pytvm\1, pytvm as tvm"),
    (r"from tvm(\.[\w.]+)? import (.+)$", r"from pytvm\1 import \2"),
    (r'pytest\.importorskip\("tvm(\.[\w.]+)?"\)$', r'pytest.importorskip("pytvm\1")'),
]

#: The conftest written beside the renamed files: per-test time limit, the skips the script
#: declares (each with its reason), and which pytvm the tests imported. ``plugins`` is what the
#: TVM tree's own root conftest loads (``pytest_plugins``), renamed.
CONFTEST = '''"""Per-test time limit, the declared skips, and which pytvm was imported."""
import faulthandler
import fnmatch
import json
import signal

import pytest

pytest_plugins = {plugins!r}
_LIMIT = {limit}
_SKIPS = json.loads({skips!r})
_PROGRESS = {progress!r}
_DESELECT = {deselect!r}


def _log(entry):
    with open(_PROGRESS, "a") as f:
        f.write(json.dumps(entry) + "\\n")


def _detail(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")[:300]
    text = report.longreprtext or ""
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E   ")]
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (errors[-1] if errors else lines[-1] if lines else "")[:300]


def pytest_collectreport(report):
    if report.failed:
        _log({{"nodeid": report.nodeid or "collection", "when": "collect", "outcome": "failed",
              "detail": _detail(report)}})


def pytest_runtest_logstart(nodeid, location):
    _log({{"start": nodeid}})


def pytest_runtest_logreport(report):
    _log({{"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
          "xfail": hasattr(report, "wasxfail"), "detail": _detail(report)}})


def pytest_runtest_logfinish(nodeid, location):
    _log({{"end": nodeid}})


def pytest_configure(config):
    import pytvm

    with open({where!r}, "w") as f:
        f.write(pytvm.__file__)


def pytest_collection_modifyitems(config, items):
    try:
        with open(_DESELECT) as f:
            done = set(json.load(f))
    except FileNotFoundError:
        done = set()
    if done:
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid in done])
        items[:] = [i for i in items if i.nodeid not in done]
    for item in items:
        for pattern, reason in _SKIPS.items():
            names = (item.nodeid, item.name, getattr(item, "originalname", item.name))
            if any(fnmatch.fnmatchcase(n, pattern) for n in names):
                item.add_marker(pytest.mark.skip(reason=reason), append=False)
                break


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


#: Files the conftest writes beside the tests: what ran and how (one JSON object per line), and
#: the tests a restarted pytest leaves out (those already run, and the one that crashed).
PROGRESS_FILE = "progress.jsonl"
DESELECT_FILE = "deselect.json"


@dataclass(frozen=True)
class Row:
    """One test's outcome: ``passed``, ``failed``, ``error`` or ``skipped``, and why."""

    test: str
    outcome: str
    detail: str = ""


def substitute(source: str) -> str:
    """The TVM source with its ``tvm``/``tvm_ffi`` imports renamed to pytvm's, nothing else.

    Each import line is renamed; every other line is kept as it is:

    - ``import tvm`` -> ``import pytvm as tvm`` (also first in a list: ``import tvm, sys``);
      ``import tvm.x`` -> ``import pytvm.x, pytvm as tvm`` (so ``tvm.x.y`` works);
      ``import tvm.x as y`` -> ``import pytvm.x as y``;
    - ``from tvm import a`` / ``from tvm.x import a`` -> ``from pytvm import a`` /
      ``from pytvm.x import a``;
    - ``import tvm_ffi`` -> ``import pytvm.ffi as tvm_ffi``; ``from tvm_ffi import a`` ->
      ``from pytvm.ffi import a``;
    - ``pytest.importorskip("tvm.x")`` -> ``pytest.importorskip("pytvm.x")`` (an import too).
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


def exit_status(rows: list[Row], pytest_rc: int) -> int:
    """0 when every test passed or was skipped and pytest agrees; 1 otherwise."""
    bad = any(r.outcome in ("failed", "error") for r in rows)
    return 1 if bad or not rows or pytest_rc not in (0, 5) else 0


def write_conftest(
    work: Path, *, limit: int, skips: dict[str, str], plugins: list[str] | None = None
) -> Path:
    """Write :data:`CONFTEST` and an empty ``pytest.ini`` into ``work``; return the path the
    tests will write the imported pytvm's location to.
    """
    where = work / "pytvm_file.txt"
    text = CONFTEST.format(
        plugins=list(plugins or []),
        limit=limit,
        skips=json.dumps(skips),
        where=str(where),
        progress=str(work / PROGRESS_FILE),
        deselect=str(work / DESELECT_FILE),
    )
    (work / "conftest.py").write_text(text)
    (work / "pytest.ini").write_text("[pytest]\n")
    return where


@dataclass(frozen=True)
class PytestRun:
    """What one pytest subprocess gave: its exit code, rows, and a note when it did not finish."""

    returncode: int
    rows: list[Row]
    note: str = ""


def run_pytest(
    work: Path,
    test_files: list[str],
    *,
    pytvm_root: Path,
    total_timeout: int,
    extra_env: dict[str, str] | None = None,
    quiet_output: bool = False,
    max_restarts: int = 20,
) -> PytestRun:
    """Run pytest on ``test_files`` (relative to ``work``, whose conftest is
    :func:`write_conftest`'s) with ``pytvm_root`` first on the path; kill it and its children
    after ``total_timeout`` seconds in all.

    A test that kills the process (a native crash, an abort in a peer library) is recorded as an
    error naming the signal, and pytest is started again without the tests already run, up to
    ``max_restarts`` times, so one crash does not lose the rest of the file.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pytvm_root), str(work)]))
    env.update(extra_env or {})
    cmd = [sys.executable, "-m", "pytest", *test_files, "-p", "no:cacheprovider", "-q"]
    out = subprocess.DEVNULL if quiet_output else None
    deadline = time.monotonic() + total_timeout
    crashed: list[Row] = []
    notes: list[str] = []
    rc = 0
    for _ in range(max_restarts + 1):
        proc = subprocess.Popen(
            cmd, cwd=work, env=env, start_new_session=True, stdout=out, stderr=out
        )
        try:
            rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            notes.append(f"pytest ran past the limit of {total_timeout} s and was killed")
            break
        running, done = _progress(work / PROGRESS_FILE)
        if rc >= 0 or running is None:
            break
        why = signal.Signals(-rc).name if -rc in signal.Signals.__members__.values() else -rc
        crashed.append(Row(_test_name(running), "error", f"the test process died ({why})"))
        (work / DESELECT_FILE).write_text(json.dumps(sorted(done | {running})))
    rows = _rows(work / PROGRESS_FILE) + crashed
    if not rows and not notes:
        notes.append(f"pytest exited with {rc} before running a test")
    return PytestRun(rc, rows, "; ".join(notes))


def _entries(progress: Path) -> list[dict[str, Any]]:
    if not progress.exists():
        return []
    return [json.loads(line) for line in progress.read_text().splitlines() if line.strip()]


def _progress(progress: Path) -> tuple[str | None, set[str]]:
    """The test running when the process stopped (started, not finished) and those done."""
    started: list[str] = []
    done: set[str] = set()
    for entry in _entries(progress):
        if "start" in entry:
            started.append(entry["start"])
        elif "end" in entry:
            done.add(entry["end"])
    running = next((t for t in reversed(started) if t not in done), None)
    return running, done


def _test_name(nodeid: str) -> str:
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def _rows(progress: Path) -> list[Row]:
    """One row per test (and per collection error) from the progress log, in order."""
    outcomes: dict[str, Row] = {}
    for entry in _entries(progress):
        if "nodeid" not in entry:
            continue
        name, when, result = _test_name(entry["nodeid"]), entry["when"], entry["outcome"]
        detail = entry.get("detail", "")
        if when == "collect":
            outcomes[name] = Row(name, "error", detail)
        elif result == "failed":
            kind = "failed" if when == "call" else "error"
            if name in outcomes and outcomes[name].outcome in ("failed", "error"):
                outcomes[name + " (teardown)"] = Row(name + " (teardown)", "error", detail)
            else:
                outcomes[name] = Row(name, kind, detail)
        elif result == "skipped":
            outcomes[name] = Row(
                name, "skipped", "xfail: " + detail if entry.get("xfail") else detail
            )
        elif when == "call" and name not in outcomes:
            outcomes[name] = Row(name, "passed")
    return list(outcomes.values())


def imported_pytvm_ok(where: Path, root: Path) -> tuple[bool, str]:
    """Whether the tests imported the pytvm under ``root`` (and the path they imported)."""
    used = where.read_text() if where.exists() else "(not recorded)"
    return used.startswith(str(root) + os.sep), used


def print_table(rows: list[Row]) -> None:
    """One line per test and the totals per outcome."""
    width = max((len(r.test) for r in rows), default=10)
    print(f"\n{'test':<{width}}  result")
    for r in rows:
        print(f"{r.test:<{width}}  {r.outcome}" + (f" ({r.detail})" if r.detail else ""))
    totals: dict[str, int] = {}
    for r in rows:
        totals[r.outcome] = totals.get(r.outcome, 0) + 1
    print("\ntotals: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"total: {len(rows)}")
