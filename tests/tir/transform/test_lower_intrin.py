from __future__ import annotations

from pytvm import tir
from pytvm.tir.transform import LowerIntrin

S = tir.ForKind.SERIAL
A = tir.decl_buffer((16,), "float32", "A")
IB = tir.decl_buffer((16,), "int32", "IB")
N = tir.Var("n")


def _run(body: tir.Stmt) -> tir.Stmt:
    func = tir.PrimFunc(
        (A.data, IB.data, N), body, {A.data: A, IB.data: IB}, {"global_symbol": "f"}
    )
    return LowerIntrin(tir.IRModule.from_expr(func))["f"].body


def test_sigmoid_and_rsqrt() -> None:
    i = tir.Var("i")
    x = A.vload((i,))
    before = tir.For(i, tir.const(0), tir.const(16), S,
                     tir.BufferStore(A, tir.sigmoid(x) + tir.rsqrt(x), (i,)))  # fmt: skip
    one = tir.const(1.0)
    sig = tir.Div(one, tir.Add(one, tir.Call("float32", "tir.exp", (tir.Sub(tir.const(0.0), x),))))
    rsq = tir.Div(one, tir.Call("float32", "tir.sqrt", (x,)))
    expected = tir.For(i, tir.const(0), tir.const(16), S, tir.BufferStore(A, sig + rsq, (i,)))
    tir.assert_structural_equal(_run(before), expected)


def test_non_negative_floordiv_becomes_c_division() -> None:
    i = tir.Var("i")
    value = tir.floordiv(i, 4) + tir.floormod(i, 4)
    before = tir.For(i, tir.const(0), tir.const(16), S, tir.BufferStore(IB, value, (i,)))
    expected = tir.For(i, tir.const(0), tir.const(16), S,
                       tir.BufferStore(IB, tir.Div(i, tir.const(4)) + tir.Mod(i, tir.const(4)),
                                       (i,)))  # fmt: skip
    tir.assert_structural_equal(_run(before), expected)


def test_signed_floordiv_is_exact() -> None:
    i = tir.Var("i")
    value = tir.FloorDiv(i - 8, tir.const(3)) * 100 + tir.FloorMod(i - 8, N)
    before = tir.For(i, tir.const(0), tir.const(16), S, tir.BufferStore(IB, value, (i,)))
    after = _run(before)
    assert "floordiv" not in str(after) and "floormod" not in str(after)
    # Evaluate the lowered expression with C semantics and compare with Python's floor rules.
    expr = after.body.value  # type: ignore[attr-defined]
    for iv in range(16):
        for nv in (-5, -3, 3, 7):
            got = _eval_c(expr, {i: iv, N: nv})
            assert got == ((iv - 8) // 3) * 100 + (iv - 8) % nv, (iv, nv)


def _eval_c(e: object, env: dict[tir.Var, int]) -> int:  # noqa: PLR0911
    if isinstance(e, tir.IntImm):
        return e.value
    if isinstance(e, tir.Var):
        return env[e]
    if isinstance(e, tir.Select):
        c = _eval_c(e.condition, env)
        return _eval_c(e.true_value if c else e.false_value, env)
    if isinstance(e, tir.Not):
        return int(not _eval_c(e.a, env))
    assert isinstance(e, (tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Mod, tir.LT, tir.NE, tir.And))
    a, b = _eval_c(e.a, env), _eval_c(e.b, env)
    if isinstance(e, tir.Div):
        return int(a / b)
    if isinstance(e, tir.Mod):
        return a - int(a / b) * b
    table = {tir.Add: a + b, tir.Sub: a - b, tir.Mul: a * b, tir.LT: int(a < b),
             tir.NE: int(a != b), tir.And: int(bool(a) and bool(b))}  # fmt: skip
    return table[type(e)]
