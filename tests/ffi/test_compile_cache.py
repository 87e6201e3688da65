"""Cache entries are stored with a checksum and used only when it verifies; a damaged entry is
rebuilt with one warning naming it, and the next use works.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytvm.ffi import compile_cache

RUNTIME_SCRIPT = r"""
import ctypes
import pytvm
from pytvm.ffi import host_library, libinfo
pytvm.register_func("test_compile_cache.answer", lambda: 42)
lib = host_library.runtime_library()
out = ctypes.c_void_p()
assert lib.TVMFuncGetGlobal(b"test_compile_cache.answer", ctypes.byref(out)) == 0 and out.value
print(libinfo.runtime_library_path())
"""
RUNNER_SCRIPT = r"""
from pytvm.runtime.graph_executor import _c_runner
lib = _c_runner.runner_library()
assert lib is not None and lib.PyTVMGraphNow() > 0
print(lib._name)
"""


def _run(script: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh process whose cache is ``cache/pytvm``."""
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("pytvm cache: ")]


def _build(path: Path, text: str, root: Path) -> Path:
    return compile_cache.cached_file(path, lambda staged: staged.write_text(text), root=root)


def test_an_entry_is_stored_with_its_size_and_sha256(tmp_path: Path) -> None:
    entry = _build(tmp_path / "pytvm" / "notes" / "a.txt", "hello", tmp_path / "pytvm")
    digest, size = (tmp_path / "pytvm" / "notes" / "a.txt.sha256").read_text().split()
    assert entry.read_text() == "hello"
    assert (digest, size) == (
        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        "5",
    )
    assert sorted(p.name for p in entry.parent.iterdir()) == ["a.txt", "a.txt.sha256"]


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("truncate", "it is 2 bytes, its checksum file says 5"),
        (
            "overwrite",
            "its sha256 is 486ea46224d1bb4f..., its checksum file says 2cf24dba5fb0a30e...",
        ),
        ("no_checksum", "it has no checksum file a.txt.sha256"),
    ],
)
def test_a_damaged_entry_is_rebuilt_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str, problem: str
) -> None:
    root = tmp_path / "pytvm"
    entry = _build(root / "notes" / "a.txt", "hello", root)
    if damage == "truncate":
        entry.write_text("he")
    elif damage == "overwrite":
        entry.write_text("world")
    else:
        (root / "notes" / "a.txt.sha256").unlink()
    with caplog.at_level(logging.WARNING, logger="pytvm.ffi.compile_cache"):
        assert _build(entry, "hello", root).read_text() == "hello"
        assert _build(entry, "other", root).read_text() == "hello"  # whole again: kept
    assert caplog.messages == [f"pytvm cache: rebuilding {entry}: {problem}"]


def test_cached_bytes_returns_the_bytes_it_verified(tmp_path: Path) -> None:
    root = tmp_path / "pytvm"
    made: list[bytes] = []

    def build() -> bytes:
        made.append(b"object code")
        return made[-1]

    assert compile_cache.cached_bytes(root / "k" / "x.o", build, root=root) == b"object code"
    assert compile_cache.cached_bytes(root / "k" / "x.o", build, root=root) == b"object code"
    assert len(made) == 1
    (root / "k" / "x.o").write_bytes(b"object")
    assert compile_cache.lookup_bytes(root / "k" / "x.o") is None


@pytest.mark.needs_cc
def test_a_truncated_runtime_library_is_rebuilt_in_the_next_process(tmp_path: Path) -> None:
    first = _run(RUNTIME_SCRIPT, tmp_path)
    assert first.returncode == 0, first.stderr
    library = Path(first.stdout.strip())
    size = library.stat().st_size
    with library.open("r+b") as f:
        f.truncate(size // 2)
    second = _run(RUNTIME_SCRIPT, tmp_path)
    assert second.returncode == 0, f"died with {second.returncode}: {second.stderr}"
    assert _warnings(second.stderr) == [
        f"pytvm cache: rebuilding {library}: it is {size // 2} bytes, its checksum file says {size}"
    ]
    assert library.stat().st_size == size
    third = _run(RUNTIME_SCRIPT, tmp_path)
    assert third.returncode == 0 and not _warnings(third.stderr), third.stderr


@pytest.mark.needs_cc
def test_a_damaged_graph_run_library_is_rebuilt_in_the_next_process(tmp_path: Path) -> None:
    first = _run(RUNNER_SCRIPT, tmp_path)
    assert first.returncode == 0, first.stderr
    library = Path(first.stdout.strip())
    data = bytearray(library.read_bytes())
    data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)  # second half zeroed
    library.write_bytes(bytes(data))
    second = _run(RUNNER_SCRIPT, tmp_path)
    assert second.returncode == 0, f"died with {second.returncode}: {second.stderr}"
    [warning] = _warnings(second.stderr)
    assert warning.startswith(f"pytvm cache: rebuilding {library}: its sha256 is ")
