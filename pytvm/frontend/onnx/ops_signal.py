"""Converter of ONNX's ``DFT`` (opsets 17 and 20): the discrete Fourier transform of a real
(last dimension 1) or complex (last dimension 2) signal along one axis, optionally inverse,
one-sided, or of the signal cut or zero-padded to ``dft_length``.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr, Tuple
from .node import ConverterTable, NodeContext

__all__ = ["SIGNAL_CONVERTERS"]


def _axis(ctx: NodeContext, rank: int) -> int:
    """The signal axis in ``[0, rank - 2]`` (ONNX's accepted range: never the last, complex
    axis; a negative axis counts from the back, ``-2`` being the last signal axis).
    """
    if ctx.opset >= 20:  # noqa: PLR2004 - an optional input, default -2
        axis = ctx.ints(2, "axis")[0] if ctx.has(2) else -2
    else:
        axis = int(ctx.attr("axis", 1))
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):  # noqa: PLR2004
        raise ctx.error(f"axis {axis} is not a signal axis of a {rank}-d input")
    axis %= rank
    return axis


def _slice(ctx: NodeContext, x: Expr, axis: int, begin: int, end: int) -> Expr:
    return ctx.call("strided_slice", x, begin=(begin,), end=(end,), strides=(1,), axes=(axis,))


def _dft(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    rank = len(shape)
    if rank < 2 or shape[-1] not in (1, 2):  # noqa: PLR2004
        raise ctx.error(f"the input has shape {list(shape)}; expected [batch, ..., 1 or 2]")
    axis = _axis(ctx, rank)
    inverse, onesided = bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0))
    if onesided and inverse:
        raise ctx.error("onesided with inverse is not defined")
    x = ctx.expr(0)
    parts = [ctx.call("squeeze", _slice(ctx, x, rank - 1, c, c + 1), axis=(rank - 1,))
             for c in range(shape[-1])]  # fmt: skip
    sig = list(shape[:-1])
    if len(parts) == 1:
        parts.append(ctx.const(np.zeros(sig, dtype=ctx.dtype(0))))
    n = sig[axis]
    length = n
    given = ctx.ints(1, "dft_length") if ctx.has(1) else []
    if given:
        length = given[0]
    if length < 1:
        raise ctx.error(f"dft_length {length} must be positive")
    if length < n:
        parts = [_slice(ctx, p, axis, 0, length) for p in parts]
    elif length > n:
        pad_shape = [*sig[:axis], length - n, *sig[axis + 1 :]]
        ctx.check_constant(pad_shape, ctx.dtype(0), "the zero padding")
        zeros = ctx.const(np.zeros(pad_shape, dtype=ctx.dtype(0)))
        parts = [ctx.call("concatenate", Tuple((p, zeros)), axis=axis) for p in parts]
    last = len(sig) - 1
    if axis != last:
        order = [*range(axis), *range(axis + 1, len(sig)), axis]
        parts = [ctx.call("transpose", p, axes=tuple(order)) for p in parts]
    out = ctx.call("dft", parts[0], parts[1], inverse=inverse)
    re, im = ctx.item(out, 0), ctx.item(out, 1)
    if axis != last:
        back = [*range(axis), last, *range(axis, last)]
        re, im = (ctx.call("transpose", p, axes=tuple(back)) for p in (re, im))
    if onesided:
        re, im = (_slice(ctx, p, axis, 0, length // 2 + 1) for p in (re, im))
    stacked = [ctx.call("expand_dims", p, axis=len(sig)) for p in (re, im)]
    return ctx.call("concatenate", Tuple(tuple(stacked)), axis=len(sig))


SIGNAL_CONVERTERS: ConverterTable = {"DFT": (17, _dft)}
