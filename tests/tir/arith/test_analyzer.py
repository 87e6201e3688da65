from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytvm import tir
from pytvm.tir.arith import NEG_INF, POS_INF, Analyzer, ConstIntBound

x, y, z = tir.Var("x"), tir.Var("y"), tir.Var("z")


def _range(lo: int, extent: int) -> tir.Range:
    return tir.Range.from_min_extent(lo, extent)


def test_div_mod_with_known_remainder_bound() -> None:
    ana = Analyzer()
    ana.bind(y, _range(0, 4))
    tir.assert_structural_equal(ana.simplify((x * 4 + y) // 4), x)
    tir.assert_structural_equal(ana.simplify((x * 4 + y) % 4), y)
    tir.assert_structural_equal(ana.simplify((x * 8 + y * 2) // 2), x * 4 + y)


def test_linear_terms_are_collected() -> None:
    ana = Analyzer()
    tir.assert_structural_equal(ana.simplify(x * 4 + y - x * 3 + 2 * x + 5 - 5), x * 3 + y)
    tir.assert_structural_equal(ana.simplify((x + 1) * 2 - x - 2), x)


def test_split_index_recombines() -> None:
    ana = Analyzer()
    ana.bind(x, _range(0, 12))
    tir.assert_structural_equal(ana.simplify(x // 4 * 4 + x % 4), x)


def test_min_max_with_provable_order() -> None:
    ana = Analyzer()
    ana.bind(y, _range(0, 4))
    tir.assert_structural_equal(ana.simplify(tir.min(y, 10)), y)
    tir.assert_structural_equal(ana.simplify(tir.max(y, 10)), tir.const(10))
    tir.assert_structural_equal(ana.simplify(tir.min(x, x + 1)), x)


def test_symbolic_loop_bound_is_proved() -> None:
    n = tir.Var("n")
    ana = Analyzer()
    ana.bind(x, _range(0, n))  # type: ignore[arg-type]
    assert ana.can_prove(x < n)
    assert not ana.can_prove(x < n - 1)
    tir.assert_structural_equal(ana.simplify(n - n // 8 * 8), tir.floormod(n, 8))


def test_const_int_bound_and_unknown() -> None:
    ana = Analyzer()
    ana.bind(y, _range(2, 3))
    assert ana.const_int_bound(y * 2 + 1) == ConstIntBound(5, 9)
    assert ana.const_int_bound(y % 3) == ConstIntBound(0, 2)
    unknown = ana.const_int_bound(x)
    assert (unknown.min_value, unknown.max_value) == (NEG_INF, POS_INF)
    assert ana.const_int_bound(x // 0x7FFF + 0).max == POS_INF


def test_bind_twice_needs_override() -> None:
    ana = Analyzer()
    ana.bind(y, _range(0, 4))
    try:
        ana.bind(y, _range(0, 8))
    except ValueError as err:
        assert "already bound" in str(err)
    else:
        raise AssertionError("rebinding should fail")
    ana.bind(y, _range(0, 8), allow_override=True)
    assert ana.const_int_bound(y).max == 7


def test_constraint_scope_decides_repeated_condition() -> None:
    ana = Analyzer()
    n = tir.Var("n")
    with ana.constraint_scope(x < n):
        assert ana.can_prove(x < n)
    assert not ana.can_prove(x < n)
    with ana.constraint_scope(x < 5):
        assert ana.can_prove(x <= 4)


# ---------------------------------------------------------------------- property test


def _eval(e: Any, env: dict[Any, int]) -> int:
    if isinstance(e, tir.IntImm):
        return e.value
    if isinstance(e, tir.Var):
        return env[e]
    if isinstance(e, tir.Select):
        return _eval(e.true_value if _eval(e.condition, env) else e.false_value, env)
    if isinstance(e, tir.Not):
        return int(not _eval(e.a, env))
    if isinstance(e, (tir.And, tir.Or)):
        x, y = _eval(e.a, env), _eval(e.b, env)
        return int(x and y) if isinstance(e, tir.And) else int(x or y)
    a, b = _eval(e.a, env), _eval(e.b, env)
    ops = {
        tir.Add: lambda: a + b,
        tir.Sub: lambda: a - b,
        tir.Mul: lambda: a * b,
        tir.FloorDiv: lambda: a // b,
        tir.FloorMod: lambda: a % b,
        tir.Div: lambda: int(a / b),
        tir.Mod: lambda: a - int(a / b) * b,
        tir.Min: lambda: min(a, b),
        tir.Max: lambda: max(a, b),
        tir.LT: lambda: int(a < b),
        tir.GT: lambda: int(a > b),
        tir.GE: lambda: int(a >= b),
        tir.NE: lambda: int(a != b),
        tir.LE: lambda: int(a <= b),
        tir.EQ: lambda: int(a == b),
    }
    return ops[type(e)]()  # type: ignore[no-untyped-call]


_VARS = (x, y, z)
_BOUNDS = {x: (0, 9), y: (-3, 4), z: (0, 4)}


def _exprs() -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        st.sampled_from(_VARS), st.integers(-8, 8).map(lambda v: tir.const(v, "int32"))
    )

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        arith = st.tuples(
            st.sampled_from([tir.Add, tir.Sub, tir.Mul, tir.Min, tir.Max]), children, children
        ).map(lambda t: t[0](t[1], t[2]))
        divs = st.tuples(
            st.sampled_from([tir.FloorDiv, tir.FloorMod, tir.Div, tir.Mod]),
            children,
            st.integers(-6, 6).filter(lambda v: v != 0),
        ).map(lambda t: t[0](t[1], tir.const(t[2])))
        selects = st.tuples(children, children, children).map(
            lambda t: tir.Select(tir.LT(t[0], t[1]), t[1], t[2])
        )
        return st.one_of(arith, divs, selects)

    return st.recursive(leaves, extend, max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(
    _exprs(),
    st.integers(0, 9),
    st.integers(-3, 4),
    st.integers(0, 4),
    st.sampled_from([tir.LT, tir.LE, tir.EQ, None]),
)
def test_simplify_keeps_value(e: Any, vx: int, vy: int, vz: int, cmp: Any) -> None:
    ana = Analyzer()
    for var, (lo, hi) in _BOUNDS.items():
        ana.bind(var, _range(lo, hi - lo + 1))
    if cmp is not None:
        e = cmp(e, tir.const(vx - vz))
    env = {x: vx, y: vy, z: vz}
    simplified = ana.simplify(e)
    assert _eval(simplified, env) == _eval(e, env), f"{e} -> {simplified}"
    bound = ana.const_int_bound(e)
    assert bound.min_value <= _eval(e, env) <= bound.max_value


def test_ceil_div_tail_is_bounded() -> None:
    n = tir.Var("n")
    ana = Analyzer()
    assert ana.const_int_bound((n + 7) // 8 - n // 8) == ConstIntBound(0, 1)
    for c in (1, 3, 8):
        for d in (-9, -1, 0, 2, 7, 13):
            bound = ana.const_int_bound((n + d) // c - n // c)
            values = {(v + d) // c - v // c for v in range(-40, 40)}
            assert bound.min_value <= min(values) and max(values) <= bound.max_value, (c, d)


def test_int_set_of_indices_over_relaxed_loops() -> None:
    i, j, k, n = (tir.Var(c) for c in "ijkn")
    ana = Analyzer()
    s = ana.int_set(i * 4 + j, {j: _range(0, 4)})
    tir.assert_structural_equal((s.min_value, s.max_value), (i * 4, i * 4 + 3))
    s = ana.int_set((i * 4 + j) // 4, {j: _range(0, 4)})
    tir.assert_structural_equal((s.min_value, s.max_value), (i, i))
    s = ana.int_set(j * 2 - k, {j: _range(0, 4), k: _range(1, n)})  # type: ignore[arg-type]
    assert ana.can_prove(s.min_value == 0 - n) and ana.can_prove(s.max_value == 5)
    s = ana.int_set((i * 4 + j) % 8, {i: _range(0, 2), j: _range(0, 4)})
    tir.assert_structural_equal((s.min_value, s.max_value), (tir.const(0), tir.const(7)))
    assert ana.int_set(j * k, {j: _range(0, 4)}).is_everything()
    r = ana.int_set(tir.min(j, 9) + 1, {j: _range(0, 4)}).to_range()
    tir.assert_structural_equal((r.min, r.extent), (tir.const(1), tir.const(4)))


@settings(max_examples=200, deadline=None)
@given(_exprs(), st.integers(-3, 4))
def test_int_set_contains_every_value(e: Any, vy: int) -> None:
    ana = Analyzer()
    s = ana.int_set(e, {x: _range(0, 10), z: _range(0, 5)})
    values = [_eval(e, {x: vx, y: vy, z: vz}) for vx in range(10) for vz in range(5)]
    env = {y: vy}
    if s.min_value is not None:
        assert _eval(s.min_value, env) <= min(values), f"{e}: min {s.min_value}"
    if s.max_value is not None:
        assert _eval(s.max_value, env) >= max(values), f"{e}: max {s.max_value}"
