"""Normalizations over groups of features: ``group_norm``, ``instance_norm``, ``rms_norm``.

Statistics of float16 data are taken in float32 (:func:`stats_dtype`); ``group_norm`` rounds
the normalized value to the data's type before ``gamma`` and ``beta`` apply, ``rms_norm``
scales in float32 and rounds once, as TVM's kernels do.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import rsqrt
from .. import tag
from .._shape import const_int, normalize_axes, normalize_axis, op_error, prod
from .normalization import layer_norm, stats_dtype

__all__ = ["group_norm", "instance_norm", "rms_norm"]


def group_norm(
    data: Tensor,
    gamma: Tensor | None,
    beta: Tensor | None,
    num_groups: int,
    channel_axis: int,
    axes: Sequence[int],
    epsilon: float = 1e-5,
) -> Tensor:
    """Normalize over ``axes`` and the channels of each of ``num_groups`` groups of channels
    (``channel_axis``), then scale and shift each channel by ``gamma`` and ``beta`` (``[C]``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((2, 4, 16), name="x")
    >>> g = te.placeholder((4,), name="g")
    >>> [str(d) for d in topi.nn.group_norm(x, g, g, 2, 1, (2,)).shape]
    ['2', '4', '16']
    """
    op = "group_norm"
    ch = normalize_axis(op, channel_axis, data.ndim, "channel_axis")
    spatial = normalize_axes(op, list(axes), data.ndim)
    if ch in spatial:
        raise op_error(op, "axes", list(axes), f"axes other than the channel axis {ch}")
    channels = const_int(data.shape[ch])
    if channels is None or num_groups < 1 or channels % num_groups:
        raise op_error(op, "num_groups", num_groups, f"a divisor of the {channels} channels")
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t is not None and [const_int(d) for d in t.shape] != [channels]:
            raise op_error(op, f"{name} shape", [str(d) for d in t.shape], f"[{channels}]")
    size = channels // num_groups
    dtype, wide = data.dtype, stats_dtype(data.dtype)
    keep = [k for k in range(data.ndim) if k not in spatial]
    stats_shape = [const(num_groups) if k == ch else data.shape[k] for k in keep]
    count = (prod([data.shape[a] for a in spatial]) * size).astype(wide)

    def point(i: Sequence[PrimExpr], rc: Var, rs: Sequence[Var]) -> list[PrimExpr]:
        at: list[PrimExpr] = [const(0)] * data.ndim
        for k, v in zip(keep, i, strict=True):
            at[k] = v * size + rc if k == ch else v
        for a, r in zip(spatial, rs, strict=True):
            at[a] = r
        return at

    def reduction(name: str) -> tuple[Var, list[Var], list[object]]:
        rc = reduce_axis((0, size), name=f"{name}_c")
        rs = [reduce_axis((0, data.shape[a]), name=f"{name}{a}") for a in spatial]
        return rc.var, [r.var for r in rs], [rc, *rs]

    c1, s1, axes1 = reduction("k")

    def mean_of(*i: Var) -> PrimExpr:
        return _sum(data(*point(i, c1, s1)).astype(wide) / count, axis=axes1)  # type: ignore[no-any-return]

    mean = compute(stats_shape, mean_of, name="T_group_norm_mean", tag=tag.COMM_REDUCE)
    c2, s2, axes2 = reduction("j")

    def var_of(*i: Var) -> PrimExpr:
        d = data(*point(i, c2, s2)).astype(wide) - mean(*i)
        return _sum(d * d / count, axis=axes2)  # type: ignore[no-any-return]

    var = compute(stats_shape, var_of, name="T_group_norm_var", tag=tag.COMM_REDUCE)

    def body(*i: Var) -> PrimExpr:
        at = [i[k] // size if k == ch else i[k] for k in keep]
        v = (data(*i).astype(wide) - mean(*at)) * rsqrt(var(*at) + const(epsilon, wide))
        v = v.astype(dtype)
        if gamma is not None:
            v = v * gamma(i[ch])
        return v + beta(i[ch]) if beta is not None else v

    return compute(data.shape, body, name="T_group_norm", tag=tag.INJECTIVE)


def instance_norm(
    data: Tensor,
    gamma: Tensor,
    beta: Tensor | None,
    axis: int | Sequence[int],
    epsilon: float = 1e-5,
) -> Tensor:
    """Normalize each instance and channel over the (spatial) ``axis``, with ``gamma`` and
    ``beta`` of those axes' extents: :func:`layer_norm` over ``axis``, as TVM defines it.
    """
    return layer_norm(data, gamma, beta, axis, epsilon)


def rms_norm(
    data: Tensor, weight: Tensor, axis: int | Sequence[int], epsilon: float = 1e-5
) -> Tensor:
    """``data / sqrt(mean(data ** 2 over axis) + epsilon) * weight``; ``weight`` has the shape
    of the ``axis`` extents. Float16 is computed in float32 and rounded once.
    """
    op = "rms_norm"
    axes = normalize_axes(op, axis, data.ndim)
    if weight.ndim != len(axes):
        raise op_error(op, "weight rank", weight.ndim, f"{len(axes)} (one extent per axis)")
    dtype, wide = data.dtype, stats_dtype(data.dtype)
    keep = [k for k in range(data.ndim) if k not in axes]
    count = prod([data.shape[a] for a in axes]).astype(wide)
    red = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

    def square_mean(*i: Var) -> PrimExpr:
        at: list[PrimExpr] = [const(0)] * data.ndim
        for k, v in zip(keep, i, strict=True):
            at[k] = v
        for a, r in zip(axes, red, strict=True):
            at[a] = r.var
        x = data(*at).astype(wide)
        return _sum(x * x / count, axis=red)  # type: ignore[no-any-return]

    outer = [data.shape[k] for k in keep]
    ms = compute(outer, square_mean, name="T_rms_norm_square_mean", tag=tag.COMM_REDUCE)

    def body(*i: Var) -> PrimExpr:
        scale = rsqrt(ms(*[i[k] for k in keep]) + const(epsilon, wide))
        v = data(*i).astype(wide) * scale * weight(*[i[a] for a in axes]).astype(wide)
        return v.astype(dtype)

    return compute(data.shape, body, name="T_rms_norm", tag=tag.INJECTIVE)
