"""Tar archives of a module's object files (TVM's ``tvm.support.tar``).

``export_library("lib.tar")`` writes the module's code (``lib0.o``, or ``lib0.c`` for a module
built from C) into a gzip-compressed tar, as TVM's ``tar -czf`` does; ``untar`` unpacks one,
and ``link_tar`` links its files into a shared object (``load_module("lib.tar")`` and the RPC
server's ``download_linked_module`` do).

An archive may hold only regular files at its top level: ``untar`` refuses links, devices,
folders and names with a path in them (``../x``, ``/etc/x``, ``d/x``) before it writes anything,
so unpacking an archive a peer sent never writes outside ``directory`` or follows a link.

Examples
--------
>>> import os, tempfile
>>> from pytvm.support import tar
>>> work = tempfile.mkdtemp()
>>> with open(os.path.join(work, "lib0.o"), "wb") as f:
...     _ = f.write(b"object code")
>>> tar.tar(os.path.join(work, "lib.tar"), [os.path.join(work, "lib0.o")])
>>> out = tempfile.mkdtemp()
>>> tar.untar(os.path.join(work, "lib.tar"), out)
>>> os.listdir(out)
['lib0.o']
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..ffi.errors import TVMOSError, TVMValueError
from ..ffi.libinfo import include_dir
from .cc import create_shared

__all__ = ["link_tar", "normalize_file_list_by_unpacking_tars", "tar", "untar"]

#: An archive to read: its path, or a binary file object.
TarSource = str | os.PathLike[str] | IO[bytes]


def tar(output: str | os.PathLike[str], files: Sequence[str | os.PathLike[str]]) -> None:
    """Write the gzip-compressed tar ``output`` holding ``files`` under their base names.

    Raises ``TVMValueError`` when two files share a base name.
    """
    names: dict[str, str] = {}
    for given in files:
        path = os.fspath(given)
        base = Path(path).name
        if base in names:
            raise TVMValueError(
                f"tar: duplicate file name {base!r} ({names[base]!r} and {path!r}); an archive "
                "holds files by base name"
            )
        names[base] = path
    with tarfile.open(os.fspath(output), "w:gz", dereference=True) as archive:
        for base, path in names.items():
            archive.add(path, arcname=base, recursive=False)


# The format export_library reads off a compile function (TVM's attribute).
setattr(tar, "output_format", "tar")


def untar(tar_file: TarSource, directory: str | os.PathLike[str]) -> None:
    """Unpack the regular files of ``tar_file`` (a path or a binary file object; gzip-compressed
    or not) into ``directory``.

    Raises ``TVMValueError`` naming the first member that is not a regular file at the top level
    of the archive (see the module docstring), nothing written then; ``TVMOSError`` when a file
    of that name exists in ``directory`` already (never written through).
    """
    with _open(tar_file) as archive:
        members = archive.getmembers()
        for member in members:
            _check_member(member, tar_file)
        for member in members:
            source = archive.extractfile(member)
            assert source is not None  # a regular file, checked above
            target = Path(directory) / member.name
            try:
                out = open(target, "xb")  # noqa: PTH123 - never through a link
            except FileExistsError:
                raise TVMOSError(
                    f"untar: {str(target)!r} exists already (a file or link); unpack into an "
                    "empty folder"
                ) from None
            with source, out:
                while chunk := source.read(1 << 20):
                    out.write(chunk)


def _open(tar_file: TarSource) -> tarfile.TarFile:
    if isinstance(tar_file, str | os.PathLike):
        return tarfile.open(os.fspath(tar_file), "r:*")
    return tarfile.open(fileobj=tar_file, mode="r:*")


def _check_member(member: tarfile.TarInfo, tar_file: TarSource) -> None:
    tar_file = _label(tar_file)
    name = member.name
    if not member.isreg():
        raise TVMValueError(
            f"untar: {tar_file} holds {name!r}, which is not a regular file "
            "(a link, folder or device); an archive of object files holds files only"
        )
    if name in ("", ".", "..") or "/" in name or "\\" in name:
        raise TVMValueError(
            f"untar: {tar_file} holds {name!r}, a name with a path in it; an "
            "archive of object files holds files by base name"
        )


def normalize_file_list_by_unpacking_tars(temp: Any, file_list: Sequence[str]) -> list[str]:
    """``file_list`` with each ``.tar`` replaced by the files it holds, unpacked into a fresh
    folder ``temp<k>`` of the temporary directory ``temp`` (a ``support.utils.TempDirectory``).
    """
    out: list[str] = []
    count = 0
    for path in file_list:
        if not os.fspath(path).endswith(".tar"):
            out.append(path)
            continue
        folder = Path(temp.relpath(f"temp{count}"))
        count += 1
        folder.mkdir()
        untar(path, folder)
        out += sorted(str(entry) for entry in folder.iterdir())
    return out


def _label(tar_file: TarSource) -> str:
    if isinstance(tar_file, str | os.PathLike):
        return repr(os.fspath(tar_file))
    return repr(getattr(tar_file, "name", "the archive"))


def link_tar(
    tar_file: TarSource,
    output: str | os.PathLike[str],
    options: Sequence[str] | None = None,
) -> None:
    """Link the files of ``tar_file`` (a path or a binary file object) into the shared object
    ``output`` with the system C compiler, as TVM links a ``.tar`` it loads: objects as they
    are, C sources compiled against pytvm's headers at ``-O2``; ``options`` go to the compiler.
    Raises ``TVMError`` with the compiler's output when linking fails, and when there is no C
    compiler.
    """
    with tempfile.TemporaryDirectory(prefix="pytvm-untar-") as folder:
        untar(tar_file, folder)
        files = sorted(str(entry) for entry in Path(folder).iterdir())
        if not files:
            raise TVMValueError(f"link_tar: {_label(tar_file)} is an empty archive")
        flags = list(options or ())
        if any(f.endswith(".c") for f in files):
            flags += ["-O2", f"-I{include_dir()}"]
        create_shared(output, [*files, "-lm"], options=flags)
