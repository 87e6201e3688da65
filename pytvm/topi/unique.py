"""``unique``: the distinct elements of a 1-d tensor, where they first occur, where each
element went, and how often each occurs.

Built from row reductions (``n * n`` comparisons for ``n`` elements): the first position of
each element's value, its rank among the distinct values (by value when sorted, by first
occurrence otherwise), then each output slot gathers the element of that rank.
"""

from __future__ import annotations

from typing import Any

from ..te.operation import compute, reduce_axis
from ..te.reduction import min as _min
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Select, Var, const
from . import tag
from ._shape import const_int, op_error

__all__ = ["unique"]

_I32 = "int32"


def unique(data: Tensor, is_sorted: bool = True, return_counts: bool = False) -> list[Any]:
    """``[unique, indices, inverse_indices, num_unique]`` (and ``counts``) of 1-d ``data``:
    slot ``k < num_unique`` of ``unique`` holds the ``k``-th distinct value (ascending when
    ``is_sorted``, else in order of first occurrence), ``indices[k]`` its first position
    and ``counts[k]`` how often it occurs; ``inverse_indices[i]`` is the slot of ``data[i]``.
    Slots past ``num_unique`` hold zeros. All but ``unique`` are int32.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((6,), "int32", "x")
    >>> [t.dtype for t in topi.unique(x)]
    ['int32', 'int32', 'int32', 'int32']
    """
    op = "unique"
    if data.ndim != 1 or const_int(data.shape[0]) is None:
        raise op_error(op, "input shape", [str(d) for d in data.shape], "1-d with a constant size")
    n = data.shape[0]
    one, zero = const(1, _I32), const(0, _I32)

    jf = reduce_axis((0, n), name="j")
    first = compute(
        (n,),
        lambda i: _min(Select(data(jf.var) == data(i), jf.var, n), axis=jf),
        name="T_unique_first",
        tag=tag.COMM_REDUCE,
    )

    def is_first(i: PrimExpr) -> PrimExpr:
        at: PrimExpr = first(i)
        return at == i  # type: ignore[no-any-return]

    jr = reduce_axis((0, n), name="j")

    def rank_of(i: Var) -> PrimExpr:
        if is_sorted:
            earlier = data(jr.var) < data(i)
        else:
            earlier = jr.var < first(i)
        return _sum(Select(is_first(jr.var) & earlier, one, zero), axis=jr)  # type: ignore[no-any-return]

    rank = compute((n,), rank_of, name="T_unique_rank", tag=tag.COMM_REDUCE)
    inverse = compute((n,), lambda i: rank(first(i)), name="T_unique_inverse", tag=tag.INJECTIVE)
    ju = reduce_axis((0, n), name="j")
    num = compute(
        (1,),
        lambda _: _sum(Select(is_first(ju.var), one, zero), axis=ju),
        name="T_unique_count",
        tag=tag.COMM_REDUCE,
    )

    def gather(name: str, dtype: str, value: Any) -> Tensor:
        j = reduce_axis((0, n), name="j")

        def body(k: Var) -> PrimExpr:
            hit = is_first(j.var) & (rank(j.var) == k)
            return _sum(Select(hit, value(j.var), const(0, dtype)), axis=j)  # type: ignore[no-any-return]

        return compute((n,), body, name=name, tag=tag.COMM_REDUCE)

    values = gather("T_unique_values", data.dtype, data)
    indices = gather("T_unique_indices", _I32, lambda j: j.astype(_I32))
    outs: list[Any] = [values, indices, inverse, num]
    if return_counts:
        jc = reduce_axis((0, n), name="j")
        counts = compute(
            (n,),
            lambda k: _sum(Select(inverse(jc.var) == k, one, zero), axis=jc),
            name="T_unique_counts",
            tag=tag.COMM_REDUCE,
        )
        outs.append(counts)
    return outs
