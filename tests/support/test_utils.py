"""``tempdir`` and its helpers (TVM's ``tvm.support.utils``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytvm.support import utils


def test_tempdir_holds_files_and_is_removed() -> None:
    temp = utils.tempdir()
    path = Path(temp.relpath("a.txt"))
    path.write_text("x")
    assert temp.listdir() == ["a.txt"]
    assert temp / "a.txt" == path
    folder = temp.path
    temp.remove()
    assert not folder.exists()
    temp.remove()  # idempotent


def test_tempdir_as_context_and_at_a_custom_path(tmp_path: Path) -> None:
    with utils.tempdir(custom_path=str(tmp_path / "mine")) as temp:
        assert temp.path == tmp_path / "mine"
        assert temp.path.is_dir()
    assert not (tmp_path / "mine").exists()
    with pytest.raises(TypeError, match=r"must supply str or pathlib\.Path"):
        _ = utils.tempdir() / 3  # type: ignore[operator]


def test_keep_for_debug_keeps_the_directory() -> None:
    temp = utils.tempdir(keep_for_debug=True)
    folder = temp.path
    temp.remove()
    assert folder.is_dir()
    assert "tvm-debug-mode-tempdirs" in str(folder)
    os.rmdir(folder)  # noqa: PTH106


def test_file_lock_source_path_and_which(tmp_path: Path) -> None:
    lock = utils.filelock(tmp_path / "lock")
    lock.release()
    lock.release()
    assert utils.is_source_path("x.c")
    assert not utils.is_source_path("int main() {}\n")
    assert not utils.is_source_path("noext")
    assert utils.which("sh") is not None
    assert utils.which("no-such-program-here") is None
