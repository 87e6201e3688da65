"""Helpers for tests: pytvm's own (compile C sources against pytvm's headers; RPC, graph and
tensor-expression helpers in the submodules) and TVM's ``tvm.testing`` names that TVM's test
files use (``main``, ``assert_allclose``, ``skip_if_32bit``, ``device_enabled``,
``requires_rpc``, ``requires_llvm``, ``env``). Only tests import this package.
"""

from __future__ import annotations

from pathlib import Path

from ..ffi import libinfo
from . import env
from .tvm_helpers import (
    assert_allclose,
    device_enabled,
    main,
    requires_llvm,
    requires_rpc,
    skip_if_32bit,
)

__all__ = [
    "assert_allclose",
    "compile_c",
    "device_enabled",
    "env",
    "main",
    "requires_llvm",
    "requires_rpc",
    "skip_if_32bit",
]


def compile_c(source: str, workdir: Path, name: str = "lib") -> Path:
    """Compile ``source`` into ``workdir/<name>.so``, warnings as errors."""
    src = workdir / f"{name}.c"
    src.write_text(source)
    return libinfo.compile_shared([src], workdir / f"{name}.so", ["-Wall", "-Werror"])
