"""TVM's ``tvm.contrib.pickle_memoize``: remember what a function returned for its arguments,
for test reference data that is slow to compute.

``@memoize("topi.tests.test_topi_conv2d")`` on a function whose arguments (and the values it
closes over) are strings, numbers or tuples of them caches its results in memory, keyed on
those values. With ``save_at_exit=True`` the results are also kept in pytvm's cache folder
(``pkl_memoize_py3/<key>.<function>.pkl`` under :func:`pytvm.ffi.libinfo.cache_dir`), written
when the program exits and read back by the next run only from a private folder and only if its
recorded sha256 matches (a pickle runs code when loaded, so a file anyone else could have
written is never loaded).

Examples
--------
>>> from pytvm.contrib.pickle_memoize import memoize
>>> calls = []
>>> def make(n):
...     @memoize("doc.example")
...     def square():
...         calls.append(n)
...         return n * n
...     return square()
>>> make(3), make(3), make(4), calls
(9, 9, 16, [3, 4])
"""

from __future__ import annotations

import atexit
import functools
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ..ffi import compile_cache, libinfo
from ..ffi.cache_folder import trusted_folder

__all__ = ["Cache", "memoize"]

_F = TypeVar("_F", bound=Callable[..., Any])
_ALLOWED = (str, int, float)


def _folder() -> Path:
    return libinfo.cache_dir() / f"pkl_memoize_py{sys.version_info[0]}"


class Cache:
    """The results of one memoized function, by key; loaded from disk on first use when it is
    saved at exit.
    """

    cache_by_key: ClassVar[dict[str, Cache]] = {}

    def __init__(self, key: str, save_at_exit: bool) -> None:
        self.key = key
        self.save_at_exit = save_at_exit
        self.dirty = False
        self._cache: dict[tuple[Any, ...], Any] | None = None

    @property
    def path(self) -> Path:
        """Where the results are kept between runs."""
        return _folder() / self.key

    @property
    def cache(self) -> dict[tuple[Any, ...], Any]:
        """The results by key (read from disk the first time, when saved at exit)."""
        if self._cache is None:
            self._cache = self._load() if self.save_at_exit else {}
        return self._cache

    def _load(self) -> dict[tuple[Any, ...], Any]:
        root = libinfo.cache_dir()
        trusted_folder(root, self.path.parent)
        data = compile_cache.lookup_bytes(self.path)
        if data is None:
            return {}
        try:
            loaded = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return {}
        return loaded if isinstance(loaded, dict) else {}

    def save(self) -> None:
        """Write the results to :attr:`path` when any was added."""
        if self.dirty and self._cache is not None:
            trusted_folder(libinfo.cache_dir(), self.path.parent)
            compile_cache.store_bytes(self.path, pickle.dumps(self._cache, pickle.HIGHEST_PROTOCOL))
            self.dirty = False


@atexit.register
def _save_all() -> None:
    for cache in Cache.cache_by_key.values():
        if cache.save_at_exit:
            cache.save()


def _check_key(name: str, values: tuple[Any, ...]) -> None:
    for value in values:
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if not isinstance(item, _ALLOWED) or isinstance(item, tuple):
                raise TypeError(
                    f"memoize({name}): arguments and closed-over values must be str, int, float "
                    f"or tuples of them, got {type(item).__name__}"
                )


def memoize(key: str, save_at_exit: bool = False) -> Callable[[_F], _F]:
    """A decorator caching the function's results by its positional arguments and the values
    it closes over (see the module docstring).
    """

    def register(func: _F) -> _F:
        fkey = f"{key}.{func.__name__}.pkl"
        cache = Cache.cache_by_key.setdefault(fkey, Cache(fkey, save_at_exit))
        cells = tuple(c.cell_contents for c in func.__closure__ or ())
        prefix = (len(cells), *cells)

        @functools.wraps(func)
        def memoized(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                raise TypeError(f"memoize({fkey}): call with positional arguments only")
            full = prefix + args
            _check_key(fkey, full)
            if full not in cache.cache:
                cache.cache[full] = func(*args)
                cache.dirty = True
            return cache.cache[full]

        return memoized  # type: ignore[return-value]

    return register
