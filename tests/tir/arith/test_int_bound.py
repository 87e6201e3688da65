from __future__ import annotations

import itertools
import math

from pytvm import tir
from pytvm.tir.arith.int_bound import interval_of


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_OPS = {
    tir.Add: lambda a, b: a + b,
    tir.Sub: lambda a, b: a - b,
    tir.Mul: lambda a, b: a * b,
    tir.FloorDiv: lambda a, b: a // b,
    tir.FloorMod: lambda a, b: a % b,
    tir.Div: _c_div,
    tir.Mod: lambda a, b: a - _c_div(a, b) * b,
    tir.Min: min,
    tir.Max: max,
}


def test_every_operator_bound_holds_exhaustively() -> None:
    x, y = tir.Var("x"), tir.Var("y")
    ends = range(-4, 5)
    intervals = [(lo, hi) for lo in ends for hi in ends if lo <= hi]
    for cls, op in _OPS.items():
        for ix, iy in itertools.product(intervals, intervals):
            divides = cls in (tir.FloorDiv, tir.FloorMod, tir.Div, tir.Mod)
            if divides and iy[0] <= 0 <= iy[1]:
                continue
            lo, hi = interval_of(cls(x, y), {x: ix, y: iy})
            values = [op(a, b) for a in range(ix[0], ix[1] + 1) for b in range(iy[0], iy[1] + 1)]  # type: ignore[operator]
            assert lo <= min(values) and max(values) <= hi, (cls.__name__, ix, iy, lo, hi)


def test_unbounded_operands_stay_sound() -> None:
    x, y = tir.Var("x"), tir.Var("y")
    half = {x: (0, math.inf), y: (3, 3)}
    assert interval_of(tir.FloorDiv(x, y), half) == (0, math.inf)
    assert interval_of(tir.FloorMod(x, y), half) == (0, 2)
    assert interval_of(tir.Mod(x, y), half) == (0, 2)
    assert interval_of(x - x, half) == (-math.inf, math.inf)
