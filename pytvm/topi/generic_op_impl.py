"""Python's arithmetic operators on ``te.Tensor``: binds :mod:`pytvm.tir.generic` to topi.

Importing ``pytvm.topi`` rebinds ``tir.generic.add`` / ``subtract`` / ``multiply`` / ``divide`` /
``floordiv`` / ``cast`` (TVM's rules): when either operand is a tensor, the operator becomes
the matching broadcasting ``topi`` compute (a tensor with a scalar, an expression or a rank-0
tensor is elementwise); otherwise the loop IR's own operator runs.

Examples
--------
>>> from pytvm import te, topi
>>> A = te.placeholder((4, 3), name="A")
>>> B = 1 + A * 2
>>> B.op.tag, [int(d) for d in B.shape]
('elemwise', [4, 3])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..te import Tensor
from ..tir import generic as _tir_generic
from . import broadcast as _broadcast
from . import elemwise as _elemwise

__all__: list[str] = []

#: This layer's priority among the bindings of ``tir.generic`` (see its ``__op_priority__``).
_OP_PRIORITY = 1

Binary = Callable[[Any, Any], Any]


def _make_bop(tensor_op: Binary, orig_op: Binary) -> Binary:
    """``tensor_op`` when an operand is a tensor, ``orig_op`` otherwise."""

    def tensor_bop(lhs: Any, rhs: Any, span: Any = None) -> Any:
        if isinstance(lhs, Tensor) or isinstance(rhs, Tensor):
            return tensor_op(lhs, rhs)
        return orig_op(lhs, rhs)

    tensor_bop.__name__ = getattr(orig_op, "__name__", "bop")
    tensor_bop.__doc__ = f"``{tensor_bop.__name__}`` of tensors (topi) or of expressions."
    return tensor_bop


def _cast(src: Any, dtype: str, span: Any = None) -> Any:
    """A tensor cast elementwise (topi), or an expression cast."""
    if isinstance(src, Tensor):
        return _elemwise.cast(src, dtype)
    return _ORIGINAL_CAST(src, dtype)


_ORIGINAL_CAST = _tir_generic.cast


def _bind_generic_ops() -> None:
    """Rebind the loop IR's generic operators once."""
    if _tir_generic.__op_priority__ >= _OP_PRIORITY:
        return
    g = _tir_generic
    g.__op_priority__ = _OP_PRIORITY
    g.add = _make_bop(_broadcast.add, g.add)  # type: ignore[assignment]
    g.subtract = _make_bop(_broadcast.subtract, g.subtract)  # type: ignore[assignment]
    g.multiply = _make_bop(_broadcast.multiply, g.multiply)  # type: ignore[assignment]
    g.divide = _make_bop(_broadcast.divide, g.divide)  # type: ignore[assignment]
    g.floordiv = _make_bop(_broadcast.floor_divide, g.floordiv)  # type: ignore[assignment]
    g.cast = _cast


_bind_generic_ops()
