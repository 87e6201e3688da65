"""TVM's ``relay`` operator functions over the graph IR's operators: tensor arithmetic and
shape operators (``relay.add``, ``relay.reshape``, ...). ``relay.nn`` is :mod:`.nn`.

Each builds a typed ``Call`` of the graph operator of the same name, so a bad shape fails
where the call is made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..graph import Call, Expr, Tuple, call
from ..graph.op.registry import OpDef, get_op

__all__ = [
    "abs",
    "add",
    "cast",
    "clip",
    "concatenate",
    "cos",
    "divide",
    "equal",
    "exp",
    "expand_dims",
    "floor",
    "get",
    "greater",
    "less",
    "log",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "negative",
    "power",
    "reshape",
    "sigmoid",
    "sin",
    "sqrt",
    "squeeze",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "where",
]


def get(op_name: str) -> OpDef:
    """The operator registered as ``op_name`` (TVM's ``relay.op.get``; raises for an unknown
    name, listing the close ones).

    Examples
    --------
    >>> from pytvm import relay
    >>> relay.op.get("nn.conv2d").name
    'nn.conv2d'
    """
    return get_op(op_name)


def _unary(name: str) -> Callable[[Expr], Call]:
    def op(data: Expr) -> Call:
        return call(name, data)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of ``data``."
    return op


def _binary(name: str) -> Callable[[Expr, Expr], Call]:
    def op(lhs: Expr, rhs: Expr) -> Call:
        return call(name, lhs, rhs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Broadcasting ``{name}`` of ``lhs`` and ``rhs``."
    return op


abs = _unary("abs")
cos = _unary("cos")
exp = _unary("exp")
floor = _unary("floor")
log = _unary("log")
negative = _unary("negative")
sigmoid = _unary("sigmoid")
sin = _unary("sin")
sqrt = _unary("sqrt")
tanh = _unary("tanh")
add = _binary("add")
divide = _binary("divide")
equal = _binary("equal")
greater = _binary("greater")
less = _binary("less")
maximum = _binary("maximum")
minimum = _binary("minimum")
multiply = _binary("multiply")
power = _binary("power")
subtract = _binary("subtract")


def _axes(axis: int | Sequence[int] | None) -> tuple[int, ...] | None:
    if axis is None:
        return None
    return (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)


def _reduce(name: str) -> Callable[..., Call]:
    def op(
        data: Expr,
        axis: int | Sequence[int] | None = None,
        keepdims: bool = False,
        exclude: bool = False,
    ) -> Call:
        axes = _axes(axis)
        if exclude:
            ndim = len(data.checked_type.shape)  # type: ignore[union-attr]
            kept = {a % ndim for a in axes or ()}
            axes = tuple(a for a in range(ndim) if a not in kept)
        return call(name, data, axis=axes, keepdims=bool(keepdims))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` over ``axis`` (all axes when None)."
    return op


max = _reduce("max")
mean = _reduce("mean")
min = _reduce("min")
sum = _reduce("sum")


def reshape(data: Expr, newshape: int | Sequence[int]) -> Call:
    """``data`` with shape ``newshape`` (one ``-1`` is inferred from the others)."""
    shape = (int(newshape),) if isinstance(newshape, int) else tuple(int(d) for d in newshape)
    return call("reshape", data, newshape=shape)


def transpose(data: Expr, axes: Sequence[int] | None = None) -> Call:
    """``data`` with its axes permuted (reversed when ``axes`` is None)."""
    if axes is None:
        ndim = len(data.checked_type.shape)  # type: ignore[union-attr]
        axes = tuple(reversed(range(ndim)))
    return call("transpose", data, axes=tuple(int(a) for a in axes))


def squeeze(data: Expr, axis: Sequence[int] | None = None) -> Call:
    """``data`` without the size-1 axes ``axis`` (all of them when None)."""
    return call("squeeze", data, axis=_axes(axis))


def expand_dims(data: Expr, axis: int, num_newaxis: int = 1) -> Call:
    """``data`` with ``num_newaxis`` size-1 axes inserted at ``axis``."""
    return call("expand_dims", data, axis=int(axis), num_newaxis=int(num_newaxis))


def concatenate(data: Sequence[Expr] | Tuple, axis: int) -> Call:
    """The tensors of ``data`` joined along ``axis``."""
    fields = data if isinstance(data, Tuple) else Tuple(tuple(data))
    return call("concatenate", fields, axis=int(axis))


def cast(data: Expr, dtype: str) -> Call:
    """``data`` converted to ``dtype``."""
    return call("cast", data, dtype=str(dtype))


def clip(a: Expr, a_min: float, a_max: float) -> Call:
    """``a`` limited to ``[a_min, a_max]``."""
    return call("clip", a, a_min=float(a_min), a_max=float(a_max))


def where(condition: Expr, x: Expr, y: Expr) -> Call:
    """``x`` where ``condition`` holds, else ``y`` (broadcasting)."""
    return call("where", condition, x, y)
