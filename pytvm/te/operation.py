"""Declaring tensor expressions: ``placeholder``, ``compute``, ``reduce_axis``, ``var``."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from ..ffi.errors import TVMTypeError, TVMValueError
from ..tir.expr import (
    ExprLike,
    IterVar,
    IterVarType,
    PrimExpr,
    Range,
    Reduce,
    Var,
    const,
    convert,
)
from .tag import current_tag
from .tensor import ComputeOp, PlaceholderOp, Tensor

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["compute", "placeholder", "reduce_axis", "size_var", "thread_axis", "var"]


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A symbolic scalar, e.g. a shape dimension known only at run time."""
    return Var(name, dtype)


def size_var(name: str = "size", dtype: str = "int32") -> Var:
    """A symbolic dimension (TVM's ``size_var``; pytvm treats it as a non-negative var)."""
    return Var(name, dtype)


def _shape(
    shape: ExprLike | Sequence[ExprLike], what: str, whole_floats: bool = False
) -> tuple[PrimExpr, ...]:
    """The dimensions as expressions; with ``whole_floats`` a float with no fraction counts as
    its int (TVM's ``compute`` takes ``N / bn``), any other float is refused.
    """
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    out = []
    for i, given in enumerate(dims):
        d = (
            int(given)
            if whole_floats and isinstance(given, float) and given.is_integer()
            else given
        )
        if isinstance(d, float) or (isinstance(d, int) and d < 0):
            raise TVMValueError(
                f"{what}: dimension {i} is {d!r}; expected a non-negative int or var"
            )
        e = convert(d)
        if e.dtype not in ("int32", "int64"):
            raise TVMTypeError(f"{what}: dimension {i} has type {e.dtype}; expected int32/int64")
        out.append(e)
    return tuple(out)


def placeholder(
    shape: ExprLike | Sequence[ExprLike], dtype: str = "float32", name: str = "placeholder"
) -> Tensor:
    """An input tensor of ``shape`` and ``dtype``.

    Examples
    --------
    >>> from pytvm import te
    >>> A = te.placeholder((4, 8), name="A")
    >>> [str(d) for d in A.shape], A.dtype
    (['4', '8'], 'float32')
    """
    op = PlaceholderOp(name, _shape(shape, f"placeholder {name!r}"), str(const(0, dtype).dtype))
    return op.output(0)


def reduce_axis(dom: tuple[ExprLike, ExprLike] | Range, name: str = "rv") -> IterVar:
    """A reduction axis over ``[lo, hi)`` (a pair) or a ``Range``."""
    if isinstance(dom, Range):
        rng = dom
    else:
        lo, hi = dom
        rng = Range(convert(lo), convert(hi) - convert(lo))
    return IterVar(rng, Var(name, rng.extent.dtype), IterVarType.COMM_REDUCE)


def thread_axis(
    dom: tuple[ExprLike, ExprLike] | str | None = None, tag: str = "", name: str = ""
) -> IterVar:
    """A thread axis (accepted for TVM compatibility; CPU schedules use ``parallel``)."""
    if isinstance(dom, str):
        tag, dom = dom, None
    rng = None if dom is None else Range(convert(dom[0]), convert(dom[1]) - convert(dom[0]))
    return IterVar(rng, Var(name or tag or "thread"), IterVarType.THREAD_INDEX, tag)


def _axis_names(fcompute: Callable[..., Any], ndim: int) -> list[str]:
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        params = []
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return [f"i{k}" for k in range(ndim)]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) != ndim:
        raise TVMValueError(
            f"compute: fcompute takes {len(names)} index argument(s) for a {ndim}-d shape"
        )
    return names


@overload
def compute(
    shape: ExprLike | Sequence[ExprLike],
    fcompute: Callable[..., tuple[ExprLike]],
    name: str = ...,
    tag: str = ...,
    attrs: Mapping[str, Any] | None = ...,
) -> Tensor: ...
@overload
def compute(
    shape: ExprLike | Sequence[ExprLike],
    fcompute: Callable[..., tuple[ExprLike, ExprLike, Unpack[tuple[ExprLike, ...]]]],
    name: str = ...,
    tag: str = ...,
    attrs: Mapping[str, Any] | None = ...,
) -> list[Tensor]: ...
@overload
def compute(
    shape: ExprLike | Sequence[ExprLike],
    fcompute: Callable[..., Sequence[ExprLike]],
    name: str = ...,
    tag: str = ...,
    attrs: Mapping[str, Any] | None = ...,
) -> Tensor | list[Tensor]: ...
@overload
def compute(
    shape: ExprLike | Sequence[ExprLike],
    fcompute: Callable[..., ExprLike],
    name: str = ...,
    tag: str = ...,
    attrs: Mapping[str, Any] | None = ...,
) -> Tensor: ...
def compute(
    shape: ExprLike | Sequence[ExprLike],
    fcompute: Callable[..., ExprLike | Sequence[ExprLike]],
    name: str = "compute",
    tag: str = "",
    attrs: Mapping[str, Any] | None = None,
) -> Tensor | list[Tensor]:
    """A tensor whose element at each index is ``fcompute(*index)``.

    ``fcompute`` may return a tuple or list (several outputs of one loop nest, e.g. an
    argmax's index and value); then a list of tensors is returned, one per element (a
    single element still gives a tensor). A reduction must be the whole body.

    Examples
    --------
    >>> from pytvm import te
    >>> A = te.placeholder((8,), name="A")
    >>> B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    >>> B.op.axis[0].var.name, str(B.op.body[0])
    ('i', '(A[i] * 2.0f32)')
    >>> lo, hi = te.compute((8,), lambda i: (A[i] - 1.0, A[i] + 1.0), name="C")
    >>> lo.op is hi.op, hi.name
    (True, 'C.v1')
    """
    dims = _shape(shape, f"compute {name!r}", whole_floats=True)
    names = _axis_names(fcompute, len(dims))
    axis = tuple(
        IterVar(Range(const(0, d.dtype), d), Var(n, d.dtype), IterVarType.DATA_PAR)
        for n, d in zip(names, dims, strict=True)
    )
    result = fcompute(*(iv.var for iv in axis))
    bodies = tuple(result) if isinstance(result, (list, tuple)) else (result,)
    body = tuple(convert(b) for b in bodies)
    _check_body(name, body)
    op = ComputeOp(name, current_tag(tag, name), dict(attrs or {}), axis, body)
    outputs = [op.output(i) for i in range(op.num_outputs)]
    return outputs[0] if len(outputs) == 1 else outputs


def _check_body(name: str, body: tuple[PrimExpr, ...]) -> None:
    reduces = [b for b in body if isinstance(b, Reduce)]
    if reduces and len(reduces) != len(body):
        raise TVMValueError(f"compute {name!r}: either every output is a reduction or none is")
    if len(reduces) > 1:
        first = reduces[0]
        for r in reduces[1:]:
            if r.combiner is not first.combiner or r.source is not first.source:
                raise TVMValueError(
                    f"compute {name!r}: the outputs of one reduction must come from one "
                    "comm_reducer call (a tuple-valued reducer)"
                )
    from ..tir.functor import IRVisitor

    class _NestedReduce(IRVisitor):
        def visit_Reduce(self, node: Reduce) -> None:
            raise TVMValueError(
                f"compute {name!r}: a reduction must be the whole body, not part of "
                f"an expression ({node}); compute it as its own stage"
            )

    checker = _NestedReduce()
    for b in body:
        if isinstance(b, Reduce):
            for s in b.source:
                checker.visit(s)
            checker.visit(b.condition)
        else:
            checker.visit(b)
