"""The LLVM backend: a module of lowered kernels as LLVM IR text with the packed ABI (``abi``)."""

from __future__ import annotations

from .module import codegen_llvm

__all__ = ["codegen_llvm"]
