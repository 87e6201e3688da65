"""``structural_equal``, ``assert_structural_equal`` and ``structural_hash`` of either IR.

Each IR compares its own nodes (:mod:`pytvm.tir.structural` for the loop IR,
:mod:`pytvm.graph.structural` for the dataflow graph IR); these functions pick the one the
arguments belong to, by the package that defines their type, as ``tvm.ir``'s functions accept
nodes of every IR. The IRs load on first use (they sit above this package).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]

_GRAPH_PACKAGE = "pytvm.graph"


def _is_graph(value: Any) -> bool:
    return type(value).__module__.startswith(_GRAPH_PACKAGE + ".")


def _ir_of(*values: Any) -> ModuleType:
    if any(_is_graph(v) for v in values):
        return importlib.import_module(_GRAPH_PACKAGE + ".structural")
    return importlib.import_module("pytvm.tir.structural")


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """Whether ``lhs`` and ``rhs`` (modules, functions or expressions of one IR) have the same
    structure; free variables of the loop IR are matched by position with ``map_free_vars``.
    """
    ir = _ir_of(lhs, rhs)
    if ir.__name__.startswith(_GRAPH_PACKAGE):
        return bool(ir.structural_equal(lhs, rhs))
    return bool(ir.structural_equal(lhs, rhs, map_free_vars))


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ``TVMValueError`` saying where ``lhs`` and ``rhs`` first differ."""
    ir = _ir_of(lhs, rhs)
    if ir.__name__.startswith(_GRAPH_PACKAGE):
        ir.assert_structural_equal(lhs, rhs)
    else:
        ir.assert_structural_equal(lhs, rhs, map_free_vars)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash equal for structurally equal nodes of one IR."""
    del map_free_vars  # both IRs hash free variables by position
    return int(_ir_of(node).structural_hash(node))
