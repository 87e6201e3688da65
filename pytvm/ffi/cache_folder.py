"""Cache folders pytvm trusts: made private (0700), owned by this user, reached through no link.

What pytvm loads from its cache runs in the process, so the cache must be a place only its user
can write, as ssh demands of ``~/.ssh`` and pip of its cache. :func:`trusted_folder` walks from
the cache root down to a folder, one component at a time with ``O_NOFOLLOW | O_DIRECTORY``
relative to the folder above: it creates what is missing with mode 0700 (set explicitly, so the
umask does not matter) and refuses, with :class:`TVMPermissionError`, a folder that is a
symbolic link, is owned by another user or is writable by group or others.
:func:`open_trusted_file` opens a file inside such a folder the same way (``O_NOFOLLOW``) and
applies the same rules to it. Folders above the cache root (``~/.cache``) are not checked.

Once a folder is trusted, nobody but its owner (and root) can replace what is in it, so a file
that was checked and then loaded by its path is the file that was checked.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as tmp:
...     root = Path(tmp) / "pytvm"
...     folder = trusted_folder(root, root / "kernels" / "ab")
...     print(folder.relative_to(tmp), oct(folder.stat().st_mode & 0o777))
pytvm/kernels/ab 0o700
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
from pathlib import Path

from .errors import TVMOSError, TVMPermissionError

__all__ = ["DEFAULT_REMEDY", "describe_owner", "open_trusted_file", "trusted_folder"]

#: How to get out of a refusal when the cache is the default one.
DEFAULT_REMEDY = "remove it or set XDG_CACHE_HOME to a folder of your own"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_FOLDER_MODE = 0o700
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


def describe_owner(info: os.stat_result) -> str:
    """``owned by uid 1001 (bob) with mode 0777``."""
    try:
        name = pwd.getpwuid(info.st_uid).pw_name
    except KeyError:
        name = "no such user"
    return f"owned by uid {info.st_uid} ({name}) with mode {stat.S_IMODE(info.st_mode):04o}"


def _check(info: os.stat_result, kind: str, path: Path, remedy: str) -> None:
    if info.st_uid == os.geteuid() and not info.st_mode & _WRITABLE_BY_OTHERS:
        return
    raise TVMPermissionError(
        f"refusing to use the cache {kind} {path}: {describe_owner(info)}; it must be yours and "
        f"not writable by others ({remedy})"
    )


def _refuse_link(name: str, dir_fd: int | None, kind: str, path: Path, remedy: str) -> None:
    """Raise for ``name`` (relative to ``dir_fd``) if it is a link or not a ``kind``."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(name, dir_fd=dir_fd)
        raise TVMPermissionError(
            f"refusing to use the cache {kind} {path}: it is a symbolic link (to {target}), "
            f"and pytvm follows no link inside its cache ({remedy})"
        )
    wanted = stat.S_ISDIR if kind == "folder" else stat.S_ISREG
    if not wanted(info.st_mode):
        raise TVMPermissionError(
            f"refusing to use the cache {kind} {path}: it is not a {kind} "
            f"(mode {info.st_mode:o}) ({remedy})"
        )


def _open_folder(name: str, dir_fd: int | None, path: Path, remedy: str) -> int:
    """Open (creating it 0700 if missing) and check the folder ``name`` relative to ``dir_fd``."""
    created = False
    try:
        os.mkdir(name, _FOLDER_MODE, dir_fd=dir_fd)
        created = True
    except FileExistsError:
        pass
    except OSError as err:
        raise TVMOSError(f"cannot create the cache folder {path}: {err.strerror}") from None
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            _refuse_link(name, dir_fd, "folder", path, remedy)
        raise TVMOSError(f"cannot open the cache folder {path}: {err.strerror}") from None
    try:
        if created:
            os.fchmod(fd, _FOLDER_MODE)
        _check(os.fstat(fd), "folder", path, remedy)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _make_parents(folder: Path) -> None:
    """Create the missing folders of ``folder`` (above a cache root) with mode 0700."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=_FOLDER_MODE)
            path.chmod(_FOLDER_MODE)
        except FileExistsError:
            pass
        except OSError as err:
            raise TVMOSError(f"cannot create the cache folder {path}: {err.strerror}") from None


def trusted_folder(
    root: str | os.PathLike[str],
    folder: str | os.PathLike[str] | None = None,
    remedy: str = DEFAULT_REMEDY,
) -> Path:
    """Create and check each folder from the cache ``root`` down to ``folder`` (default: the
    root itself, which ``folder`` must be inside); returns ``folder``'s path.

    Raises
    ------
    TVMPermissionError
        A folder on the way is a symbolic link, not a folder, owned by another user, or
        writable by group or others; the message names it, its owner and mode, and ``remedy``.
    """
    top = Path(os.path.abspath(root))  # noqa: PTH100 - lexical: the root itself is checked
    below = Path(os.path.abspath(folder)).relative_to(top) if folder is not None else Path()  # noqa: PTH100
    _make_parents(top.parent)
    fd = _open_folder(str(top), None, top, remedy)
    path = top
    try:
        for name in below.parts:
            path = path / name
            child = _open_folder(name, fd, path, remedy)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return path


def open_trusted_file(path: Path, remedy: str = DEFAULT_REMEDY) -> int | None:
    """A read-only descriptor of the file ``path`` in a trusted folder, opened without
    following a link and checked like a folder; None if there is no such file.
    """
    try:
        fd = os.open(path, _FILE_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            _refuse_link(str(path), None, "file", path, remedy)
        raise TVMOSError(f"cannot open the cache file {path}: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _refuse_link(str(path), None, "file", path, remedy)
        _check(info, "file", path, remedy)
    except BaseException:
        os.close(fd)
        raise
    return fd
