"""Where the pooled axes are in a layout, and the window of one pooled axis (TVM's rules)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...ffi.errors import TVMValueError
from ...te.tensor import Tensor
from ...tir.expr import ExprLike, PrimExpr, const
from ...tir.op import max as emax
from ...tir.op import min as emin
from .._shape import const_int, op_error

__all__ = ["PoolAxis", "constant_shape", "ints", "pool_axes", "pool_windows", "taps_in"]

POOL_TYPES = ("max", "avg")
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def pool_axes(op: str, data: Tensor, layout: str, ndim: int) -> list[int]:
    """The positions in ``data`` of the ``ndim`` pooled axes (``D``, ``H``, ``W`` of ``layout``,
    which may carry split channel axes such as ``NCHW16c`` but no split pooled axis).
    """
    letters = [ch for ch in layout if ch.isalpha()]
    if len(letters) != data.ndim:
        raise TVMValueError(
            f"{op}: Unsupported layout {layout} for a {data.ndim}-d input; expected one letter "
            "per axis"
        )
    axes = []
    for name in _SPATIAL[ndim]:
        if letters.count(name) != 1 or name.lower() in letters:
            raise TVMValueError(
                f"{op}: Unsupported layout {layout}; expected one unsplit {name} axis "
                f"(pooled axes {_SPATIAL[ndim]} may not be tiled)"
            )
        axes.append(letters.index(name))
    return axes


def ints(op: str, attr: str, values: Sequence[ExprLike] | ExprLike, n: int) -> list[int]:
    """``values`` (or one value repeated) as ``n`` constant ints."""
    seq: list[Any] = list(values) if isinstance(values, (list, tuple)) else [values] * n
    out = [const_int(v) for v in seq]
    if len(out) != n or any(v is None for v in out):
        raise op_error(op, attr, values, f"{n} constant ints")
    return [v for v in out if v is not None]


def constant_shape(op: str, data: Tensor) -> list[int]:
    """The constant dimensions of ``data``."""
    dims = [const_int(d) for d in data.shape]
    if any(d is None for d in dims):
        raise op_error(op, "input shape", [str(d) for d in data.shape], "constant dimensions")
    return [d for d in dims if d is not None]


@dataclass(frozen=True, slots=True)
class PoolAxis:
    """The window along one pooled axis: input ``size``, ``kernel``, ``stride``, ``dilation``,
    the padding before and after (``after`` without the ceil-mode extra) and ``out`` windows.
    """

    size: int
    kernel: int
    stride: int
    dilation: int
    before: int
    after: int
    out: int

    def start(self, o: PrimExpr) -> PrimExpr:
        """The input index of window ``o``'s first tap (negative in the leading padding)."""
        return o * self.stride - self.before


def pool_windows(
    op: str,
    sizes: Sequence[int],
    kernel: Sequence[ExprLike],
    stride: Sequence[ExprLike],
    dilation: Sequence[ExprLike],
    padding: Sequence[ExprLike],
    ceil_mode: bool,
) -> list[PoolAxis]:
    """One :class:`PoolAxis` per pooled axis. ``padding`` is all the ``before`` pads, then all the
    ``after`` pads. The output size is TVM's: ``(size + pads - dilated kernel) / stride + 1``
    rounded down, or up with ``ceil_mode`` (a last window may then start in the trailing padding).
    """
    n = len(sizes)
    ks = ints(op, "kernel", kernel, n)
    ss = ints(op, "stride", stride, n)
    ds = ints(op, "dilation", dilation, n)
    ps = ints(op, "padding", padding, 2 * n)
    for attr, vals, given in (
        ("kernel", ks, kernel),
        ("stride", ss, stride),
        ("dilation", ds, dilation),
    ):
        if min(vals) < 1:
            raise op_error(op, attr, tuple(given), "positive ints")
    if min(ps) < 0:
        raise op_error(op, "padding", tuple(padding), "non-negative ints")
    out = []
    for i, size in enumerate(sizes):
        before, after = ps[i], ps[i + n]
        span = size + before + after - ((ks[i] - 1) * ds[i] + 1)
        if span < 0:
            raise op_error(op, "kernel", ks, f"dilated windows within the padded input {sizes}")
        extra = ss[i] - 1 if ceil_mode else 0
        out.append(PoolAxis(size, ks[i], ss[i], ds[i], before, after, (span + extra) // ss[i] + 1))
    return out


def taps_in(start: PrimExpr, axis: PoolAxis, lo: int, hi: int) -> PrimExpr:
    """How many taps ``start + r * dilation`` (``r < kernel``) lie in ``[lo, hi)``."""
    d = axis.dilation
    r_lo = emax(const(0), (lo - start + d - 1) // d)
    r_hi = emin(const(axis.kernel - 1), (hi - 1 - start) // d)
    return emax(r_hi - r_lo + 1, const(0))
