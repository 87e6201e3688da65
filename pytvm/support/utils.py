"""Temporary directories, file locks and path look-ups (TVM's ``tvm.support.utils``).

The module keeps TVM's path and name, so ``from tvm.support import utils`` code runs unchanged.

Examples
--------
>>> from pytvm.support import utils
>>> temp = utils.tempdir()
>>> path = temp.relpath("a.txt")
>>> with open(path, "w") as f:
...     _ = f.write("x")
>>> temp.listdir()
['a.txt']
>>> temp.remove()
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import fcntl
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, ClassVar

from ..ffi.errors import TVMTypeError

__all__ = ["FileLock", "TempDirectory", "filelock", "is_source_path", "tempdir", "which"]


class TempDirectory:
    """A temporary directory removed by :meth:`remove`, on garbage collection or at exit.

    ``custom_path`` names the directory to create (it must not exist); ``keep_for_debug`` keeps
    it past exit, under ``<tmp>/tvm-debug-mode-tempdirs/<start time>/<n>``
    (default: :meth:`set_keep_for_debug`'s setting).
    """

    _KEEP_FOR_DEBUG: ClassVar[bool] = False
    _LOCK: ClassVar[threading.Lock] = threading.Lock()
    _NUM_CREATED: ClassVar[int] = 0
    _DEBUG_PARENT: ClassVar[str | None] = None
    #: Directories to remove at exit (those not kept for debugging).
    TEMPDIRS: ClassVar[set[str]] = set()

    def __init__(self, custom_path: str | None = None, keep_for_debug: bool | None = None) -> None:
        self._keep = self._KEEP_FOR_DEBUG if keep_for_debug is None else keep_for_debug
        if custom_path:
            Path(custom_path).mkdir()
            self.temp_dir: str | None = custom_path
        elif self._keep:
            self.temp_dir = f"{self._debug_parent()}/{self._next_number():05d}"
            Path(self.temp_dir).mkdir()
        else:
            self.temp_dir = tempfile.mkdtemp()
        if not self._keep:
            self.TEMPDIRS.add(self.temp_dir)

    @classmethod
    def _next_number(cls) -> int:
        with cls._LOCK:
            number = cls._NUM_CREATED
            cls._NUM_CREATED += 1
        return number

    @classmethod
    def _debug_parent(cls) -> str:
        with cls._LOCK:
            if cls._DEBUG_PARENT is None:
                parents = Path(tempfile.gettempdir()) / "tvm-debug-mode-tempdirs"
                parents.mkdir(exist_ok=True)
                stamp = datetime.datetime.now().strftime("%Y-%m-%dT%H-%M-%S___")
                cls._DEBUG_PARENT = tempfile.mkdtemp(prefix=stamp, dir=parents)
            return cls._DEBUG_PARENT

    @classmethod
    def remove_tempdirs(cls) -> None:
        """Remove every directory not kept for debugging (runs at exit)."""
        for path in list(cls.TEMPDIRS):
            shutil.rmtree(path, ignore_errors=True)
        cls.TEMPDIRS.clear()

    @classmethod
    @contextlib.contextmanager
    def set_keep_for_debug(cls, set_to: bool = True) -> Iterator[None]:
        """Within the block, keep the directories created past program exit."""
        old = cls._KEEP_FOR_DEBUG
        try:
            cls._KEEP_FOR_DEBUG = set_to
            yield
        finally:
            cls._KEEP_FOR_DEBUG = old

    def remove(self) -> None:
        """Remove the directory (unless it is kept for debugging); idempotent."""
        if self.temp_dir and not self._keep:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.TEMPDIRS.discard(self.temp_dir)
        self.temp_dir = None

    @property
    def path(self) -> Path:
        """The directory as a ``pathlib.Path``."""
        if self.temp_dir is None:
            raise TVMTypeError("TempDirectory.path: the directory was removed")
        return Path(self.temp_dir)

    def __truediv__(self, other: str | os.PathLike[str]) -> Path:
        if not isinstance(other, str | os.PathLike):
            raise TVMTypeError(
                f"TempDirectory / operator: must supply str or pathlib.Path; got {other!r}"
            )
        return self.path / other

    def __enter__(self) -> TempDirectory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __del__(self) -> None:
        if getattr(self, "temp_dir", None) is not None:
            self.remove()

    def relpath(self, name: str) -> str:
        """The path of ``name`` inside the directory."""
        return str(self.path / name)

    def listdir(self) -> list[str]:
        """The names in the directory."""
        return [p.name for p in self.path.iterdir()]


atexit.register(TempDirectory.remove_tempdirs)


def tempdir(custom_path: str | None = None, keep_for_debug: bool | None = None) -> TempDirectory:
    """A new :class:`TempDirectory` (see there for the parameters)."""
    return TempDirectory(custom_path=custom_path, keep_for_debug=keep_for_debug)


class FileLock:
    """An exclusive ``fcntl`` lock on the file ``path``, held until :meth:`release`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.lock_file: IO[str] | None = Path(path).open("w")
        fcntl.lockf(self.lock_file, fcntl.LOCK_EX)

    def release(self) -> None:
        """Release the lock and close the file; idempotent."""
        if self.lock_file is not None:
            fcntl.lockf(self.lock_file, fcntl.LOCK_UN)
            self.lock_file.close()
            self.lock_file = None


def filelock(path: str | os.PathLike[str]) -> FileLock:
    """Lock the file ``path`` (blocking until it is free); release with ``.release()``."""
    return FileLock(path)


def is_source_path(path: str) -> bool:
    r"""Whether ``path`` may name a source file: it exists, or it is one line with an extension.

    Examples
    --------
    >>> is_source_path("kernel.c"), is_source_path("int main() {}\\n")
    (True, False)
    """
    if Path(path).exists():
        return True
    if "\n" in path:
        return False
    _, dot, suffix = path.rpartition(".")
    return bool(dot) and suffix.strip() == suffix


def which(exec_name: str) -> str | None:
    """The full path of the executable ``exec_name`` (``/bin`` and ``$PATH``), or None."""
    for folder in ["", "/bin", *os.environ.get("PATH", "").split(os.pathsep)]:
        full = os.path.join(folder, exec_name)  # noqa: PTH118 - "" keeps a relative name
        if Path(full).is_file() and os.access(full, os.X_OK):
            return full
    return None
