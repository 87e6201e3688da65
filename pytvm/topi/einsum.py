"""``einsum``: products of tensors summed over the labels a subscript string leaves out.

The subscripts follow numpy: one term of letters per operand, ``...`` for broadcast leading
axes, ``->`` before the output term (without it, the output is ``...`` followed by the letters
used once, in alphabetical order). Axes of extent 1 broadcast against the same label's other
axes; where the extents are symbolic, the label's extent is their maximum and an axis whose
extent is 1 at run time is read at index 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..te.operation import compute, reduce_axis
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Select, Var, const
from ..tir.op import max as emax
from . import tag
from ._shape import const_int, op_error

__all__ = ["einsum"]

_ELLIPSIS = "."  # one character stands for "..." once parsed


@dataclass(frozen=True, slots=True)
class _Spec:
    """Parsed subscripts: each operand's labels (``.`` per ellipsis axis) and the output's."""

    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]


def _expand(op: str, term: str, ndim: int | None, width: int) -> tuple[str, ...]:
    """A term's labels with ``...`` replaced by ``width`` ellipsis labels ``.0``, ``.1``..."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise op_error(op, "subscripts term", term, "letters and at most one '...'")
    head, _, tail = term.partition("...")
    if not all(ch.isalpha() for ch in head + tail):
        raise op_error(op, "subscripts term", term, "letters and at most one '...'")
    if "..." not in term:
        if ndim is not None and len(term) != ndim:
            raise op_error(op, "subscripts term", term, f"{ndim} labels for a {ndim}-d operand")
        return tuple(term)
    own = width if ndim is None else ndim - len(head) - len(tail)
    if own < 0:
        raise op_error(op, "subscripts term", term, f"at most {ndim} labels")
    dots = tuple(f"{_ELLIPSIS}{width - own + k}" for k in range(own))
    return (*head, *dots, *tail)


def _parse(op: str, subscripts: str, operands: Sequence[Tensor]) -> _Spec:
    text = subscripts.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise op_error(op, "subscripts", subscripts, f"{len(operands)} comma-separated terms")
    width = max(
        (t.ndim - len(term.replace("...", "")) for term, t in zip(terms, operands, strict=True)
         if "..." in term),
        default=0,
    )  # fmt: skip
    inputs = tuple(
        _expand(op, term, t.ndim, width) for term, t in zip(terms, operands, strict=True)
    )
    if arrow:
        output = _expand(op, rhs, None, width)
        if len(set(output)) != len(output):
            raise op_error(op, "output term", rhs, "each label once")
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for label in labels:
                if not label.startswith(_ELLIPSIS):
                    counts[label] = counts.get(label, 0) + 1
        dots = tuple(f"{_ELLIPSIS}{k}" for k in range(width))
        output = (*dots, *sorted(lb for lb, n in counts.items() if n == 1))
    known = {label for labels in inputs for label in labels}
    for label in output:
        if label not in known and not label.startswith(_ELLIPSIS):
            raise op_error(op, "output label", label, "a label of some operand")
    return _Spec(inputs, output)


def _extents(spec: _Spec, operands: Sequence[Tensor]) -> dict[str, PrimExpr]:
    """Each label's extent: a constant other than 1 where one is given, else the maximum of
    the symbolic extents, else 1.
    """
    dims: dict[str, list[PrimExpr]] = {}
    for labels, t in zip(spec.inputs, operands, strict=True):
        for label, d in zip(labels, t.shape, strict=True):
            dims.setdefault(label, []).append(d)
    out: dict[str, PrimExpr] = {}
    for label, ds in dims.items():
        fixed = [d for d in ds if const_int(d) not in (None, 1)]
        symbolic = [d for d in ds if const_int(d) is None]
        if fixed:
            sizes = {const_int(d) for d in fixed}
            if len(sizes) > 1:
                raise op_error("einsum", f"extents of label {label!r}", sorted(sizes), "one")  # type: ignore[type-var]
            out[label] = fixed[0]
        elif symbolic:
            distinct: list[PrimExpr] = []
            for d in symbolic:
                if not any(d is e for e in distinct):
                    distinct.append(d)
            ext = distinct[0]
            for d in distinct[1:]:
                ext = emax(ext, d)
            out[label] = ext
        else:
            out[label] = ds[0]
    for label in spec.output:
        out.setdefault(label, const(1))
    return out


def einsum(subscripts: str, *operand: Tensor) -> Tensor:
    """The Einstein summation of ``operand`` as ``subscripts`` spell it (numpy's
    ``einsum``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((2, 3), name="A")
    >>> B = te.placeholder((3, 4), name="B")
    >>> [str(d) for d in topi.einsum("ij,jk->ik", A, B).shape]
    ['2', '4']
    """
    op = "einsum"
    if not operand:
        raise op_error(op, "operands", operand, "at least one tensor")
    spec = _parse(op, subscripts, operand)
    ext = _extents(spec, operand)
    summed = sorted({lb for labels in spec.inputs for lb in labels} - set(spec.output))
    red = {lb: reduce_axis((0, ext[lb]), name=f"k_{lb.replace(_ELLIPSIS, 'e')}") for lb in summed}
    dtype = operand[0].dtype

    def read(t: Tensor, labels: Sequence[str], where: dict[str, PrimExpr]) -> PrimExpr:
        at: list[PrimExpr] = []
        for label, d in zip(labels, t.shape, strict=True):
            v = where[label]
            if const_int(d) == 1:
                at.append(const(0, v.dtype))
            elif const_int(d) is None and d is not ext[label]:
                at.append(Select(d == 1, const(0, v.dtype), v))
            else:
                at.append(v)
        return t(*at)

    def body(*idx: Var) -> PrimExpr:
        where: dict[str, PrimExpr] = dict(zip(spec.output, idx, strict=True))
        where.update({lb: r.var for lb, r in red.items()})
        value = read(operand[0], spec.inputs[0], where)
        for t, labels in zip(operand[1:], spec.inputs[1:], strict=True):
            value = value * read(t, labels, where)
        if value.dtype != dtype:
            value = value.astype(dtype)
        if not red:
            return value
        return _sum(value, axis=list(red.values()))  # type: ignore[no-any-return]

    shape = [ext[lb] for lb in spec.output]
    kind = tag.COMM_REDUCE if red else tag.INJECTIVE
    return compute(shape, body, name="T_einsum", tag=kind)
