from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import pytvm
from pytvm.ffi.libinfo import compile_shared
from pytvm.rpc.server_env import register_server_env
from pytvm.rpc.server_testing import remote_test_functions

_SERVER_FUNCS = ["upload", "download", "remove", "listdir", "load_module", "workpath"]


@pytest.fixture
def registry() -> Iterator[None]:
    """Global functions replaced by register_server_env come back after the test."""
    names = [f"tvm.rpc.server.{n}" for n in _SERVER_FUNCS] + [
        n for n in pytvm.list_global_func_names() if n.startswith("runtime.module.loadfile_")
    ]
    names += ["rpc.PopenSession", *remote_test_functions()]
    saved = {name: pytvm.get_global_func(name, allow_missing=True) for name in names}
    yield
    for name, func in saved.items():
        if func is None:
            if pytvm.get_global_func(name, allow_missing=True) is not None:
                pytvm.remove_global_func(name)
        else:
            pytvm.register_func(name, func, override=True)


def _library(path: Path, symbol: str) -> None:
    source = path.with_suffix(".c")
    source.write_text(f"int {symbol}(void) {{ return 1; }}\n")
    compile_shared([source], path)
    source.unlink()


@pytest.mark.needs_cc
def test_swapped_link_never_leads_file_operations_outside(tmp_path: Path, registry: None) -> None:
    """A thread keeps swapping ``sub`` between a link into the workspace and links out of it
    while upload, download, remove, listdir and load_module go through ``sub``: nothing outside
    is ever read, written, removed, listed or loaded.
    """
    outside, ws = tmp_path / "outside", tmp_path / "ws"
    (ws / "real").mkdir(parents=True)
    outside.mkdir()
    (outside / "f").write_bytes(b"SECRET")
    (outside / "only-outside").write_bytes(b"")
    (ws / "real" / "f").write_bytes(b"inside")
    _library(outside / "lib.so", "where_outside")
    _library(ws / "real" / "lib.so", "where_inside")
    register_server_env(str(ws))
    server = {n: pytvm.get_global_func(f"tvm.rpc.server.{n}") for n in _SERVER_FUNCS}

    targets = ["real", "../outside", str(outside)]
    os.symlink("real", ws / "sub")
    stop, running = threading.Event(), threading.Event()
    swaps = 0

    def swap() -> None:
        nonlocal swaps
        while not stop.is_set():
            tmp = ws / f".swap{swaps % 2}"
            os.symlink(targets[swaps % len(targets)], tmp)
            os.replace(tmp, ws / "sub")
            swaps += 1
            running.set()

    escapes: dict[str, int] = {}
    done: dict[str, int] = {}

    def attempt(what: str, tries: int, op: Callable[[], bool]) -> None:
        for _ in range(tries):
            try:
                escaped = op()
            except (ValueError, OSError):
                continue  # refused, or not there at this instant: both fine
            done[what] = done.get(what, 0) + 1
            if escaped:
                escapes[what] = escapes.get(what, 0) + 1
                (outside / "f").write_bytes(b"SECRET")
                (outside / "new").unlink(missing_ok=True)

    def download() -> bool:
        return bool(server["download"]("sub/f") == b"SECRET")

    def upload() -> bool:
        server["upload"]("sub/new", b"x")
        return (outside / "new").exists()

    def remove() -> bool:
        if not (ws / "real" / "f").exists():
            (ws / "real" / "f").write_bytes(b"inside")
        server["remove"]("sub/f")
        return not (outside / "f").exists()

    def listdir() -> bool:
        return "only-outside" in str(server["listdir"]("sub"))

    def load() -> bool:
        module = server["load_module"]("sub/lib.so")
        return module.get_function("where_outside", allow_missing=True) is not None

    swapper = threading.Thread(target=swap, daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # let the swapper run between any two steps of an operation
    swapper.start()
    try:
        assert running.wait(timeout=10)
        attempt("read", 600, download)
        attempt("write", 600, upload)
        attempt("remove", 300, remove)
        attempt("list", 300, listdir)
        attempt("load", 200, load)
    finally:
        stop.set()
        swapper.join(timeout=10)
        sys.setswitchinterval(interval)
    assert escapes == {}
    assert swaps > 100 and sum(done.values()) > 0, (swaps, done)
    (ws / "sub").unlink()
    (ws / "real").rename(ws / "sub")  # with no link in the way every operation works
    (ws / "sub" / "f").write_bytes(b"inside")
    assert server["download"]("sub/f") == b"inside"
    server["upload"]("sub/new", b"x")
    server["remove"]("sub/f")
    assert server["listdir"]("sub") == "lib.so,new"
    assert server["load_module"]("sub/lib.so").get_function("where_inside") is not None
    assert (outside / "f").read_bytes() == b"SECRET"
    assert sorted(os.listdir(outside)) == ["f", "lib.so", "only-outside"]
