"""``pytvm.support.tar``: TVM's archives of object files, unpacked only as plain top-level files,
and linked into a shared object.
"""

from __future__ import annotations

import ctypes
import io
import tarfile
from pathlib import Path

import pytest

from pytvm.ffi.errors import TVMOSError, TVMValueError
from pytvm.support import tar, utils


def _archive(path: Path, members: list[tarfile.TarInfo], data: bytes = b"x") -> None:
    with tarfile.open(path, "w") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(data) if member.isreg() else None)


def _file(name: str, size: int = 1) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


def test_tar_and_untar_round_trip_by_base_name(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "lib0.o").write_bytes(b"object")
    (tmp_path / "lib1.c").write_text("int f(void) { return 1; }\n")
    tar.tar(tmp_path / "lib.tar", [tmp_path / "d" / "lib0.o", str(tmp_path / "lib1.c")])
    assert tarfile.open(tmp_path / "lib.tar", "r:gz").getnames() == ["lib0.o", "lib1.c"]
    out = tmp_path / "out"
    out.mkdir()
    tar.untar(tmp_path / "lib.tar", out)
    assert sorted(p.name for p in out.iterdir()) == ["lib0.o", "lib1.c"]
    assert (out / "lib0.o").read_bytes() == b"object"
    assert tar.tar.output_format == "tar"  # type: ignore[attr-defined]


def test_tar_refuses_two_files_of_one_base_name(tmp_path: Path) -> None:
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "lib0.o").write_bytes(b"o")
    with pytest.raises(TVMValueError, match=r"duplicate file name 'lib0\.o'"):
        tar.tar(tmp_path / "x.tar", [tmp_path / "a" / "lib0.o", tmp_path / "b" / "lib0.o"])


@pytest.mark.parametrize(
    ("member", "refusal"),
    [
        (_file("../evil.o"), "a name with a path in it"),
        (_file("/etc/evil.o"), "a name with a path in it"),
        (_file("d/lib0.o"), "a name with a path in it"),
        (_file(".."), "a name with a path in it"),
    ],
)
def test_untar_refuses_names_with_a_path(
    tmp_path: Path, member: tarfile.TarInfo, refusal: str
) -> None:
    _archive(tmp_path / "bad.tar", [_file("lib0.o"), member])
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(TVMValueError, match=refusal):
        tar.untar(tmp_path / "bad.tar", out)
    assert list(out.iterdir()) == []  # checked before anything is written


@pytest.mark.parametrize(
    "kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE]
)
def test_untar_refuses_links_folders_and_devices(tmp_path: Path, kind: bytes) -> None:
    member = tarfile.TarInfo("lib1.o")
    member.type = kind
    member.linkname = "/etc/passwd"
    _archive(tmp_path / "bad.tar", [member])
    with pytest.raises(TVMValueError, match="not a regular file"):
        tar.untar(tmp_path / "bad.tar", tmp_path)
    assert not (tmp_path / "lib1.o").exists()


def test_untar_never_writes_through_an_existing_link(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "lib0.o").symlink_to(target)
    _archive(tmp_path / "lib.tar", [_file("lib0.o")])
    with pytest.raises(TVMOSError, match="exists already"):
        tar.untar(tmp_path / "lib.tar", out)
    assert target.read_bytes() == b"keep"


def test_normalize_file_list_unpacks_tars(tmp_path: Path) -> None:
    (tmp_path / "lib0.o").write_bytes(b"o")
    tar.tar(tmp_path / "lib.tar", [tmp_path / "lib0.o"])
    temp = utils.tempdir()
    files = tar.normalize_file_list_by_unpacking_tars(temp, [str(tmp_path / "lib.tar"), "other.c"])
    assert [Path(f).name for f in files] == ["lib0.o", "other.c"]
    assert Path(files[0]).parent == Path(temp.relpath("temp0"))


@pytest.mark.needs_cc
def test_link_tar_compiles_sources_and_links_objects(tmp_path: Path) -> None:
    (tmp_path / "lib0.c").write_text(
        '#include "pytvm/c_runtime_api.h"\nint seven(void) { return 7; }\n'
    )
    tar.tar(tmp_path / "lib.tar", [tmp_path / "lib0.c"])
    tar.link_tar(tmp_path / "lib.tar", tmp_path / "lib.so")  # pytvm's headers found
    assert ctypes.CDLL(str(tmp_path / "lib.so")).seven() == 7
    with (tmp_path / "lib.tar").open("rb") as f:  # from a file object too
        tar.link_tar(f, tmp_path / "again.so")
    assert (tmp_path / "again.so").is_file()


def test_link_tar_refuses_an_empty_archive(tmp_path: Path) -> None:
    _archive(tmp_path / "empty.tar", [])
    with pytest.raises(TVMValueError, match="is an empty archive"):
        tar.link_tar(tmp_path / "empty.tar", tmp_path / "x.so")
