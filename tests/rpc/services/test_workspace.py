from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import pytvm
from pytvm.ffi.libinfo import compile_shared
from pytvm.rpc.services.server_env import register_server_env
from pytvm.testing.rpc import registry_restored

_SERVER_FUNCS = ["upload", "download", "remove", "listdir", "load_module", "workpath"]


@pytest.fixture
def registry() -> Iterator[None]:
    """Global functions replaced by register_server_env come back after the test."""
    with registry_restored():
        yield


def _library(path: Path, symbol: str) -> None:
    source = path.with_suffix(".c")
    source.write_text(f"int {symbol}(void) {{ return 1; }}\n")
    compile_shared([source], path)
    source.unlink()


class _LinkSwapper:
    """A thread that keeps replacing the link ``link`` by a link to each of ``targets`` in turn."""

    def __init__(self, link: Path, targets: list[str]) -> None:
        self.link, self.targets = link, targets
        self.swaps = 0
        self.stop, self.running = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._swap, daemon=True)

    def _swap(self) -> None:
        while not self.stop.is_set():
            tmp = self.link.with_name(f".swap{self.swaps % 2}")
            tmp.symlink_to(self.targets[self.swaps % len(self.targets)])
            tmp.replace(self.link)
            self.swaps += 1
            self.running.set()


def _operations_through_sub(
    server: dict[str, Any], ws: Path, outside: Path
) -> list[tuple[str, int, Callable[[], bool]]]:
    """(what, tries, operation) on ``ws/sub``; an operation returns whether it reached outside."""

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

    return [
        ("read", 600, download),
        ("write", 600, upload),
        ("remove", 300, remove),
        ("list", 300, listdir),
        ("load", 200, load),
    ]


def _attempt_all(
    operations: list[tuple[str, int, Callable[[], bool]]], outside: Path
) -> tuple[dict[str, int], dict[str, int]]:
    """Run each operation its number of tries: ``(escapes, done)`` counted per kind."""
    escapes: dict[str, int] = {}
    done: dict[str, int] = {}
    for what, tries, op in operations:
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
    return escapes, done


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

    (ws / "sub").symlink_to("real")
    swapper = _LinkSwapper(ws / "sub", ["real", "../outside", str(outside)])
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # let the swapper run between any two steps of an operation
    swapper.thread.start()
    try:
        assert swapper.running.wait(timeout=10)
        escapes, done = _attempt_all(_operations_through_sub(server, ws, outside), outside)
    finally:
        swapper.stop.set()
        swapper.thread.join(timeout=10)
        sys.setswitchinterval(interval)
    assert escapes == {}
    assert swapper.swaps > 100 and sum(done.values()) > 0, (swapper.swaps, done)
    (ws / "sub").unlink()
    (ws / "real").rename(ws / "sub")  # with no link in the way every operation works
    (ws / "sub" / "f").write_bytes(b"inside")
    assert server["download"]("sub/f") == b"inside"
    server["upload"]("sub/new", b"x")
    server["remove"]("sub/f")
    assert server["listdir"]("sub") == "lib.so,new"
    assert server["load_module"]("sub/lib.so").get_function("where_inside") is not None
    assert (outside / "f").read_bytes() == b"SECRET"
    assert sorted(p.name for p in outside.iterdir()) == ["f", "lib.so", "only-outside"]
