from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.ffi.errors import TVMOSError, TVMValueError
from pytvm.ffi.libinfo import compile_shared
from pytvm.rpc.services.server import Server
from pytvm.rpc.services.server_env import (
    open_server_env,
    resolve_path,
    warn_if_root,
)
from pytvm.rpc.sessions.client import connect


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A registered server env on a fresh dir; the previous registrations come back after."""
    root = tmp_path / "ws"
    root.mkdir()
    with open_server_env(work_path=str(root)):
        yield root


def call(name: str, *args: object) -> object:
    return pytvm.get_global_func(f"tvm.rpc.server.{name}")(*args)


def test_upload_download_listdir_remove_round_trip(workspace: Path) -> None:
    call("upload", "f.txt", b"hello")
    call("upload", "nested/deeper/g.bin", bytearray(b"\x00\x01"))
    assert (workspace / "f.txt").read_bytes() == b"hello"
    assert call("download", "nested/deeper/g.bin") == b"\x00\x01"
    assert call("listdir", "") == "f.txt,nested"
    assert call("listdir", "nested") == "deeper"
    assert str(call("listdir", "nested/deeper")).split(",") == ["g.bin"]
    call("remove", "f.txt")
    call("remove", "nested")
    assert call("listdir", ".") == ""


def test_workpath_is_absolute_inside_workspace(workspace: Path) -> None:
    path = call("workpath", "a/b.o")
    assert path == str(workspace.resolve() / "a" / "b.o")
    assert call("workpath", "a/../c") == str(workspace.resolve() / "c")


def test_absolute_path_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = str(tmp_path / "outside.txt")
    for name, args in [
        ("upload", (outside, b"x")),
        ("download", ("/etc/passwd",)),
        ("workpath", (outside,)),
        ("listdir", ("/",)),
        ("remove", (outside,)),
    ]:
        with pytest.raises(TVMValueError, match="is absolute"):
            call(name, *args)
    assert not Path(outside).exists()


def test_dotdot_escape_is_refused(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_bytes(b"s")
    with pytest.raises(TVMValueError, match=r"'\.\./secret\.txt' climbs out"):
        call("download", "../secret.txt")
    with pytest.raises(TVMValueError, match="climbs out"):
        call("upload", "a/../../evil.txt", b"x")
    with pytest.raises(TVMValueError, match="climbs out"):
        call("remove", "../secret.txt")
    assert (tmp_path / "secret.txt").exists()
    assert not (tmp_path / "evil.txt").exists()


def test_symlink_out_of_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"s")
    (workspace / "link").symlink_to(outside)
    (workspace / "filelink").symlink_to(outside / "secret.txt")
    with pytest.raises(TVMValueError, match="symbolic link"):
        call("download", "link/secret.txt")
    with pytest.raises(TVMValueError, match="symbolic link"):
        call("download", "filelink")
    with pytest.raises(TVMValueError, match="symbolic link"):
        call("upload", "link/new.txt", b"x")
    with pytest.raises(TVMValueError, match="symbolic link"):
        call("listdir", "link")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    # Removing the link itself is fine and leaves its target alone.
    call("remove", "filelink")
    assert (outside / "secret.txt").exists()
    assert "filelink" not in str(call("listdir", "")).split(",")


def test_symlink_inside_workspace_is_followed(workspace: Path) -> None:
    call("upload", "real/data.txt", b"inside")
    (workspace / "alias").symlink_to(workspace / "real")
    assert call("download", "alias/data.txt") == b"inside"


def test_missing_files_and_workspace_root_are_errors(workspace: Path) -> None:
    with pytest.raises(TVMOSError, match="no file 'nope'"):
        call("download", "nope")
    with pytest.raises(TVMOSError, match="no file 'nope'"):
        call("remove", "nope")
    with pytest.raises(TVMValueError, match="workspace itself"):
        call("remove", "")
    with pytest.raises(TVMValueError, match="names a directory"):
        call("upload", ".", b"x")


def test_load_module_resolves_inside_workspace(workspace: Path) -> None:
    with pytest.raises(TVMOSError, match=re.escape("no file 'missing.so'")):
        call("load_module", "missing.so")
    with pytest.raises(TVMValueError, match="is absolute"):
        call("load_module", "/tmp/x.so")


def test_rpc_test_helpers(workspace: Path) -> None:
    assert pytvm.get_global_func("rpc.test.addone")(1) == 2
    assert pytvm.get_global_func("rpc.test.echo")(b"x") == b"x"
    assert pytvm.get_global_func("rpc.test.add_to_lhs")(2)(3) == 5
    assert pytvm.get_global_func("rpc.test.strcat")("x", 3) == "x:3"
    assert pytvm.get_global_func("rpc.test.runtime_str_concat")("a", "b") == "ab"
    with pytest.raises(ValueError, match="boom"):
        pytvm.get_global_func("rpc.test.except")("boom")


def test_resolve_path_rejects_nul_and_non_str(tmp_path: Path) -> None:
    with pytest.raises(TVMValueError, match="NUL"):
        resolve_path(str(tmp_path), "a\0b")
    with pytest.raises(TVMValueError, match="must be a str"):
        resolve_path(str(tmp_path), 3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- a live server


def _library(path: Path, symbol: str) -> Path:
    source = path.with_suffix(".c")
    source.write_text(f"int {symbol}(void) {{ return 1; }}\n")
    compile_shared([source], path)
    source.unlink()
    return path


def _pipe_server_script(path: Path) -> Path:
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pytvm.rpc.services.pipe_server "$@"\n')
    path.chmod(0o700)
    return path


ctor = "rpc.PopenSession"


@pytest.mark.needs_cc
def test_remote_client_loads_and_runs_only_inside_the_workspace(tmp_path: Path) -> None:
    lib = _library(tmp_path / "outside.so", "outside_fn")
    script = _pipe_server_script(tmp_path / "server.sh")
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        loadfile = sess.get_function("runtime.module.loadfile_so")
        with pytest.raises(ValueError, match="absolute and outside the session workspace"):
            loadfile(str(lib))
        sess.upload(str(lib), "in.so")
        assert loadfile("in.so").get_function("outside_fn") is not None
        inside = sess.get_function("tvm.rpc.server.workpath")("in.so")
        assert loadfile(inside).get_function("outside_fn") is not None
        for args, message in [
            (str(script), "outside the session workspace and not one of the executables"),
            (script.read_bytes(), "--allow-popen-binary"),
        ]:
            with pytest.raises(ValueError, match=message):
                connect("127.0.0.1", server.port, "k", session_constructor_args=[ctor, args])
        with pytest.raises(ValueError, match=re.escape("'in.so' is not an executable")):
            sess.get_function(ctor)("in.so")  # an upload is never executable
        sess.close()
    # This process itself is not confined.
    assert pytvm.runtime.load_module(str(lib)).get_function("outside_fn") is not None


def test_popen_binary_sent_by_a_client_runs_when_the_server_allows_it(tmp_path: Path) -> None:
    script = _pipe_server_script(tmp_path / "server.sh").read_bytes()
    with Server(port=0, key="k", silent=True, allow_popen_binary=True) as server:
        args = [ctor, script]
        with connect("127.0.0.1", server.port, "k", session_constructor_args=args) as sess:
            assert sess.get_function("rpc.test.addone")(1) == 2
            assert "pipe" in sess.get_function("tvm.rpc.server.workpath")("")  # its own
            sess.upload(b"x", "f.txt")  # the pipe server's own workspace
            assert sess.listdir("") == ["f.txt"]


def test_errors_from_a_server_carry_no_absolute_paths() -> None:
    """Kind, message and traceback survive; files are named relative to their package (or the
    workspace), never by the server's absolute paths.
    """
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        sess.upload(b"not a shared object", "bad.so")
        workspace = sess.get_function("tvm.rpc.server.workpath")("")
        remote_ones = pytvm.nd.array(np.zeros((3, 4)), sess.cpu())
        cases: list[tuple[Callable[[], object], type[BaseException], str]] = [
            (lambda: sess.get_function("rpc.test.except")("boom"), ValueError, "boom"),
            (lambda: sess.download("missing.bin"), OSError, "no file 'missing.bin'"),
            (lambda: sess.load_module("bad.so"), ValueError, "cannot load 'bad.so': a text file"),
            (lambda: sess.get_function("rpc.test.addone")("x"), TypeError, "str"),
            (
                lambda: sess.get_function("rpc.test.remote_tensor_func")(remote_ones),
                RuntimeError,
                "AssertionError",
            ),
        ]
        for call_it, kind, message in cases:
            with pytest.raises(kind, match=message) as info:
                call_it()
            text = f"{info.value}\n{info.value.traceback}"  # type: ignore[attr-defined]
            assert 'File "pytvm/' in text, text
            assert not re.search(r'File "/', text), text
            assert workspace not in text and str(Path(pytvm.__file__).parent) not in text, text
        sess.close()


def test_warns_when_the_server_runs_as_root(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="pytvm.rpc.server"):
        assert warn_if_root(0) and not warn_if_root(1000)
        assert warn_if_root() == (os.geteuid() == 0)
    assert "runs as root" in caplog.text


def test_popen_path_runs_when_the_server_lists_the_executable(tmp_path: Path) -> None:
    listed = _pipe_server_script(tmp_path / "listed.sh")
    other = _pipe_server_script(tmp_path / "other.sh")
    with Server(port=0, key="k", silent=True, popen_executables=[str(listed)]) as server:
        args = [ctor, str(listed)]
        with connect("127.0.0.1", server.port, "k", session_constructor_args=args) as sess:
            assert sess.get_function("rpc.test.addone")(1) == 2
        with pytest.raises(ValueError, match=r"allowed: .*listed\.sh"):
            connect("127.0.0.1", server.port, "k", session_constructor_args=[ctor, str(other)])


def test_closing_tvms_server_env_gives_back_the_processs_own_loaders(tmp_path: Path) -> None:
    src = tmp_path / "k.c"
    src.write_text("int pytvm_server_env_probe(void) { return 7; }\n")
    lib = compile_shared([src], tmp_path / "k.so")
    ws = open_server_env()
    with pytest.raises(ValueError, match="outside"):  # confined while the workspace is open
        pytvm.runtime.load_module(str(lib))
    ws.close()
    pytvm.runtime.load_module(str(lib))
    ws = open_server_env()
    del ws  # TVM's test_rpc_echo drops what _server_env returns and loads modules later
    pytvm.runtime.load_module(str(lib))
