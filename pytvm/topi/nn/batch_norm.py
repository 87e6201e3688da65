"""``batch_norm``: normalization per channel by moving statistics, or by the batch's own
(``training``) with the moving statistics updated by ``momentum``.
"""

from __future__ import annotations

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import IterVar, PrimExpr, Var, const
from ...tir.op import rsqrt
from .. import tag
from .._shape import const_int, normalize_axis, op_error, prod

__all__ = ["batch_norm"]


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
    """``[out, mean, var]`` of batch normalization along channel ``axis`` (default 1):
    ``out = (data - mean) / sqrt(var + epsilon) * gamma + beta`` (``gamma`` only when
    ``scale``, ``beta`` only when ``center``; both default to True). Inference uses and
    returns (copies of) the moving statistics; ``training`` uses the batch's mean and
    (biased) variance and returns ``(1 - momentum) * moving + momentum * batch`` for each
    (``momentum`` defaults to 0.1).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((2, 3, 4), name="x")
    >>> p = [te.placeholder((3,), name=n) for n in "gbmv"]
    >>> [str(t.shape[0]) for t in topi.nn.batch_norm(x, *p)]
    ['2', '3', '3']
    """
    op = "batch_norm"
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
    mom = 0.1 if momentum is None else momentum
    if training:
        others = [k for k in range(data.ndim) if k != ax]
        count = prod([data.shape[k] for k in others]).astype(dtype)

        def over(c: Var, red: list[IterVar]) -> list[PrimExpr]:
            at: list[PrimExpr] = []
            it = iter(red)
            for k in range(data.ndim):
                at.append(c if k == ax else next(it).var)
            return at

        r1 = [reduce_axis((0, data.shape[k]), name=f"k{k}") for k in others]
        mean = compute(
            (data.shape[ax],),
            lambda c: _sum(data(*over(c, r1)) / count, axis=r1),
            name="T_batch_norm_mean",
            tag=tag.COMM_REDUCE,
        )
        r2 = [reduce_axis((0, data.shape[k]), name=f"k{k}") for k in others]

        def variance(c: Var) -> PrimExpr:
            d = data(*over(c, r2)) - mean(c)
            return _sum(d * d / count, axis=r2)  # type: ignore[no-any-return]

        var = compute((data.shape[ax],), variance, name="T_batch_norm_var", tag=tag.COMM_REDUCE)
    else:
        mean, var = moving_mean, moving_var

    def body(*i: Var) -> PrimExpr:
        c = i[ax]
        v: PrimExpr = (data(*i) - mean(c)) * rsqrt(var(c) + const(eps, dtype))
        if use_scale:
            v = v * gamma(c)
        if use_center:
            v = v + beta(c)
        return v

    out = compute(data.shape, body, name="T_batch_norm", tag=tag.BROADCAST + ",batch_norm")
    keep, take = const(1.0 - mom, dtype), const(mom, dtype)
    if training:
        new_mean = compute(
            moving_mean.shape,
            lambda c: moving_mean(c) * keep + mean(c) * take,
            name="T_moving_mean",
            tag=tag.ELEMWISE,
        )
        new_var = compute(
            moving_var.shape,
            lambda c: moving_var(c) * keep + var(c) * take,
            name="T_moving_var",
            tag=tag.ELEMWISE,
        )
    else:  # copies, so the three outputs are distinct buffers
        new_mean = compute(moving_mean.shape, moving_mean, name="T_moving_mean", tag=tag.ELEMWISE)
        new_var = compute(moving_var.shape, moving_var, name="T_moving_var", tag=tag.ELEMWISE)
    return [out, new_mean, new_var]
