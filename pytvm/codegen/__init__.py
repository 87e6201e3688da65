"""Code generation: C source with the packed-function ABI from lowered loop IR."""

from __future__ import annotations

from .c.module import codegen_c, system_lib_registry

__all__ = ["codegen_c", "system_lib_registry"]
