"""Normalizing along axes: ``softmax``, ``log_softmax``, ``layer_norm``.

Each is a few stages (a reduction, then elementwise work reading it), tagged so schedules find
them: the final stage of a softmax has tag ``softmax_output`` (``log_softmax_output``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import max as _max
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir import op as tirop
from ...tir.expr import IterVar, PrimExpr, Select, Var, const
from ...tir.op import log, rsqrt
from .. import tag
from .._shape import const_int, normalize_axes, normalize_axis, op_error, prod
from .._target import vector_lanes
from ..fast_math import exp_expr

__all__ = ["layer_norm", "log_softmax", "softmax", "stats_dtype"]


def stats_dtype(dtype: str) -> str:
    """The type statistics of ``dtype`` data are taken in: float32 for narrower floats."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def _along(idx: Sequence[Var], axis: int, value: PrimExpr) -> list[PrimExpr]:
    out: list[PrimExpr] = list(idx)
    out[axis] = value
    return out


def _row_lanes(x: Tensor, ax: int) -> int | None:
    """Vector lanes to split a last-axis row reduction by (None: reduce the row as a whole)."""
    n, lanes = const_int(x.shape[ax]), vector_lanes(x.dtype)
    if ax != x.ndim - 1 or n is None or lanes < 2 or n % lanes or n < 2 * lanes:  # noqa: PLR2004
        return None
    return lanes


def _row_reduce(
    outer: Sequence[PrimExpr],
    length: PrimExpr,
    lanes: int | None,
    value: Callable[[Sequence[Var], PrimExpr], PrimExpr],
    combine: Callable[..., PrimExpr],
    name: str,
) -> Tensor:
    """``combine`` of ``value(row, k)`` over ``k`` in ``[0, length)`` per row. With ``lanes``,
    in two stages: ``lanes`` partial results (stage attribute ``row_partial``; a schedule runs
    them as one vector) over every ``lanes``-th element, then their combination.
    """
    if lanes is None:
        k = reduce_axis((0, length), name="k")
        return compute(
            outer, lambda *i: combine(value(i, k.var), axis=k), name=name, tag=tag.COMM_REDUCE
        )
    ko = reduce_axis((0, length // lanes), name="ko")
    part = compute(
        [*outer, lanes],
        lambda *i: combine(value(i[:-1], ko.var * lanes + i[-1]), axis=ko),
        name=f"{name}_partial",
        tag=tag.COMM_REDUCE,
        attrs={"row_partial": lanes},
    )
    kl = reduce_axis((0, lanes), name="kl")
    return compute(
        outer, lambda *i: combine(part(*i, kl.var), axis=kl), name=name, tag=tag.COMM_REDUCE
    )


#: Below this, ``exp`` of a shifted softmax input is under float32's smallest normal number
#: (2**-126): the term is taken as 0 without computing it, as subnormal arithmetic (which a
#: masked attention row's ``-1e4`` or ``-inf`` entries would reach) runs many times slower.
_EXP_FLOOR = float(math.ceil(math.log(math.ldexp(1.0, -126))))


def _exp_shifted(d: PrimExpr) -> PrimExpr:
    """``exp(d)`` of an input shifted by its row's maximum (``d <= 0``), 0 below the normal
    float32 range; NaN stays NaN (an all ``-inf`` row).
    """
    if d.dtype != "float32":
        return exp_expr(d)
    low = const(_EXP_FLOOR, "float32")
    # max(constant, d) keeps a NaN d (and ``NaN < low`` is false). The select is of constants:
    # one whose values read memory would be computed lane by lane.
    keep = Select(d < low, const(0.0, "float32"), const(1.0, "float32"))
    return exp_expr(tirop.max(low, d)) * keep


def _softmax_lanes(x: Tensor, ax: int) -> int | None:
    """Vector lanes to reduce a softmax row in (None: reduce each row as a whole): rows along
    the last axis, of constant length and at least one vector long; the rest past the last
    whole vector is a scalar tail.
    """
    n, lanes = const_int(x.shape[ax]), vector_lanes(x.dtype)
    if ax != x.ndim - 1 or n is None or lanes < 2 or n < lanes:  # noqa: PLR2004
        return None
    return lanes


#: Independent accumulators a row reduction keeps per lane, so consecutive vector operations
#: of a row do not wait on each other (a vector add's latency is several cycles).
_CHAINS = 4


def _tree(terms: Sequence[PrimExpr], pair: Callable[[PrimExpr, PrimExpr], PrimExpr]) -> PrimExpr:
    """``terms`` combined pairwise as a balanced tree (``t[j]`` with ``t[j + half]``)."""
    level = list(terms)
    while len(level) > 1:
        half = (len(level) + 1) // 2
        level = [
            pair(level[j], level[j + half]) if j + half < len(level) else level[j]
            for j in range(half)
        ]
    return level[0]


def _lane_reduce(
    outer: Sequence[PrimExpr],
    length: int,
    lanes: int,
    value: Callable[[Sequence[Var], PrimExpr], PrimExpr],
    kind: str,
    name: str,
) -> Tensor:
    """The maximum (``kind="max"``) or sum of ``value(row, k)`` over ``k`` in a row.

    ``k`` runs over ``[0, length)``, in three stages, each with the rows as leading axes:

    - ``{name}_partial`` ``[row, chain, lane]`` (attribute ``row_partial``): the whole vectors
      of the row, consecutive ones in independent chains (a schedule runs each chain as one
      vector);
    - ``{name}_lanes`` ``[row, lane]`` (attribute ``row_lanes``): the chains combined, with
      the whole vectors left over past the last full round of chains;
    - ``name`` ``[row]`` (attribute ``row_total``): the lanes combined as a tree, with the
      ``length % lanes`` elements past the last whole vector (the tail, one per lane).
    """
    vectors, tail = divmod(length, lanes)
    chains = max(1, min(_CHAINS, vectors))
    rounds = vectors // chains
    combine = _max if kind == "max" else _sum

    def pair(a: PrimExpr, b: PrimExpr) -> PrimExpr:
        return tirop.max(a, b) if kind == "max" else a + b

    ko = reduce_axis((0, rounds), name="ko")
    part = compute(
        [*outer, chains, lanes],
        lambda *i: combine(value(i[:-2], (ko.var * chains + i[-2]) * lanes + i[-1]), axis=ko),
        name=f"{name}_partial",
        tag=tag.COMM_REDUCE,
        attrs={"row_partial": lanes},
    )

    def by_lane(*i: Var) -> PrimExpr:
        row, lane = i[:-1], i[-1]
        terms = [part(*row, c, lane) for c in range(chains)]
        terms += [value(row, const(v * lanes) + lane) for v in range(rounds * chains, vectors)]
        return _tree(terms, pair)

    per_lane = compute(
        [*outer, lanes],
        by_lane,
        name=f"{name}_lanes",
        tag=tag.COMM_REDUCE,
        attrs={"row_lanes": lanes},
    )

    def total(*i: Var) -> PrimExpr:
        terms = [per_lane(*i, const(lane)) for lane in range(lanes)]
        for t in range(tail):
            terms[t] = pair(terms[t], value(i, const(vectors * lanes + t)))
        return _tree(terms, pair)

    return compute(outer, total, name=name, tag=tag.COMM_REDUCE, attrs={"row_total": lanes})


def _softmax_stages(x: Tensor, axis: int, op: str) -> tuple[Tensor, Tensor | None, Tensor, int]:
    """The row maximum, the exponentials (a stage of their own for a softmax whose rows are
    reduced in vector lanes, so each is computed once) and their row sums.
    """
    ax = normalize_axis(op, axis, x.ndim)
    outer = [d for k, d in enumerate(x.shape) if k != ax]
    lanes = _softmax_lanes(x, ax)

    def full(idx: Sequence[PrimExpr], v: PrimExpr) -> list[PrimExpr]:
        return [*idx[:ax], v, *idx[ax:]]

    def shifted(i: Sequence[PrimExpr], k: PrimExpr) -> PrimExpr:
        return x(*full(i, k)) - max_elem(*i)

    if lanes is None:  # a whole-row sum is a scalar loop: the intrinsic exp
        max_elem = _row_reduce(
            outer, x.shape[ax], None, lambda i, k: x(*full(i, k)), _max, f"T_{op}_maxelem"
        )
        expsum = _row_reduce(
            outer,
            x.shape[ax],
            None,
            lambda i, k: tirop.exp(shifted(i, k)),
            _sum,
            f"T_{op}_expsum",
        )
        return max_elem, None, expsum, ax
    n = const_int(x.shape[ax])
    assert n is not None
    max_elem = _lane_reduce(outer, n, lanes, lambda i, k: x(*full(i, k)), "max", f"T_{op}_maxelem")
    if op != "softmax":  # the exponentials are only summed
        expsum = _lane_reduce(
            outer, n, lanes, lambda i, k: _exp_shifted(shifted(i, k)), "sum", f"T_{op}_expsum"
        )
        return max_elem, None, expsum, ax
    exps = compute(
        x.shape,
        lambda *i: _exp_shifted(x(*i) - max_elem(*i[:ax], *i[ax + 1 :])),
        name=f"T_{op}_exp",
        tag=tag.SOFTMAX_EXP,
    )
    expsum = _lane_reduce(outer, n, lanes, lambda i, k: exps(*full(i, k)), "sum", f"T_{op}_expsum")
    return max_elem, exps, expsum, ax


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((2, 5), name="x")
    >>> topi.nn.softmax(x).op.tag
    'softmax_output'
    """
    max_elem, exps, expsum, ax = _softmax_stages(x, axis, "softmax")

    def body(*i: Var) -> PrimExpr:
        rest = [*i[:ax], *i[ax + 1 :]]
        # One division per row: the row is scaled by the reciprocal of its sum.
        scale = const(1.0, expsum.dtype) / expsum(*rest)
        if exps is not None:
            return exps(*i) * scale
        return _exp_shifted(x(*i) - max_elem(*rest)) * scale

    return compute(x.shape, body, name="T_softmax_norm", tag=tag.SOFTMAX_OUTPUT, attrs={"axis": ax})


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    max_elem, _, expsum, ax = _softmax_stages(x, axis, "log_softmax")

    def body(*i: Var) -> PrimExpr:
        rest = [*i[:ax], *i[ax + 1 :]]
        return x(*i) - max_elem(*rest) - log(expsum(*rest))

    return compute(
        x.shape, body, name="T_log_softmax_norm", tag=tag.LOG_SOFTMAX_OUTPUT, attrs={"axis": ax}
    )


def layer_norm(
    data: Tensor,
    gamma: Tensor,
    beta: Tensor | None,
    axis: int | Sequence[int],
    epsilon: float = 1e-5,
) -> Tensor:
    """``(data - mean) / sqrt(var + epsilon) * gamma + beta`` over the (trailing) ``axis``.

    ``gamma`` and ``beta`` have the shape of the normalized axes.
    """
    op = "layer_norm"
    axes = normalize_axes(op, axis, data.ndim)
    norm_shape = [const_int(data.shape[a]) for a in axes]
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t is not None and [const_int(d) for d in t.shape] != norm_shape:
            raise op_error(op, f"{name} shape", [str(d) for d in t.shape], str(norm_shape))
    if epsilon < 0:
        raise op_error(op, "epsilon", epsilon, "a non-negative float")
    keep = [k for k in range(data.ndim) if k not in axes]
    outer = [data.shape[k] for k in keep]
    dtype = data.dtype
    wide = stats_dtype(dtype)
    count = prod([data.shape[a] for a in axes]).astype(wide)

    def x(*i: PrimExpr) -> PrimExpr:
        return data(*i).astype(wide)

    def point(i: Sequence[Var], red: Sequence[IterVar]) -> list[PrimExpr]:
        res: list[PrimExpr] = [const(0)] * data.ndim
        for k, v in zip(keep, i, strict=True):
            res[k] = v
        for a, r in zip(axes, red, strict=True):
            res[a] = r.var
        return res

    lanes = _row_lanes(data, axes[0]) if len(axes) == 1 else None
    if lanes is not None:  # one trailing axis: sums in vector lanes
        n = data.shape[axes[0]]

        def centered(i: Sequence[PrimExpr], k: PrimExpr) -> PrimExpr:
            d = x(*i, k) - mean(*i)
            return d * d / count

        mean = _row_reduce(
            outer, n, lanes, lambda i, k: x(*i, k) / count, _sum, "T_layer_norm_mean"
        )
        var = _row_reduce(outer, n, lanes, centered, _sum, "T_layer_norm_var")
    else:
        r1 = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]
        mean = compute(
            outer,
            lambda *i: _sum(x(*point(i, r1)) / count, axis=r1),
            name="T_layer_norm_mean",
            tag=tag.COMM_REDUCE,
        )
        r2 = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

        def sq(*i: Var) -> PrimExpr:
            d = x(*point(i, r2)) - mean(*i)
            return _sum(d * d / count, axis=r2)  # type: ignore[no-any-return]

        var = compute(outer, sq, name="T_layer_norm_var", tag=tag.COMM_REDUCE)

    def body(*i: Var) -> PrimExpr:
        rest = [i[k] for k in keep]
        norm_idx = [i[a] for a in axes]
        v: PrimExpr
        if wide == dtype:
            scale = rsqrt(var(*rest) + const(epsilon, dtype)) * gamma(*norm_idx)
            v = (data(*i) - mean(*rest)) * scale
        else:  # statistics in float32; the normalized value rounds before gamma and beta
            v = (x(*i) - mean(*rest)) * rsqrt(var(*rest) + const(epsilon, wide))
            v = v.astype(dtype) * gamma(*norm_idx)
        return v + beta(*norm_idx) if beta is not None else v

    trailing = axes == list(range(len(keep), data.ndim))
    attrs = {"axis": len(keep)} if trailing else {}
    return compute(data.shape, body, name="T_layer_norm", tag=tag.LAYER_NORM_OUTPUT, attrs=attrs)
