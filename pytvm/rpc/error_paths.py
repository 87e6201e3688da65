"""Error text sent to a peer names files relative to the package, not by this machine's paths.

A traceback frame ``File "/opt/env/lib/python3.11/site-packages/pytvm/rpc/endpoint.py"`` goes out
as ``File "pytvm/rpc/endpoint.py"``; the same for other installed packages (``numpy/...``), the
standard library (``json/decoder.py``) and this package's source tree. A session's workspace is
added as a root while it lives, so a file in it is named as the client named it.

Examples
--------
>>> import os
>>> pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
>>> relative_paths(f'File "{pkg}/rpc/endpoint.py", line 1')
'File "pytvm/rpc/endpoint.py", line 1'
"""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
import threading

__all__ = ["add_path_root", "relative_paths", "remove_path_root"]

_lock = threading.Lock()
_roots: dict[str, str] = {}  # prefix ending in a separator -> its replacement
_pattern: re.Pattern[str] | None = None


def _spellings(path: str) -> set[str]:
    """The path as written and with links resolved, each ending in one separator."""
    return {os.path.abspath(path).rstrip(os.sep) + os.sep, os.path.realpath(path) + os.sep}


def add_path_root(prefix: str, replacement: str = "") -> None:
    """Replace ``prefix/`` (either spelling, see above) by ``replacement`` in outgoing errors."""
    global _pattern
    with _lock:
        for spelling in _spellings(prefix):
            if spelling != os.sep:
                _roots[spelling] = replacement
        _pattern = None


def remove_path_root(prefix: str) -> None:
    """Forget a root added by :func:`add_path_root`."""
    global _pattern
    with _lock:
        for spelling in _spellings(prefix):
            _roots.pop(spelling, None)
        _pattern = None


def relative_paths(text: str) -> str:
    """``text`` with every known root replaced (longest roots first)."""
    global _pattern
    pattern = _pattern
    if pattern is None:
        with _lock:
            ordered = sorted(_roots, key=len, reverse=True)
            pattern = _pattern = re.compile("|".join(map(re.escape, ordered)) or r"(?!)")
    roots = _roots
    return pattern.sub(lambda m: roots.get(m.group(0), m.group(0)), text)


def _default_roots() -> None:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    add_path_root(package, os.path.basename(package) + os.sep)
    places = set(site.getsitepackages()) | {site.getusersitepackages()}
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        places.add(sysconfig.get_paths()[key])
    places.update(p for p in sys.path if p and os.path.isdir(p) and p != os.sep)
    for place in places:
        add_path_root(place)


_default_roots()
