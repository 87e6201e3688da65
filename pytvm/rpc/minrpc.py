"""TVM's ``tvm.rpc.minrpc`` path: ``with_minrpc`` links a system library with the C runtime's
MinRPC server into an executable that ``rpc.PopenSession(path)`` starts.

The executable is the CRT core, MinRPC and the POSIX platform hooks (``pytvm/src/crt``) with
the server main ``minrpc/<server>/<server>.c`` (``posix_popen_server``: MinRPC over the two
pipes of ``PopenSession``), compiled by ``compile_func`` together with the objects it is given:
C sources (or objects) of a system library, as ``pytvm.build(..., target="c --system-lib")``
(or ``pytvm.compile`` of an IRModule with TVM's ``system_lib_prefix=""``) makes them
(``export_library(path, fcompile=rpc.with_minrpc(cc.create_executable))``). Without objects the
empty system library is linked. The server offers ``runtime.RPCTimeEvaluator``, so
``remote.system_lib().time_evaluator(...)`` times kernels there.

Examples
--------
>>> import os, tempfile
>>> from pytvm import rpc
>>> from pytvm.support import cc
>>> exe = os.path.join(tempfile.mkdtemp(), "minrpc")
>>> rpc.with_minrpc(cc.create_executable)(exe, [])  # doctest: +SKIP
>>> rpc.PopenSession(exe).cpu().device_type >= 128  # doctest: +SKIP
True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMValueError
from ..ffi.libinfo import include_dir, source_dir
from ..support.cc import CompileFunction, Objects

__all__ = ["find_minrpc_server_libpath", "with_minrpc"]

#: Flags of the C runtime build (as its Makefile's device build: a 64 MiB CPU pool).
_CRT_FLAGS = ("-std=gnu11", "-O2", "-DPYTVM_CRT=1", "-DTVM_CRT_MEMORY_POOL_LOG2=26")


def find_minrpc_server_libpath(server: str = "posix_popen_server") -> tuple[str, str]:
    """``(MinRPC source folder, the server main's path)`` for the server kind ``server``."""
    minrpc_dir = source_dir() / "crt" / "minrpc"
    path = minrpc_dir / server / f"{server}.c"
    if not path.is_file():
        kinds = sorted(p.name for p in minrpc_dir.iterdir() if (p / f"{p.name}.c").is_file())
        raise TVMValueError(f"with_minrpc: no MinRPC server {server!r}; expected one of {kinds}")
    return str(minrpc_dir), str(path)


def _runtime_sources() -> list[Path]:
    crt = source_dir() / "crt"
    return [
        *sorted((crt / "common").glob("*.c")),
        *sorted((crt / "minrpc").glob("*.c")),
        crt / "platform" / "posix_platform.c",
    ]


def with_minrpc(
    compile_func: Callable[..., Any], server: str = "posix_popen_server"
) -> CompileFunction:
    """``compile_func`` (e.g. ``cc.create_executable``) turned into a compile function that
    links its objects with the MinRPC server ``server`` and the C runtime into an executable.

    The objects must define a system library (``need_system_lib``); none links the empty one.
    """
    _, server_path = find_minrpc_server_libpath(server)
    crt = source_dir() / "crt"
    base_options = [*_CRT_FLAGS, f"-I{include_dir()}", f"-I{crt / 'include'}"]

    def link(
        output: str | os.PathLike[str],
        objects: Objects,
        options: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        given = [objects] if isinstance(objects, str | os.PathLike) else list(objects)
        files = [*(os.fspath(g) for g in given), server_path, *map(str, _runtime_sources())]
        if not given:
            files.append(str(crt / "platform" / "empty_system_lib.c"))
        # -lm last: the kernels of a system library may call libm, and --as-needed links in order
        files.append("-lm")
        return compile_func(output, files, options=[*base_options, *(options or ())], **kwargs)

    return CompileFunction(link, need_system_lib=True, name="with_minrpc")
