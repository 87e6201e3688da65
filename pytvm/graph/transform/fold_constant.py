"""FoldConstant: an operator call whose arguments are all constants becomes a constant.

A call whose result would be larger than ``PassContext`` option ``graph.max_constant_bytes``
(default :data:`DEFAULT_MAX_CONSTANT_BYTES`) stays a call, computed when the model runs: a
few bytes of graph (a scalar broadcast to a huge shape) must not fill the compiler's memory.
:func:`fold_call` folds one call; the ONNX importer, which folds as it converts, calls it too
and refuses a constant over the same limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ffi.errors import TVMTypeError, TVMValueError
from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..functor import rewrite_function
from ..interpreter import evaluate_call
from ..module import IRModule
from ..op import get_op
from ..ty import TensorType, TupleType, Type

__all__ = [
    "DEFAULT_MAX_CONSTANT_BYTES",
    "MAX_CONSTANT_BYTES_KEY",
    "FoldConstant",
    "fold_call",
    "fold_constant",
    "max_constant_bytes",
    "type_nbytes",
]

#: The default limit on the bytes of one constant computed at compile or import time (512 MiB).
DEFAULT_MAX_CONSTANT_BYTES = 512 * 2**20

#: The ``PassContext`` config key of that limit.
MAX_CONSTANT_BYTES_KEY = "graph.max_constant_bytes"


def max_constant_bytes(ctx: PassContext | None = None, given: int | None = None) -> int:
    """The limit on one folded constant: ``given`` if not None, else ``ctx``'s (default: the
    current context's) ``graph.max_constant_bytes``, else :data:`DEFAULT_MAX_CONSTANT_BYTES`.

    Examples
    --------
    >>> with PassContext(config={"graph.max_constant_bytes": 1024}):
    ...     max_constant_bytes()
    1024
    >>> max_constant_bytes(given=2**30)
    1073741824
    """
    if given is None:
        ctx = ctx if ctx is not None else PassContext.current()
        given = ctx.get(MAX_CONSTANT_BYTES_KEY, DEFAULT_MAX_CONSTANT_BYTES)
    if isinstance(given, bool) or not isinstance(given, (int, np.integer)):
        raise TVMTypeError(
            f"max_constant_bytes ({MAX_CONSTANT_BYTES_KEY}) must be an integer number of bytes, "
            f"got {given!r} ({type(given).__name__}); e.g. {DEFAULT_MAX_CONSTANT_BYTES} (512 MiB)"
        )
    if given < 0:
        raise TVMValueError(
            f"max_constant_bytes ({MAX_CONSTANT_BYTES_KEY}) must be >= 0, got {given}; e.g. "
            f"{DEFAULT_MAX_CONSTANT_BYTES} (512 MiB)"
        )
    return int(given)


def type_nbytes(ty: Type) -> int:
    """The bytes a value of ``ty`` occupies (the sum of a tuple's fields)."""
    if isinstance(ty, TupleType):
        return sum(type_nbytes(f) for f in ty.fields)
    assert isinstance(ty, TensorType)
    return ty.nbytes


def _is_constant(expr: Expr) -> bool:
    if isinstance(expr, Tuple):
        return all(_is_constant(f) for f in expr.fields)
    return isinstance(expr, Constant)


def _constant_value(expr: Expr) -> Any:
    if isinstance(expr, Tuple):
        return tuple(_constant_value(f) for f in expr.fields)
    assert isinstance(expr, Constant)
    return expr.data


def fold_call(
    call: Call, limit: int, over_limit: Callable[[Call, int], None] | None = None
) -> Expr | None:
    """``call`` evaluated with its operator's reference implementation, when every argument is
    a constant (or a tuple of constants): a ``Constant``, or a ``Tuple`` of them for a tuple
    result; None when it does not fold.

    A result over ``limit`` bytes is not computed: ``over_limit(call, nbytes)`` is told (and
    may raise), then None is returned.

    Examples
    --------
    >>> from pytvm import graph as g
    >>> fold_call(g.call("add", g.const(1.0), g.const(2.0)), limit=1024).data
    array(3.)
    """
    if not isinstance(call.op, str) or not all(_is_constant(a) for a in call.args):
        return None
    if get_op(call.op).evaluate is None:
        return None
    nbytes = type_nbytes(call.checked_type)
    if nbytes > limit:  # left to run time
        if over_limit is not None:
            over_limit(call, nbytes)
        return None
    value = evaluate_call(call, [_constant_value(a) for a in call.args])
    if isinstance(value, tuple):
        return Tuple(tuple(Constant(_owned(v)) for v in value))
    ty = call.checked_type
    assert isinstance(ty, TensorType)  # a tuple-typed call evaluates to a tuple
    return Constant(_owned(value.astype(ty.dtype, copy=False)))


def _fold(node: Expr, limit: int) -> Expr | None:
    if isinstance(node, TupleGetItem) and isinstance(node.tuple_value, Tuple):
        return node.tuple_value.fields[node.index]
    return fold_call(node, limit) if isinstance(node, Call) else None


def _owned(value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A folded value made read-only in place: the constant takes it without a copy (a
    parameter-sized copy per folded weight otherwise).
    """
    value = np.asarray(value)
    if value.flags.writeable and value.flags.owndata:
        value.flags.writeable = False
    return value


def fold_constant(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Evaluate every constant subexpression with the operators' reference implementations
    (those whose result would exceed ``graph.max_constant_bytes`` stay calls).
    """
    limit = max_constant_bytes(ctx)
    return map_functions(mod, lambda f: rewrite_function(f, lambda n: _fold(n, limit)))


FoldConstant = Pass("FoldConstant", 2, fold_constant)
