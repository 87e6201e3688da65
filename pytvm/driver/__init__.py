"""The compiler driver: ``lower`` and ``build`` (exported as ``pytvm.lower``/``pytvm.build``)."""

from __future__ import annotations

from .build_module import build, compile, lower
from .c_compiler import compile_stats
from .compiled_module import CompiledModule

__all__ = ["CompiledModule", "build", "compile", "compile_stats", "lower"]
