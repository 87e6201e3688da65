"""Normalizing along axes: ``softmax``, ``log_softmax``, ``layer_norm``, ``batch_norm``.

Each is a few stages (a reduction, then elementwise work reading it), tagged so schedules find
them: the final stage of a softmax has tag ``softmax_output`` (``log_softmax_output``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ffi.errors import OpAttributeUnImplemented
from ...te.operation import compute, reduce_axis
from ...te.reduction import max as _max
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import IterVar, PrimExpr, Var, const
from ...tir.op import exp, log, rsqrt
from .. import tag
from .._shape import const_int, normalize_axes, normalize_axis, op_error, prod

__all__ = ["batch_norm", "layer_norm", "log_softmax", "softmax"]


def _along(idx: Sequence[Var], axis: int, value: PrimExpr) -> list[PrimExpr]:
    out: list[PrimExpr] = list(idx)
    out[axis] = value
    return out


def _softmax_stages(x: Tensor, axis: int, op: str) -> tuple[Tensor, Tensor, int]:
    ax = normalize_axis(op, axis, x.ndim)
    outer = [d for k, d in enumerate(x.shape) if k != ax]

    def full(idx: Sequence[Var], v: PrimExpr) -> list[PrimExpr]:
        res: list[PrimExpr] = list(idx[:ax])
        return [*res, v, *idx[ax:]]

    k1 = reduce_axis((0, x.shape[ax]), name="k")
    max_elem = compute(
        outer,
        lambda *i: _max(x(*full(i, k1.var)), axis=k1),
        name=f"T_{op}_maxelem",
        tag=tag.COMM_REDUCE,
    )
    k2 = reduce_axis((0, x.shape[ax]), name="k")
    expsum = compute(
        outer,
        lambda *i: _sum(exp(x(*full(i, k2.var)) - max_elem(*i)), axis=k2),
        name=f"T_{op}_expsum",
        tag=tag.COMM_REDUCE,
    )
    return max_elem, expsum, ax


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((2, 5), name="x")
    >>> topi.nn.softmax(x).op.tag
    'softmax_output'
    """
    max_elem, expsum, ax = _softmax_stages(x, axis, "softmax")

    def body(*i: Var) -> PrimExpr:
        rest = [*i[:ax], *i[ax + 1 :]]
        return exp(x(*i) - max_elem(*rest)) / expsum(*rest)

    return compute(  # type: ignore[no-any-return]
        x.shape, body, name="T_softmax_norm", tag="softmax_output", attrs={"axis": ax}
    )


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    max_elem, expsum, ax = _softmax_stages(x, axis, "log_softmax")

    def body(*i: Var) -> PrimExpr:
        rest = [*i[:ax], *i[ax + 1 :]]
        return x(*i) - max_elem(*rest) - log(expsum(*rest))

    return compute(  # type: ignore[no-any-return]
        x.shape, body, name="T_log_softmax_norm", tag="log_softmax_output", attrs={"axis": ax}
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
    count = prod([data.shape[a] for a in axes]).astype(dtype)

    def point(i: Sequence[Var], red: Sequence[IterVar]) -> list[PrimExpr]:
        res: list[PrimExpr] = [const(0)] * data.ndim
        for k, v in zip(keep, i, strict=True):
            res[k] = v
        for a, r in zip(axes, red, strict=True):
            res[a] = r.var
        return res

    r1 = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]
    mean = compute(
        outer,
        lambda *i: _sum(data(*point(i, r1)) / count, axis=r1),
        name="T_layer_norm_mean",
        tag=tag.COMM_REDUCE,
    )
    r2 = [reduce_axis((0, data.shape[a]), name=f"k{a}") for a in axes]

    def sq(*i: Var) -> PrimExpr:
        d = data(*point(i, r2)) - mean(*i)
        return _sum(d * d / count, axis=r2)  # type: ignore[no-any-return]

    var = compute(outer, sq, name="T_layer_norm_var", tag=tag.COMM_REDUCE)

    def body(*i: Var) -> PrimExpr:
        rest = [i[k] for k in keep]
        norm_idx = [i[a] for a in axes]
        scale = rsqrt(var(*rest) + const(epsilon, dtype)) * gamma(*norm_idx)
        v: PrimExpr = (data(*i) - mean(*rest)) * scale
        return v + beta(*norm_idx) if beta is not None else v

    trailing = axes == list(range(len(keep), data.ndim))
    attrs = {"axis": len(keep)} if trailing else {}
    return compute(  # type: ignore[no-any-return]
        data.shape, body, name="T_layer_norm", tag="layer_norm_output", attrs=attrs
    )


def batch_norm(
    data: Tensor,
    gamma: Tensor,
    beta: Tensor,
    moving_mean: Tensor,
    moving_var: Tensor,
    axis: int | None = None,
    epsilon: float | None = None,
    center: bool | None = None,
    scale: bool | None = None,
    training: bool | None = None,
    momentum: float | None = None,
) -> list[Tensor]:
    """Inference batch normalization along ``axis`` (default 1): returns
    ``[out, moving_mean, moving_var]`` as TVM does; ``out`` is
    ``(data - mean) / sqrt(var + epsilon) * gamma + beta`` (``gamma`` only when ``scale``,
    ``beta`` only when ``center``; both default to True).
    """
    op = "batch_norm"
    if training:
        raise OpAttributeUnImplemented("batch_norm: training=True is not supported (inference)")
    ax = normalize_axis(op, 1 if axis is None else axis, data.ndim)
    eps = 1e-5 if epsilon is None else epsilon
    if eps < 0:
        raise op_error(op, "epsilon", epsilon, "a non-negative float")
    channels = const_int(data.shape[ax])
    for name, t in (
        ("gamma", gamma),
        ("beta", beta),
        ("moving_mean", moving_mean),
        ("moving_var", moving_var),
    ):
        if t.ndim != 1 or const_int(t.shape[0]) != channels:
            raise op_error(op, f"{name} shape", [str(d) for d in t.shape], f"[{channels}]")
    use_scale = True if scale is None else scale
    use_center = True if center is None else center
    dtype = data.dtype

    def body(*i: Var) -> PrimExpr:
        c = i[ax]
        v = (data(*i) - moving_mean(c)) * rsqrt(moving_var(c) + const(eps, dtype))
        if use_scale:
            v = v * gamma(c)
        if use_center:
            v = v + beta(c)
        return v

    out = compute(data.shape, body, name="T_batch_norm", tag=tag.BROADCAST + ",batch_norm")
    _ = momentum
    return [out, moving_mean, moving_var]
