"""Reductions over axes: ``sum``, ``max``, ``min``, ``prod``, ``mean``, ``argmax``, ``argmin``.

``axis`` is None (all axes), an int or a sequence of ints (negative counts from the end);
``keepdims`` keeps reduced axes with extent 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..te import reduction as te_red
from ..te.operation import compute, reduce_axis
from ..te.tensor import Tensor
from ..tir.expr import Cast, IterVar, PrimExpr, Select, Var, const
from ..tir.op import max_value, min_value
from . import tag
from ._shape import const_int, normalize_axes, op_error
from ._shape import prod as shape_prod

__all__ = ["all", "any", "argmax", "argmin", "collapse_sum", "max", "mean", "min", "prod", "sum"]

Axis = int | Sequence[int] | None

_prod = te_red.comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")
_all = te_red.comm_reducer(lambda x, y: x & y, lambda t: const(True, "bool"), name="all")
_any = te_red.comm_reducer(lambda x, y: x | y, lambda t: const(False, "bool"), name="any")


def _reduce_shape(
    data: Tensor, axes: list[int], keepdims: bool
) -> tuple[list[PrimExpr], Callable[[Sequence[Var], Sequence[IterVar]], list[PrimExpr]]]:
    """Output shape and a function giving input indices from output and reduction axes."""
    shape: list[PrimExpr] = []
    for k, d in enumerate(data.shape):
        if k in axes:
            if keepdims:
                shape.append(const(1, d.dtype))
        else:
            shape.append(d)

    def indices(out: Sequence[Var], red: Sequence[IterVar]) -> list[PrimExpr]:
        res: list[PrimExpr] = []
        oi, ri = 0, 0
        for k in range(data.ndim):
            if k in axes:
                res.append(red[ri].var)
                ri += 1
                if keepdims:
                    oi += 1
            else:
                res.append(out[oi])
                oi += 1
        return res

    return shape, indices


def _comm_reduce(
    name: str, reducer: Callable[..., Any], data: Tensor, axis: Axis, keepdims: bool
) -> Tensor:
    axes = normalize_axes(name, axis, data.ndim)
    shape, indices = _reduce_shape(data, axes, keepdims)
    red = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

    def body(*out: Var) -> PrimExpr:
        return reducer(data(*indices(out, red)), axis=red)  # type: ignore[no-any-return]

    return compute(shape, body, name=f"T_{name}", tag=tag.COMM_REDUCE)


def sum(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Sum over ``axis``; of booleans, their logical or (numpy's ``sum(dtype=bool)``: a bool
    sum saturates at True rather than wrapping).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((2, 3, 4), name="A")
    >>> [str(d) for d in topi.sum(A, axis=1, keepdims=True).shape]
    ['2', '1', '4']
    """
    if data.dtype == "bool":
        return _comm_reduce("sum", _any, data, axis, keepdims)
    return _comm_reduce("sum", te_red.sum, data, axis, keepdims)


def max(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Largest element over ``axis``."""
    return _comm_reduce("max", te_red.max, data, axis, keepdims)


def min(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Smallest element over ``axis``."""
    return _comm_reduce("min", te_red.min, data, axis, keepdims)


def prod(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Product over ``axis``."""
    return _comm_reduce("prod", _prod, data, axis, keepdims)


def _truth(data: Tensor) -> Tensor:
    if data.dtype == "bool":
        return data

    def nonzero(*i: Var) -> PrimExpr:
        return data(*i) != const(0, data.dtype)  # type: ignore[no-any-return]

    return compute(data.shape, nonzero, name="T_ne_zero", tag=tag.ELEMWISE)


def all(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero), as a bool tensor."""
    return _comm_reduce("all", _all, _truth(data), axis, keepdims)


def any(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (non-zero), as a bool tensor."""
    return _comm_reduce("any", _any, _truth(data), axis, keepdims)


def mean(data: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis`` (a sum stage, then a division stage)."""
    axes = normalize_axes("mean", axis, data.ndim)
    total = sum(data, axes, keepdims)
    count = shape_prod([data.shape[a] for a in axes])
    dtype = data.dtype

    def body(*i: Var) -> PrimExpr:
        n = count if dtype == count.dtype else Cast(dtype, count)
        return total(*i) / n

    return compute(total.shape, body, name="T_mean", tag=tag.ELEMWISE)


def _arg_reduce(
    name: str, data: Tensor, axis: Axis, keepdims: bool, select_last_index: bool
) -> Tensor:
    axes = normalize_axes(name, axis, data.ndim)
    shape, indices = _reduce_shape(data, axes, keepdims)
    red = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]
    largest = name == "argmax"

    def combine(x: tuple[Var, Var], y: tuple[Var, Var]) -> tuple[PrimExpr, PrimExpr]:
        better = (x[1] > y[1]) if largest else (x[1] < y[1])
        earlier = (x[0] >= y[0]) if select_last_index else (x[0] <= y[0])
        keep = better | ((x[1] == y[1]) & earlier & (x[0] >= 0))
        return Select(keep, x[0], y[0]), Select(keep, x[1], y[1])

    def identity(ti: str, tv: str) -> tuple[PrimExpr, PrimExpr]:
        return const(-1, ti), (min_value(tv) if largest else max_value(tv))

    reducer = te_red.comm_reducer(combine, identity, name=name)

    def body(*out: Var) -> Any:
        flat: PrimExpr = const(0, "int32")
        for a, r in zip(axes, red, strict=True):
            flat = flat * data.shape[a] + r.var
        return reducer((flat, data(*indices(out, red))), axis=red)

    # The reduction yields (index, value); a copy stage makes the index alone the result, as
    # in TVM, so a kernel's arguments need not include the values.
    temp = compute(shape, body, name=f"T_{name}_red_temp", tag=tag.COMM_REDUCE_IDX)
    return compute(shape, lambda *i: temp[0](*i), name=f"T_{name}", tag=tag.INJECTIVE)  # type: ignore[no-any-return]  # noqa: PLW0108


def argmax(
    data: Tensor, axis: Axis = None, keepdims: bool = False, select_last_index: bool = False
) -> Tensor:
    """Index (int32) of the largest element over ``axis`` (flattened over several axes).

    Ties give the first index (the last with ``select_last_index``), as numpy and ONNX do.
    """
    return _arg_reduce("argmax", data, axis, keepdims, select_last_index)


def argmin(
    data: Tensor, axis: Axis = None, keepdims: bool = False, select_last_index: bool = False
) -> Tensor:
    """Index (int32) of the smallest element over ``axis``."""
    return _arg_reduce("argmin", data, axis, keepdims, select_last_index)


def collapse_sum(data: Tensor, target_shape: Sequence[Any]) -> Tensor:
    """``data`` summed back to ``target_shape``, the shape it was broadcast from: over its
    leading axes beyond ``target_shape``'s rank and over the axes where ``target_shape`` has 1.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((2, 3, 4), name="A")
    >>> [str(d) for d in topi.collapse_sum(A, (3, 1)).shape]
    ['3', '1']
    """
    lead = data.ndim - len(target_shape)
    if lead < 0:
        raise op_error("collapse_sum", "target_shape", list(target_shape), f"rank <= {data.ndim}")
    summed: list[int] = list(range(lead))
    for k, t in enumerate(target_shape):
        d = data.shape[lead + k]
        if const_int(t) == 1 and const_int(d) != 1:
            summed.append(lead + k)
        elif const_int(t) != 1 and not _same_extent(t, d):
            raise op_error(
                "collapse_sum", "target_shape", [str(v) for v in target_shape],
                f"a shape that broadcasts to {[str(v) for v in data.shape]}",
            )  # fmt: skip
    red = {a: reduce_axis((0, data.shape[a]), name=f"k{a}") for a in summed}

    def body(*out: Var) -> PrimExpr:
        at = [red[a].var if a in red else out[a - lead] for a in range(data.ndim)]
        return te_red.sum(data(*at), axis=list(red.values()))  # type: ignore[no-any-return]

    if not red:
        return compute(list(target_shape), data, name="T_collapse_sum")
    return compute(list(target_shape), body, name="T_collapse_sum", tag=tag.COMM_REDUCE)


def _same_extent(a: Any, b: Any) -> bool:
    ca, cb = const_int(a), const_int(b)
    if ca is not None or cb is not None:
        return ca == cb
    return a is b or str(a) == str(b)
