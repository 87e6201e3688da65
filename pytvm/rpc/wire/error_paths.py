"""Error text sent to a peer names files relative to the package, not by this machine's paths.

A traceback frame ``File "/opt/env/lib/python3.11/site-packages/pytvm/rpc/wire/channel.py"``
goes out as ``File "pytvm/rpc/wire/channel.py"``; the same for other installed packages
(``numpy/...``), the standard library (``json/decoder.py``) and this package's source tree. A
session's workspace is added as a root while it lives, so a file in it is named as the client
named it.

Examples
--------
>>> from pathlib import Path
>>> pkg = Path(__file__).absolute().parents[2]
>>> relative_paths(f'File "{pkg}/rpc/wire/channel.py", line 1')
'File "pytvm/rpc/wire/channel.py", line 1'
"""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
import threading
from pathlib import Path

__all__ = ["add_path_root", "relative_paths", "remove_path_root"]


def _spellings(path: str) -> set[str]:
    """The path as written and with links resolved, each ending in one separator."""
    written = os.path.abspath(path)  # noqa: PTH100 - the unresolved spelling
    return {written.rstrip(os.sep) + os.sep, os.path.realpath(path) + os.sep}


class _PathRoots:
    """The roots to replace and the compiled pattern that finds them (rebuilt after a change)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roots: dict[str, str] = {}  # prefix ending in a separator -> its replacement
        self._pattern: re.Pattern[str] | None = None

    def add(self, prefix: str, replacement: str) -> None:
        """Replace ``prefix/`` in either spelling by ``replacement``."""
        with self._lock:
            for spelling in _spellings(prefix):
                if spelling != os.sep:
                    self._roots[spelling] = replacement
            self._pattern = None

    def remove(self, prefix: str) -> None:
        """Forget both spellings of ``prefix``."""
        with self._lock:
            for spelling in _spellings(prefix):
                self._roots.pop(spelling, None)
            self._pattern = None

    def replace(self, text: str) -> str:
        """``text`` with every root replaced (longest roots first)."""
        pattern = self._pattern
        if pattern is None:
            with self._lock:
                ordered = sorted(self._roots, key=len, reverse=True)
                pattern = self._pattern = re.compile("|".join(map(re.escape, ordered)) or r"(?!)")
        roots = self._roots
        return pattern.sub(lambda m: roots.get(m.group(0), m.group(0)), text)


_ROOTS = _PathRoots()


def add_path_root(prefix: str, replacement: str = "") -> None:
    """Replace ``prefix/`` (either spelling, see above) by ``replacement`` in outgoing errors."""
    _ROOTS.add(prefix, replacement)


def remove_path_root(prefix: str) -> None:
    """Forget a root added by :func:`add_path_root`."""
    _ROOTS.remove(prefix)


def relative_paths(text: str) -> str:
    """``text`` with every known root replaced (longest roots first)."""
    return _ROOTS.replace(text)


def _default_roots() -> None:
    package = Path(__file__).absolute().parents[2]  # pytvm/rpc/wire/error_paths.py -> pytvm
    add_path_root(str(package), package.name + os.sep)
    places = set(site.getsitepackages()) | {site.getusersitepackages()}
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        places.add(sysconfig.get_paths()[key])
    places.update(p for p in sys.path if p and Path(p).is_dir() and p != os.sep)
    for place in places:
        add_path_root(place)


_default_roots()
