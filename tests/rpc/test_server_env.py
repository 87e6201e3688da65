from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytvm
from pytvm.ffi.errors import TVMOSError, TVMValueError
from pytvm.rpc.server_env import register_server_env, resolve_path

_NAMES = [
    "tvm.rpc.server.workpath",
    "tvm.rpc.server.upload",
    "tvm.rpc.server.download",
    "tvm.rpc.server.remove",
    "tvm.rpc.server.listdir",
    "tvm.rpc.server.load_module",
    "rpc.test.echo",
    "rpc.test.addone",
    "rpc.test.add_to_lhs",
    "rpc.test.strcat",
    "rpc.test.except",
    "rpc.test.runtime_str_concat",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A registered server env on a fresh dir; the previous registrations come back after."""
    saved = {name: pytvm.get_global_func(name, allow_missing=True) for name in _NAMES}
    root = tmp_path / "ws"
    root.mkdir()
    register_server_env(str(root))
    yield root
    for name, func in saved.items():
        if func is None:
            pytvm.remove_global_func(name)
        else:
            pytvm.register_func(name, func, override=True)


def call(name: str, *args: object) -> object:
    return pytvm.get_global_func(f"tvm.rpc.server.{name}")(*args)


def test_upload_download_listdir_remove_round_trip(workspace: Path) -> None:
    call("upload", "f.txt", b"hello")
    call("upload", "nested/deeper/g.bin", bytearray(b"\x00\x01"))
    assert (workspace / "f.txt").read_bytes() == b"hello"
    assert call("download", "nested/deeper/g.bin") == b"\x00\x01"
    assert call("listdir", "") == "f.txt,nested"
    assert call("listdir", "nested") == "deeper"
    assert call("listdir", "nested/deeper").split(",") == ["g.bin"]
    call("remove", "f.txt")
    call("remove", "nested")
    assert call("listdir", ".") == ""


def test_workpath_is_absolute_inside_workspace(workspace: Path) -> None:
    path = call("workpath", "a/b.o")
    assert path == os.path.join(os.path.realpath(workspace), "a", "b.o")
    assert call("workpath", "a/../c") == os.path.join(os.path.realpath(workspace), "c")


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
    assert not os.path.exists(outside)


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
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    # Removing the link itself is fine and leaves its target alone.
    call("remove", "filelink")
    assert (outside / "secret.txt").exists()
    assert "filelink" not in call("listdir", "").split(",")


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
    with pytest.raises(TVMValueError, match="workspace itself"):
        call("upload", ".", b"x")


def test_load_module_resolves_inside_workspace(workspace: Path) -> None:
    with pytest.raises(TVMOSError, match="no such file"):
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
