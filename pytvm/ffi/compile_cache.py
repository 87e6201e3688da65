"""Files pytvm builds once and keeps (libraries, objects, binaries): stored whole with a checksum,
used only when the checksum verifies.

Every user of pytvm's cache goes through this module. An entry ``<folder>/<name>`` has a
checksum file ``<name>.sha256`` beside it, one line ``<sha256 hex> <size in bytes>``. Writing:
the entry is built in a private temporary folder inside ``<folder>``, its checksum file is
renamed into place, then the entry (each rename is atomic, and a reader that finds a checksum
but no entry simply builds). Reading: the entry and its checksum file are opened without
following links in a folder :func:`~pytvm.ffi.cache_folder.trusted_folder` checked, and the
entry is used only if its size and sha256 match. An entry that does not match (no checksum file,
another size, another hash: a copy cut short, a disk error, a hand edit) is rebuilt, with one
warning on this module's logger (``pytvm.ffi.compile_cache``) naming the path and what was wrong.

Each file is hashed once per process: a verified entry is remembered by its device, inode, size
and change times, so looking it up again only costs a ``stat``.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as tmp:
...     root = Path(tmp) / "pytvm"
...     entry = cached_file(root / "notes" / "hi.txt", lambda f: f.write_text("hi"), root=root)
...     print(entry.read_text(), (root / "notes" / "hi.txt.sha256").read_text().split()[1])
hi 2
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .cache_folder import DEFAULT_REMEDY, open_trusted_file, trusted_folder

__all__ = [
    "CHECKSUM_SUFFIX",
    "cached_bytes",
    "cached_file",
    "lookup_bytes",
    "lookup_file",
    "staging_folder",
    "store_bytes",
    "store_file",
]

CHECKSUM_SUFFIX = ".sha256"
logger = logging.getLogger(__name__)
_CHUNK = 1 << 20
_verified: set[tuple[int, int, int, int, int, str]] = set()
_verified_lock = threading.Lock()


def _checksum_path(path: Path) -> Path:
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def _read_fd(fd: int, size: int) -> bytes:
    chunks = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(_CHUNK, size - offset), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _recorded(path: Path, size: int, remedy: str) -> tuple[str, str]:
    """The digest the checksum file of ``path`` records for an entry of ``size`` bytes, and
    ``""``; or ``""`` and what is wrong (no checksum file, another size).
    """
    name = _checksum_path(path).name
    fd = open_trusted_file(_checksum_path(path), remedy)
    if fd is None:
        return "", f"it has no checksum file {name}"
    try:
        fields = os.pread(fd, 256, 0).decode("ascii", "replace").split()
    finally:
        os.close(fd)
    if len(fields) != len(("digest", "size")) or not fields[1].isdigit():
        return "", f"its checksum file {name} is unreadable"
    if int(fields[1]) != size:
        return "", f"it is {size} bytes, its checksum file says {fields[1]}"
    return fields[0], ""


def _check(path: Path, remedy: str, want_data: bool) -> tuple[str | None, bytes]:
    """``(None, data)`` if the entry verifies (``data``: its bytes if ``want_data``), ``("",
    b"")`` if there is no entry, else ``(what is wrong, b"")``.
    """
    fd = open_trusted_file(path, remedy)
    if fd is None:
        return "", b""
    try:
        info = os.fstat(fd)
        digest, problem = _recorded(path, info.st_size, remedy)
        if problem:
            return problem, b""
        key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest)
        if key in _verified and not want_data:
            return None, b""
        data = _read_fd(fd, info.st_size)
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest:
            return (
                f"its sha256 is {actual[:16]}..., its checksum file says {digest[:16]}...",
                b"",
            )
        with _verified_lock:
            _verified.add(key)
        return None, data
    finally:
        os.close(fd)


def _lookup(path: Path, remedy: str, want_data: bool) -> tuple[bool, bytes]:
    problem, data = _check(path, remedy, want_data)
    if problem:  # a writer may have been between its two renames: look once more
        problem, data = _check(path, remedy, want_data)
    if problem:
        logger.warning("pytvm cache: rebuilding %s: %s", path, problem)
    return problem is None, data


def lookup_file(path: Path, remedy: str = DEFAULT_REMEDY) -> bool:
    """Whether the entry ``path`` (in a trusted folder) exists and verifies; a failing entry is
    reported with a warning (and replaced by the caller's :func:`store_file`).
    """
    return _lookup(path, remedy, want_data=False)[0]


def lookup_bytes(path: Path, remedy: str = DEFAULT_REMEDY) -> bytes | None:
    """The bytes of the entry ``path`` if it exists and verifies (the bytes hashed are the bytes
    returned); None otherwise, with a warning for a failing entry.
    """
    found, data = _lookup(path, remedy, want_data=True)
    return data if found else None


@contextmanager
def staging_folder(path: Path) -> Iterator[Path]:
    """A private temporary folder beside the entry ``path`` to build it in (removed after)."""
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=path.parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def store_file(path: Path, staged: Path, mode: int = 0o700) -> Path:
    """Move the file ``staged`` (built in :func:`staging_folder` of ``path``) into place as the
    entry ``path`` with its checksum file; ``mode`` is set on it whatever the umask.
    """
    data = staged.read_bytes()
    staged.chmod(mode)
    checksum = staged.with_name(staged.name + CHECKSUM_SUFFIX)
    checksum.write_text(f"{hashlib.sha256(data).hexdigest()} {len(data)}\n")
    checksum.chmod(0o600)
    checksum.replace(_checksum_path(path))
    staged.replace(path)  # atomic: a reader sees no entry (and builds) or the whole of it
    return path


def store_bytes(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Store ``data`` as the entry ``path`` (see :func:`store_file`)."""
    with staging_folder(path) as tmp:
        staged = tmp / path.name
        staged.write_bytes(data)
        store_file(path, staged, mode)


def cached_file(
    path: str | os.PathLike[str],
    build: Callable[[Path], object],
    root: str | os.PathLike[str],
    mode: int = 0o700,
    remedy: str = DEFAULT_REMEDY,
) -> Path:
    """The entry ``path`` of the cache folder ``root``: used if it verifies, else made by
    ``build(staged)``, which writes the file ``staged`` (a path in a private folder beside it).
    """
    entry = Path(path)
    trusted_folder(root, entry.parent, remedy)
    if lookup_file(entry, remedy):
        return entry
    with staging_folder(entry) as tmp:
        staged = tmp / entry.name
        build(staged)
        return store_file(entry, staged, mode)


def cached_bytes(
    path: str | os.PathLike[str],
    build: Callable[[], bytes],
    root: str | os.PathLike[str],
    remedy: str = DEFAULT_REMEDY,
) -> bytes:
    """The bytes of the entry ``path`` of the cache folder ``root``, made by ``build()`` and
    stored unless the cache has them.
    """
    entry = Path(path)
    trusted_folder(root, entry.parent, remedy)
    data = lookup_bytes(entry, remedy)
    if data is None:
        data = build()
        store_bytes(entry, data)
    return data
