"""The kernel cache (``kernels/<xx>/``) of both compile paths: a damaged entry is compiled again
with one warning, and a folder reached through a link is refused with nothing written.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.driver import compile_stats
from pytvm.ffi.errors import TVMPermissionError

pytestmark = pytest.mark.needs_cc

LLVM = "llvm -backend=llvmlite"
CHILD_BUILD = """
import sys
import pytvm
from pytvm import te
A = te.placeholder((16,), name="A")
B = te.compute((16,), lambda i: A[i] * 3.0, name="B")
s = te.create_schedule(B.op)
pytvm.build(s, [A, B], target=sys.argv[1], name="thrice", cache_dir=sys.argv[2])
"""


def _build(target: str, cache: Path) -> pytvm.runtime.Module:
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] * 3.0, name="B")
    return pytvm.build(
        te.create_schedule(B.op), [A, B], target=target, name="thrice", cache_dir=cache
    )


def _build_in_child(target: str, cache: Path) -> None:
    """Fill the cache from another process: a library loaded here must not change under it."""
    subprocess.run([sys.executable, "-c", CHILD_BUILD, target, str(cache)], check=True, timeout=300)


def _works(mod: pytvm.runtime.Module) -> None:
    out = pytvm.nd.empty((16,), "float32")
    mod["thrice"](pytvm.nd.array(np.ones(16, "float32")), out)
    assert out.numpy().tolist() == [3.0] * 16


def _entry(cache: Path, suffix: str) -> Path:
    [entry] = cache.glob(f"*/thrice-*{suffix}")
    return entry


def test_a_garbled_c_kernel_is_compiled_again_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _build_in_child("c", tmp_path)
    entry = _entry(tmp_path, ".so")
    entry.write_bytes(bytes(b ^ 0x5A for b in entry.read_bytes()))  # same size, other bytes
    compiled = compile_stats().compiled
    with caplog.at_level(logging.WARNING, logger="pytvm.ffi.compile_cache"):
        _works(_build("c", tmp_path))
    assert compile_stats().compiled == compiled + 1
    [message] = caplog.messages
    assert message.startswith(f"pytvm cache: rebuilding {entry}: its sha256 is ")


def test_a_truncated_llvm_object_is_compiled_again_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _build(LLVM, tmp_path)
    entry = _entry(tmp_path, ".o")
    size = entry.stat().st_size
    entry.write_bytes(entry.read_bytes()[:100])
    compiled = compile_stats().compiled
    with caplog.at_level(logging.WARNING, logger="pytvm.ffi.compile_cache"):
        _works(_build(LLVM, tmp_path))
    assert compile_stats().compiled == compiled + 1
    assert caplog.messages == [
        f"pytvm cache: rebuilding {entry}: it is 100 bytes, its checksum file says {size}"
    ]


@pytest.mark.parametrize("target", ["c", LLVM])
def test_a_kernel_folder_that_is_a_link_is_refused_and_nothing_is_written_outside(
    tmp_path: Path, target: str
) -> None:
    _build(target, tmp_path / "first")
    folder = next(p for p in (tmp_path / "first").iterdir() if p.is_dir()).name
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "second").mkdir(mode=0o700)
    (tmp_path / "second" / folder).symlink_to(outside)
    with pytest.raises(
        TVMPermissionError,
        match=f"refusing to use the cache folder {tmp_path / 'second' / folder}: it is a "
        f"symbolic link \\(to {outside}\\)",
    ):
        _build(target, tmp_path / "second")
    assert list(outside.iterdir()) == []
