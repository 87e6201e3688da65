"""The C codec (``src/rpc_codec/rpc_codec.c``): built on first use, cached, and switchable.

A CPython extension compiled with the system C compiler the first time a packet is encoded and
cached by source hash (like the fast-call extension, :mod:`pytvm.ffi.libinfo`). It encodes and
decodes the common values (None, bool, int, float, str, bytes) and asks the Python codec
(:mod:`pytvm.rpc.wire.values`) for every other value and for the wording of every error, so the
bytes and the errors are the same either way. Where it cannot be built (no compiler, no Python
headers) :data:`CODEC` stays on the Python codec; ``PYTVM_RPC_CODEC=python`` in a process's
environment keeps it on the Python codec too (benchmarks compare the two that way).

Examples
--------
>>> from pytvm.rpc.wire import _c_codec
>>> previous = _c_codec.use_c_codec(False)  # the pure-Python reference codec
>>> _c_codec.use_c_codec(previous)
False
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import sysconfig
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...ffi import compile_cache, libinfo
from ...ffi.elf_check import check_shared_object
from ...ffi.errors import SharedObjectError, TVMError, TVMPermissionError

__all__ = ["CODEC", "CODEC_ENV", "c_codec_module", "use_c_codec"]

#: Set to ``python`` to start a process on the pure-Python codec.
CODEC_ENV = "PYTVM_RPC_CODEC"
_SOURCE = "rpc_codec/rpc_codec.c"
_NAME = "_pytvm_rpc_codec"
_lock = threading.Lock()
logger = logging.getLogger(__name__)


class _Codec:
    """Which codec the wire modules use: ``module`` is the C one, or None for Python's."""

    __slots__ = ("built", "hooks", "module", "tried")

    def __init__(self) -> None:
        self.module: Any = None
        self.built: Any = None  # the loaded extension (kept while switched off)
        self.tried = False
        self.hooks: tuple[Callable[..., Any], ...] | None = None


#: The active codec; the wire modules read ``CODEC.module`` per packet.
CODEC = _Codec()


def _path() -> Path:
    digest = hashlib.sha256((libinfo.source_dir() / _SOURCE).read_bytes())
    digest.update(sysconfig.get_config_var("EXT_SUFFIX").encode())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return libinfo.cache_dir() / f"rpc-codec-{digest.hexdigest()[:16]}" / f"{_NAME}{suffix}"


def _compile(staged: Path) -> None:
    include = Path(sysconfig.get_paths()["include"])
    options = [f"-I{include}", "-Wall", "-Wextra", "-Werror"]
    libinfo.compile_shared([libinfo.source_dir() / _SOURCE], staged, options, "the RPC codec")


def _load() -> Any:
    """The extension module, built if needed; None where it cannot be built here."""
    if libinfo.find_cc() is None:
        return None
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return None
    try:
        path = compile_cache.cached_file(_path(), _compile, root=libinfo.cache_dir())
        check_shared_object(path)
    except (TVMPermissionError, SharedObjectError) as err:
        # an untrusted cache or a damaged library is the user's to know about; the wire still
        # works (this runs when pytvm.rpc is imported), on the Python codec
        logger.warning("RPC codec: using the Python codec: %s", err)
        return None
    except (TVMError, OSError):
        return None
    loader = importlib.machinery.ExtensionFileLoader(_NAME, str(path))
    spec = importlib.util.spec_from_file_location(_NAME, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def c_codec_module() -> Any:
    """The C codec extension (built on first call), or None where it cannot be built."""
    if not CODEC.tried:
        with _lock:
            if not CODEC.tried:
                CODEC.built = _load()
                CODEC.tried = True
    return CODEC.built


def install(
    encode_value: Callable[[Any], bytes],
    decode_value: Callable[[Any, int, int, str, Any], tuple[Any, int]],
    protocol_error: type[Exception],
) -> None:
    """Give the C codec the Python codec's hooks and switch it on (``values`` calls this)."""
    CODEC.hooks = (encode_value, decode_value, protocol_error)
    use_c_codec(os.environ.get(CODEC_ENV, "c") != "python")


def use_c_codec(enabled: bool) -> bool:
    """Switch the wire modules to the C codec (where it can be built) or to the pure-Python
    reference; returns whether the C codec was in use before.
    """
    previous = CODEC.module is not None
    if not enabled:
        CODEC.module = None
        return previous
    module = c_codec_module()
    if module is not None and CODEC.hooks is not None:
        module.configure(*CODEC.hooks)
        CODEC.module = module
    return previous
