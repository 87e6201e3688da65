"""The loop IR's expressions: operator rules, type matching, folding, printing, equality."""

from __future__ import annotations

import pytest

from pytvm import tir


def test_python_operators_build_nodes_with_tvm_meanings() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    assert isinstance(i + j, tir.Add)
    assert isinstance(i // j, tir.FloorDiv)
    assert isinstance(i % j, tir.FloorMod)
    assert isinstance(i / j, tir.Div)
    assert isinstance(i < j, tir.LT) and (i < j).dtype == "bool"
    assert isinstance(i == j, tir.EQ)
    assert str(i * 4 + j) == "((i * 4) + j)"


def test_equality_as_bool_means_same_node() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    assert bool(i == i) and not bool(i == j)  # noqa: PLR0124 - the EQ node of one var
    assert bool(i != j)
    table = {i: 1, j: 2}  # nodes key dicts by identity
    assert table[i] == 1


def test_symbolic_expression_refuses_to_be_a_python_bool() -> None:
    i = tir.Var("i")
    with pytest.raises(ValueError, match="Python bool"):
        bool(i < 3)


def test_numbers_take_the_other_sides_type() -> None:
    x = tir.Var("x", "float16")
    n = tir.Var("n", "int64")
    assert (x * 2).dtype == "float16"
    assert (n + 1).dtype == "int64"
    assert (tir.Var("i") + 1.5).dtype == "float32"  # an int meets a float: float


def test_narrow_integers_widen_and_ints_meet_floats_as_floats() -> None:
    a, b = tir.Var("a", "int32"), tir.Var("b", "int64")
    s = a + b
    assert s.dtype == "int64" and isinstance(s, tir.Add) and isinstance(s.a, tir.Cast)
    f = tir.Var("f", "float32")
    assert (a * f).dtype == "float32"


def test_constants_fold_with_c_and_floor_semantics() -> None:
    c = tir.const
    assert (c(7) + c(5)).value == 12  # type: ignore[attr-defined]
    assert tir.truncdiv(-7, 2).value == -3  # type: ignore[attr-defined]
    assert tir.truncmod(-7, 2).value == -1  # type: ignore[attr-defined]
    assert tir.floordiv(-7, 2).value == -4  # type: ignore[attr-defined]
    assert tir.floormod(-7, 2).value == 1  # type: ignore[attr-defined]
    assert (c(3) < c(4)).dtype == "bool"


def test_identities_fold_away() -> None:
    i = tir.Var("i")
    assert (i + 0) is i and (i * 1) is i and (i // 1) is i
    assert isinstance(i * 0, tir.IntImm)


def test_division_by_constant_zero_is_an_error() -> None:
    with pytest.raises(ValueError, match="division by zero"):
        tir.floordiv(tir.const(4), 0)


def test_mismatched_node_types_are_refused() -> None:
    with pytest.raises(TypeError, match="mismatched types"):
        tir.Add(tir.Var("i"), tir.const(1.0))


def test_vector_lanes_broadcast_scalars() -> None:
    r = tir.Ramp(tir.Var("i"), tir.const(1), 8)
    assert r.dtype == "int32x8"
    s = r + 1
    assert s.dtype == "int32x8" and isinstance(s.b, tir.Broadcast)  # type: ignore[attr-defined]


def test_intrinsics_are_calls_and_check_float_operands() -> None:
    x = tir.Var("x", "float32")
    e = tir.exp(x)
    assert isinstance(e, tir.Call) and e.op == "tir.exp" and e.dtype == "float32"
    with pytest.raises(TypeError, match="expected a float"):
        tir.sqrt(tir.Var("n"))
    assert tir.pow(x, 2).dtype == "float32"
    assert isinstance(tir.abs(tir.Var("n")), tir.Select)


def test_if_then_else_with_constant_condition_picks_a_side() -> None:
    x = tir.Var("x", "float32")
    assert tir.if_then_else(True, x, 0.0) is x
    assert isinstance(tir.if_then_else(tir.Var("i") < 3, x, 0.0), tir.Call)


def test_limits_of_types() -> None:
    assert tir.max_value("int8").value == 127  # type: ignore[attr-defined]
    assert tir.min_value("uint8").value == 0  # type: ignore[attr-defined]
    assert tir.min_value("float32").value == float("-inf")  # type: ignore[attr-defined]


def test_structural_equality_renames_bound_variables_only() -> None:
    buf = tir.decl_buffer((8,), "float32", "A")

    def loop(name: str) -> tir.Stmt:
        v = tir.Var(name)
        return tir.For(
            v,
            tir.const(0),
            tir.const(8),
            tir.ForKind.SERIAL,
            tir.BufferStore(buf, buf.vload([v]) + 1.0, (v,)),
        )

    assert tir.structural_equal(loop("i"), loop("k"))
    assert tir.structural_hash(loop("i")) == tir.structural_hash(loop("k"))
    free_a, free_b = tir.Var("n"), tir.Var("n")
    assert not tir.structural_equal(free_a + 1, free_b + 1)
    assert tir.structural_equal(free_a + 1, free_b + 1, map_free_vars=True)
    assert not tir.structural_equal(free_a + 1, free_a + 2)
    with pytest.raises(ValueError, match="differs structurally"):
        tir.assert_structural_equal(free_a + 1, free_a + 2)


def test_printer_names_distinct_variables_apart() -> None:
    a, b = tir.Var("i"), tir.Var("i")
    assert str(a + b) == "(i + i_1)"


def test_substitute_replaces_uses_and_keeps_untouched_nodes() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    e = i * 4 + j
    out = tir.substitute(e, {j: tir.const(2)})
    assert str(out) == "((i * 4) + 2)"
    assert tir.substitute(e, {tir.Var("k"): tir.const(0)}) is e


def test_primfunc_prints_like_a_primfn() -> None:
    n = tir.Var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    i = tir.Var("i")
    body = tir.For(
        i, tir.const(0), n, tir.ForKind.PARALLEL, tir.BufferStore(A, tir.const(0.0), (i,))
    )
    f = tir.PrimFunc((A.data, n), body, {A.data: A}, {"global_symbol": "zero"})
    text = str(f)
    assert text.startswith("primfn(A_1: handle, n: int32) -> ()")
    assert "for (i: int32, 0, n) parallel {" in text and "A[i] = 0.0f32" in text
    assert tir.IRModule.from_expr(f)["zero"] is f
