"""A session's workspace: files opened, written, listed, removed and loaded beneath one directory.

Every operation starts from the workspace's directory descriptor and walks the client's path one
component at a time: directories are opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to the
descriptor of the one before, the last component with ``O_NOFOLLOW`` (or ``unlink``/``rmtree``
with ``dir_fd``). A symbolic link met on the way is read with ``readlinkat`` and its target walked
the same way from the directory holding it, so links that stay inside the workspace work and no
link -- even one swapped in between two steps -- leads outside: there is no check-then-use gap.
An absolute link target is followed only when it names a place inside the workspace.

A shared object is loaded through ``/proc/self/fd/<fd>`` of the descriptor that was checked, so
the file loaded is the one opened beneath the workspace. The descriptor stays open while the
process lives: libraries are never unloaded, and the dynamic loader recognises a library it has
already loaded by that name, so the number must not be reused.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ...ffi.errors import SharedObjectError, TVMOSError, TVMValueError
from ...runtime.module import Module

__all__ = ["Workspace", "resolve_path"]

_T = TypeVar("_T")
_MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
_LOADED_FDS: list[int] = []  # descriptors of loaded files (see the module docstring)
_LOADED_LOCK = threading.Lock()


def _check_name(path: object) -> str:
    if not isinstance(path, str):
        raise TVMValueError(f"path must be a str relative to the workspace, got {path!r}")
    if "\0" in path:
        raise TVMValueError(f"path {path!r} contains a NUL byte")
    return path


def _relative(root: str, path: str) -> str:
    """``path`` relative to ``root``; an absolute path must lie inside it."""
    if not Path(path).is_absolute():
        return path
    if path == root or path.startswith(root + os.sep):
        return path[len(root) :].lstrip(os.sep)
    raise TVMValueError(
        f"path {path!r} is absolute and outside the session workspace; RPC file operations "
        "take paths relative to the workspace"
    )


def resolve_path(workspace: str, path: str) -> str:
    """The absolute name of ``path`` inside ``workspace`` (TVM's ``workpath``), by its text only.

    ``..`` may not climb above the workspace and an absolute path must lie inside it. Symbolic
    links are not looked at: the name is only ever used through :class:`Workspace`, which
    resolves it beneath the workspace at the moment of use.

    Examples
    --------
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> resolve_path(root, "a/b.txt") == os.path.join(os.path.realpath(root), "a", "b.txt")
    True
    >>> try:
    ...     resolve_path(root, "../x")
    ... except ValueError as err:
    ...     print(type(err).__name__)
    TVMValueError
    """
    root = os.path.realpath(workspace)
    rel = _relative(root, _check_name(path))
    lexical = os.path.normpath(Path(root) / rel)
    if not (lexical == root or lexical.startswith(root + os.sep)):
        raise TVMValueError(
            f"path {path!r} climbs out of the session workspace with '..'; use a path "
            "relative to the workspace"
        )
    return lexical


class Workspace:
    """A directory that file operations never leave (see the module docstring).

    Parameters
    ----------
    path : str
        An existing directory.
    owned : bool
        Whether :meth:`close` removes the directory and everything in it.

    Examples
    --------
    >>> ws = Workspace.create()
    >>> ws.write("d/f.txt", b"hi")
    >>> ws.read("d/f.txt"), ws.listdir("d")
    (b'hi', ['f.txt'])
    >>> ws.close()
    """

    def __init__(self, path: str, owned: bool = False) -> None:
        self.path = os.path.realpath(path)
        try:
            self._fd = os.open(self.path, _DIR_FLAGS)
        except OSError as err:
            raise TVMOSError(f"workspace {path!r} is not a directory: {err.strerror}") from None
        self.owned = owned

    @classmethod
    def create(cls, prefix: str = "pytvm-ws-") -> Workspace:
        """A fresh private temporary directory, removed by :meth:`close`."""
        return cls(tempfile.mkdtemp(prefix=prefix), owned=True)

    def close(self) -> None:
        """Release the directory descriptor (and remove the directory if owned); idempotent."""
        if self._fd < 0:
            return
        os.close(self._fd)
        self._fd = -1
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            try:
                self.close()
            except Exception:  # interpreter shutdown: modules already torn down
                pass

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def relpath(self, path: str) -> str:
        """The absolute name of ``path`` in the workspace (see :func:`resolve_path`)."""
        return resolve_path(self.path, path)

    # ------------------------------------------------------------------ operations

    def read(self, path: str) -> bytes:
        """The content of the regular file ``path``."""
        fd = self.open_file(path, "download")
        with os.fdopen(fd, "rb") as src:
            return src.read()

    def write(self, path: str, data: bytes, mode: int = 0o600, exclusive: bool = False) -> None:
        """Create or replace the file ``path`` (parent directories made as needed)."""
        flags = _WRITE_FLAGS | (os.O_EXCL if exclusive else 0)

        def create(dirfd: int, name: str) -> int:
            if name == ".":
                raise TVMValueError(f"upload: {path!r} names a directory, not a file")
            return os.open(name, flags, mode, dir_fd=dirfd)

        fd = self._at(path, create, "upload", create_dirs=True)
        with os.fdopen(fd, "wb") as out:
            out.write(memoryview(data))

    def remove(self, path: str) -> None:
        """Delete the file, link or directory tree ``path`` (a link itself, never its target)."""

        def delete(dirfd: int, name: str) -> None:
            if name == ".":
                raise TVMValueError(
                    f"remove: {path!r} names the session workspace itself or ends in '.'/'..'; "
                    "name the entry to remove"
                )
            if stat.S_ISDIR(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode):
                shutil.rmtree(name, dir_fd=dirfd)  # descriptor-based, links are not followed
            else:
                os.unlink(name, dir_fd=dirfd)

        self._at(path, delete, "remove", follow_last=False)

    def listdir(self, path: str) -> list[str]:
        """Sorted names in the directory ``path``."""

        def names(dirfd: int, name: str) -> list[str]:
            fd = os.open(name, _DIR_FLAGS, dir_fd=dirfd)
            try:
                return sorted(os.listdir(fd))  # noqa: PTH208 - lists an open directory fd
            finally:
                os.close(fd)

        return self._at(path, names, "listdir")

    def open_file(self, path: str, what: str = "open") -> int:
        """A read-only descriptor of the regular file ``path`` (the caller closes it)."""

        def open_regular(dirfd: int, name: str) -> int:
            fd = os.open(name, _READ_FLAGS, dir_fd=dirfd)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise TVMOSError(f"{what}: {path!r} is not a regular file in the session workspace")
            return fd

        return self._at(path, open_regular, what)

    def load_module(self, path: str, loader: Callable[[str], Any]) -> Module:
        """Load ``path`` with ``loader`` (a ``runtime.module.loadfile_*`` function) through the
        descriptor opened here, so the file loaded is the one found inside the workspace.
        """
        fd = self.open_file(path, "load_module")
        with _LOADED_LOCK:
            _LOADED_FDS.append(fd)
        try:
            module = loader(f"/proc/self/fd/{fd}")
        except SharedObjectError as err:  # its message already says "cannot load <path>: ..."
            detail = str(err).replace(f"/proc/self/fd/{fd}", repr(path))
            raise SharedObjectError(f"load_module: {detail}") from None
        except OSError as err:
            detail = str(err).replace(f"/proc/self/fd/{fd}", path)
            raise TVMOSError(f"load_module: cannot load {path!r}: {detail}") from None
        if not isinstance(module, Module):
            raise TVMValueError(f"load_module: the loader returned {type(module).__name__}")
        return module

    # ------------------------------------------------------------------ the walk

    def _at(  # noqa: PLR0912, PLR0915 - one fd-relative walk; every step shares its state
        self,
        path: str,
        op: Callable[[int, str], _T],
        what: str,
        *,
        follow_last: bool = True,
        create_dirs: bool = False,
    ) -> _T:
        """Walk ``path`` beneath the workspace and run ``op(dir_fd, last_name)`` on its last
        component (``"."`` when the path names a directory by ``.``/``..`` or nothing).
        """
        if self._fd < 0:
            raise TVMOSError(f"{what}: the session workspace is closed")
        pending = deque(_relative(self.path, _check_name(path)).split("/"))
        stack = [os.dup(self._fd)]
        links = made = 0

        def follow(dirfd: int, name: str) -> None:
            nonlocal links
            try:
                target = os.readlink(name, dir_fd=dirfd)
            except OSError as err:
                if err.errno == errno.EINVAL:
                    raise TVMOSError(f"{what}: {name!r} in {path!r} is not a directory") from None
                raise
            links += 1
            if links > _MAX_LINKS:
                raise TVMOSError(f"{what}: {path!r} has too many levels of symbolic links")
            if Path(target).is_absolute():
                if not (target == self.path or target.startswith(self.path + os.sep)):
                    raise _escape(path, what, through_link=True)
                while len(stack) > 1:
                    os.close(stack.pop())
                target = target[len(self.path) :].lstrip(os.sep)
            pending.extendleft(reversed(target.split("/")))

        try:
            while pending:
                name = pending.popleft()
                if name in ("", "."):
                    continue
                if name == "..":
                    if len(stack) == 1:
                        raise _escape(path, what, through_link=links > 0)
                    os.close(stack.pop())
                    continue
                if not pending:  # the last component
                    try:
                        return op(stack[-1], name)
                    except OSError as err:
                        if not follow_last or err.errno not in (errno.ELOOP, errno.ENOTDIR):
                            raise _os_error(path, what, err) from None
                    follow(stack[-1], name)
                    continue
                try:
                    stack.append(os.open(name, _DIR_FLAGS, dir_fd=stack[-1]))
                except FileNotFoundError:
                    if not create_dirs:
                        raise _os_error(path, what, FileNotFoundError(errno.ENOENT, "")) from None
                    try:
                        os.mkdir(name, 0o700, dir_fd=stack[-1])
                    except FileExistsError:
                        pass
                    made += 1  # bounds retries against a concurrent remover
                    if made > _MAX_LINKS:
                        raise TVMOSError(f"{what}: cannot create the directories of {path!r}")
                    pending.appendleft(name)
                except OSError as err:
                    if err.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise _os_error(path, what, err) from None
                    follow(stack[-1], name)
            try:
                return op(stack[-1], ".")
            except OSError as err:
                raise _os_error(path, what, err) from None
        finally:
            for fd in stack:
                os.close(fd)


def _escape(path: str, what: str, through_link: bool) -> TVMValueError:
    if through_link:
        return TVMValueError(
            f"{what}: path {path!r} resolves through a symbolic link outside the session "
            "workspace; links may only point inside it"
        )
    return TVMValueError(
        f"{what}: path {path!r} climbs out of the session workspace with '..'; use a path "
        "relative to the workspace"
    )


def _os_error(path: str, what: str, err: OSError) -> TVMOSError:
    """An OS error of a workspace operation, naming the client's path (never a server path)."""
    if isinstance(err, TVMOSError):
        return err
    if err.errno == errno.ENOENT:
        return TVMOSError(f"{what}: no file {path!r} in the session workspace")
    reason = err.strerror or os.strerror(err.errno or 0)
    return TVMOSError(f"{what}: {path!r} in the session workspace: {reason}")
