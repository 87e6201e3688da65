"""tir.stmt_functor: visiting and rewriting with callbacks, substitution."""

from __future__ import annotations

from typing import Any

from pytvm import tir
from pytvm.tir import stmt_functor


def _loop() -> tuple[tir.Var, tir.Buffer, tir.For]:
    i = tir.Var("i")
    A = tir.decl_buffer((8,), "float32", "A")
    body = tir.BufferStore(A, A.vload([i]) * 2.0, (i,))
    return i, A, tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, body)


def test_post_order_visits_children_before_parents() -> None:
    _, _, loop = _loop()
    kinds: list[str] = []
    stmt_functor.post_order_visit(loop, lambda n: kinds.append(type(n).__name__))
    assert kinds.index("BufferLoad") < kinds.index("Mul") < kinds.index("BufferStore")
    assert kinds[-1] == "For"


def test_pre_order_visit_stops_below_a_false() -> None:
    _, _, loop = _loop()
    kinds: list[str] = []

    def visit(n: Any) -> bool:
        kinds.append(type(n).__name__)
        return not isinstance(n, tir.BufferStore)

    stmt_functor.pre_order_visit(loop, visit)
    assert kinds[0] == "For" and "Mul" not in kinds


def test_ir_transform_rewrites_only_enabled_kinds() -> None:
    _, _, loop = _loop()

    def unroll(node: Any) -> Any:
        return tir.For(node.loop_var, node.min, node.extent, tir.ForKind.UNROLLED, node.body)

    out = stmt_functor.ir_transform(loop, None, unroll, ["tir.For"])
    assert out.kind == tir.ForKind.UNROLLED and out.body is loop.body
    same = stmt_functor.ir_transform(loop, None, unroll, ["tir.Allocate"])
    assert same is loop


def test_ir_transform_preorder_replacement_skips_children() -> None:
    _, _, loop = _loop()
    seen: list[Any] = []
    replaced = stmt_functor.ir_transform(
        loop,
        lambda n: tir.Evaluate(tir.const(0)) if isinstance(n, tir.BufferStore) else None,
        seen.append,
    )
    assert isinstance(replaced, tir.For) and isinstance(replaced.body, tir.Evaluate)
    assert not any(isinstance(n, tir.BufferLoad) for n in seen)


def test_substitute_with_a_map_or_a_function() -> None:
    x, y = tir.Var("x"), tir.Var("y")
    assert str(stmt_functor.substitute(x + y, {y: 3})) == "(x + 3)"
    assert str(stmt_functor.substitute(x + y, lambda v: x if v is y else None)) == "(x + x)"
