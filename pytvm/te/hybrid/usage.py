"""Where each name of a hybrid script is declared, in which scope, and how it is used later.

A name is declared by its first store; its scope is the innermost ``for`` (or the function)
around that store, and it may be used only inside that scope. The parser realizes a scratch
tensor at the end of its scope, and keeps a name as a constant when it is bound once to a
number and never stored again.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...ffi.errors import TVMValueError
from .calls import INTRINSICS

__all__ = ["Declaration", "declarations"]


@dataclass(slots=True)
class Declaration:
    """The first store to a name (``node``), its scope and the contexts of its later uses."""

    node: ast.Name
    scope: ast.AST
    uses: set[type[ast.expr_context]] = field(default_factory=set)


def _fail(message: str) -> None:
    raise TVMValueError(f"hybrid script: {message}")


class _Usage(ast.NodeVisitor):
    def __init__(
        self, nargs: int, callables: Mapping[str, Any], closure: Mapping[str, Any]
    ) -> None:
        self.nargs = nargs
        self.callables = callables
        self.closure = closure
        self.args: set[str] = set()
        self.scopes: list[ast.AST] = []
        self.found: dict[str, Declaration] = {}
        self.in_aug_assign = False

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if len(node.args.args) != self.nargs:
            _fail(f"{node.name} takes {len(node.args.args)} arguments, {self.nargs} given")
        self.args = {a.arg for a in node.args.args}
        self.scopes.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_For(self, node: ast.For) -> None:
        if not isinstance(node.target, ast.Name):
            _fail(f"line {node.lineno}: a loop's variable must be a name")
        self.visit(node.iter)
        self.scopes.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            _fail(f"line {node.lineno}: only calls of plain names are supported")
            return
        name = node.func.id
        if name not in INTRINSICS and name not in self.callables and name not in self.closure:
            _fail(f"line {node.lineno}: {name}() is neither an intrinsic nor a known function")
        for arg in node.args:
            self.visit(arg)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.in_aug_assign = True
        self.visit(node.target)
        self.in_aug_assign = False
        self.visit(node.value)

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        loops = [s.target.id for s in self.scopes if isinstance(s, ast.For)]  # type: ignore[attr-defined]
        if name in self.args or name in loops:
            if isinstance(node.ctx, ast.Store) and name in loops:
                _fail(f"line {node.lineno}: loop variable {name} cannot be assigned")
            return
        found = self.found.get(name)
        if found is None:
            if name in self.closure:
                return
            if not isinstance(node.ctx, ast.Store):
                _fail(f"line {node.lineno}: {name} is used before it is assigned")
            if self.in_aug_assign:
                _fail(f"line {node.lineno}: the first store to {name} cannot be an augmented one")
            self.found[name] = Declaration(node, self.scopes[-1])
            return
        if found.scope not in self.scopes:
            _fail(f"line {node.lineno}: {name} is used outside the scope it was declared in")
        found.uses.add(type(node.ctx))


def declarations(
    root: ast.AST, nargs: int, callables: Mapping[str, Any], closure: Mapping[str, Any]
) -> dict[str, Declaration]:
    """The declaration of every name ``root`` (a function of ``nargs`` arguments) assigns."""
    usage = _Usage(nargs, callables, closure)
    usage.visit(root)
    return usage.found
