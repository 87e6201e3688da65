"""TVM's ``relay.frontend.common`` helpers the frontends and their tests use: ``infer_type``."""

from __future__ import annotations

from typing import TypeVar

from ...graph import Call, Constant, Function, IRModule, Tuple, TupleGetItem, Var

__all__ = ["infer_type"]

Node = TypeVar("Node", Var, Constant, Call, Tuple, TupleGetItem, Function, IRModule)


def infer_type(node: Node, mod: IRModule | None = None) -> Node:
    """``node`` with its types inferred (TVM's ``infer_type``). Graph nodes are typed when they
    are built (a ``Call`` runs its operator's type relation), so every node already carries
    ``checked_type``: ``node`` itself is returned. ``mod`` (the functions a call may name) is
    not needed for that.
    """
    del mod
    return node
