"""Constant integer bounds of expressions: interval arithmetic over the bounds of variables."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import expr as E
from ..expr import PrimExpr, Var

__all__ = ["NEG_INF", "POS_INF", "ConstIntBound", "Interval", "interval_of"]

#: The bound of an unknown value, as TVM spells it (``ConstIntBound.POS_INF``).
POS_INF = 2**63 - 1
NEG_INF = -POS_INF

#: A closed interval whose ends may be ``-math.inf`` / ``math.inf``.
Interval = tuple[float, float]
_ANY: Interval = (-math.inf, math.inf)


@dataclass(frozen=True, slots=True)
class ConstIntBound:
    """The closed interval ``[min_value, max_value]``; ``NEG_INF``/``POS_INF`` mean unbounded."""

    min_value: int
    max_value: int

    POS_INF = POS_INF
    NEG_INF = NEG_INF

    @property
    def min(self) -> int:
        """The smallest value (``NEG_INF`` when unbounded)."""
        return self.min_value

    @property
    def max(self) -> int:
        """The largest value (``POS_INF`` when unbounded)."""
        return self.max_value

    @staticmethod
    def from_interval(lo: float, hi: float) -> ConstIntBound:
        """The bound of an interval whose ends may be infinite."""
        low = NEG_INF if lo <= NEG_INF else int(lo)
        high = POS_INF if hi >= POS_INF else int(hi)
        return ConstIntBound(low, high)

    def interval(self) -> Interval:
        """The bound as an interval with ``math.inf`` ends."""
        lo = -math.inf if self.min_value <= NEG_INF else self.min_value
        hi = math.inf if self.max_value >= POS_INF else self.max_value
        return (lo, hi)


def _mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0
    return x * y


def _corners(a: Interval, b: Interval, op: Callable[[float, float], float]) -> Interval:
    values = [op(x, y) for x in a for y in b]
    return (min(values), max(values))


def _floordiv(a: Interval, b: Interval) -> Interval:
    lo_b, hi_b = b
    finite = not (math.isinf(lo_b) or math.isinf(hi_b))
    if finite and (lo_b > 0 or hi_b < 0):

        def div(x: float, y: float) -> float:
            return x * (1 if y > 0 else -1) if math.isinf(x) else x // y

        return _corners(a, b, div)
    if lo_b > 0 and a[0] >= 0:
        return (0, a[1] if math.isinf(a[1]) else a[1] // lo_b)
    return _ANY


def _floormod(a: Interval, b: Interval) -> Interval:
    lo_b, hi_b = b
    if lo_b > 0:
        if a[0] >= 0 and a[1] < lo_b:
            return a
        return (0, hi_b - 1)
    return _ANY


def _trunc(x: float, y: float) -> float:
    if math.isinf(x):
        return x * (1 if y > 0 else -1)
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def _truncdiv(a: Interval, b: Interval) -> Interval:
    lo_b, hi_b = b
    if a[0] >= 0 and lo_b > 0:
        return _floordiv(a, b)
    if not (math.isinf(lo_b) or math.isinf(hi_b)) and (lo_b > 0 or hi_b < 0):
        return _corners(a, b, _trunc)  # monotonic in each argument on one side of zero
    if lo_b > 0 or hi_b < 0:
        m = max(abs(a[0]), abs(a[1]))
        return (-m, m)
    return _ANY


def _truncmod(a: Interval, b: Interval) -> Interval:
    m = max(abs(b[0]), abs(b[1])) - 1  # |a % b| < |b|, with the sign of a
    if a[0] >= 0:
        return (0, min(a[1], m))
    if a[1] <= 0:
        return (max(a[0], -m), 0)
    return (max(a[0], -m), min(a[1], m))


def _dtype_range(dtype: str) -> Interval:
    if dtype == "bool":
        return (0, 1)
    if dtype.startswith("uint"):
        bits = int(dtype[4:].split("x", maxsplit=1)[0] or 32)
        return (0, 2**bits - 1)
    if dtype.startswith("int"):
        bits = int(dtype[3:].split("x", maxsplit=1)[0] or 32)
        return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return _ANY


def interval_of(  # noqa: PLR0911 - one case per node kind
    e: PrimExpr, var_bounds: Mapping[Var, Interval]
) -> Interval:
    """The interval holding every value of integer expression ``e``."""
    if isinstance(e, E.IntImm):
        return (e.value, e.value)
    if isinstance(e, Var):
        return var_bounds.get(e, _unknown(e.dtype))
    if isinstance(e, E.Ramp):
        base = interval_of(e.base, var_bounds)
        last = interval_of(e.base + e.stride * (e.lanes - 1), var_bounds)
        return (min(base[0], last[0]), max(base[1], last[1]))
    if isinstance(e, E.Broadcast):
        return interval_of(e.value, var_bounds)
    if isinstance(e, E.Cast):
        inner = interval_of(e.value, var_bounds)
        limit = _dtype_range(e.dtype)
        if limit[0] <= inner[0] and inner[1] <= limit[1]:
            return inner
        return limit
    if isinstance(e, E.Select):
        t = interval_of(e.true_value, var_bounds)
        f = interval_of(e.false_value, var_bounds)
        return (min(t[0], f[0]), max(t[1], f[1]))
    if isinstance(e, E.Call) and e.op == "tir.if_then_else":
        t = interval_of(e.args[1], var_bounds)
        f = interval_of(e.args[2], var_bounds)
        return (min(t[0], f[0]), max(t[1], f[1]))
    if isinstance(e, E.Let):
        scope = dict(var_bounds)
        scope[e.var] = interval_of(e.value, var_bounds)
        return interval_of(e.body, scope)
    if isinstance(e, E.BinaryOp) and not isinstance(e, (E.CmpOp, E.And, E.Or)):
        a = interval_of(e.a, var_bounds)
        b = interval_of(e.b, var_bounds)
        return _binary(e, a, b)
    return _unknown(e.dtype)


def _binary(e: E.BinaryOp, a: Interval, b: Interval) -> Interval:  # noqa: PLR0911
    if isinstance(e, E.Add):
        return (a[0] + b[0], a[1] + b[1])
    if isinstance(e, E.Sub):
        return (a[0] - b[1], a[1] - b[0])
    if isinstance(e, E.Mul):
        return _corners(a, b, _mul)
    if isinstance(e, E.FloorDiv):
        return _floordiv(a, b)
    if isinstance(e, E.FloorMod):
        return _floormod(a, b)
    if isinstance(e, E.Div):
        return _truncdiv(a, b)
    if isinstance(e, E.Mod):
        return _truncmod(a, b)
    if isinstance(e, E.Min):
        return (min(a[0], b[0]), min(a[1], b[1]))
    if isinstance(e, E.Max):
        return (max(a[0], b[0]), max(a[1], b[1]))
    return _unknown(e.dtype)


def _unknown(dtype: str) -> Interval:
    return (0, 1) if dtype.startswith("bool") else _ANY
