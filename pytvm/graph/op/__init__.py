"""Graph operators: the registry, and the definitions of every operator."""

from __future__ import annotations

from . import annotation, builtin_ops  # noqa: F401 - register every operator
from .registry import OpDef, OpPattern, get_op, list_ops, register_op

__all__ = ["OpDef", "OpPattern", "get_op", "list_ops", "register_op"]
