"""The C backend: a module of lowered kernels as one C file with the packed ABI (``abi``)."""

from __future__ import annotations

from .module import codegen_c, system_lib_registry

__all__ = ["codegen_c", "system_lib_registry"]
