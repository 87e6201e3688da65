"""Structural hashing of graph IR agrees with structural equality: equal graphs hash equal
(parameters renamed, functions rebuilt), and what equality tells apart the hash tells apart.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from pytvm import graph as g
from pytvm.frontend import from_onnx
from pytvm.graph.functor import post_order, rewrite
from pytvm.graph.structural import structural_equal, structural_hash
from pytvm.graph.transform import bind_params, optimize

F32 = g.TensorType((4,), "float32")


def _renamed(func: g.Function) -> g.Function:
    """``func`` rebuilt node by node with new parameters of other names."""
    params = {id(p): g.Var(f"renamed_{p.name}", p.type_annotation) for p in func.params}
    (body,), _ = rewrite((func.body,), lambda e: params.get(id(e)))
    return g.Function(tuple(params[id(p)] for p in func.params), body, func.attrs)


def test_the_docstring_example() -> None:
    def relu() -> g.Function:
        x = g.Var("x", g.TensorType((4,), "float32"))
        return g.Function((x,), g.call("nn.relu", x))

    assert structural_hash(relu()) == structural_hash(relu())


def test_parameters_match_by_position_not_name() -> None:
    x, y = g.Var("x", F32), g.Var("y", F32)
    a, b = g.Var("a", F32), g.Var("b", F32)
    sub_xy = g.Function((x, y), g.call("subtract", x, y))
    sub_ab = g.Function((a, b), g.call("subtract", a, b))
    sub_ba = g.Function((a, b), g.call("subtract", b, a))
    assert structural_equal(sub_xy, sub_ab)
    assert structural_hash(sub_xy) == structural_hash(sub_ab)
    assert not structural_equal(sub_xy, sub_ba)
    assert structural_hash(sub_xy) != structural_hash(sub_ba)


def test_sharing_is_part_of_the_structure() -> None:
    x, y = g.Var("x", F32), g.Var("y", F32)
    twice = g.Function((x, y), g.call("add", x, x))
    both = g.Function((x, y), g.call("add", x, y))
    assert not structural_equal(twice, both)
    assert structural_hash(twice) != structural_hash(both)


def test_constants_hash_by_value_and_negative_zero_equals_zero() -> None:
    x = g.Var("x", F32)

    def plus(value: float) -> g.Function:
        return g.Function((x,), g.call("add", x, g.const(np.float32(value))))

    assert structural_equal(plus(0.0), plus(-0.0))
    assert structural_hash(plus(0.0)) == structural_hash(plus(-0.0))
    assert structural_hash(plus(1.0)) != structural_hash(plus(2.0))


def test_modules_hash_by_their_functions() -> None:
    x = g.Var("x", F32)
    relu = g.Function((x,), g.call("nn.relu", x))
    one, two = g.IRModule.from_expr(relu), g.IRModule.from_expr(_renamed(relu))
    assert structural_equal(one, two)
    assert structural_hash(one) == structural_hash(two)


@pytest.fixture(scope="module")
def fused_functions(reference_models: dict[str, Path]) -> list[g.Function]:
    """The primitive functions of three reference models after the optimization pipeline."""
    out: list[g.Function] = []
    for name in ("cnn_small", "resnet18", "transformer_block"):
        mod, params = from_onnx(onnx.load(str(reference_models[name])))
        main = optimize(g.IRModule.from_expr(bind_params(mod["main"], params)))["main"]
        out += [
            n.op
            for n in post_order(main.body)
            if isinstance(n, g.Call) and isinstance(n.op, g.Function)
        ]
    return out


def test_hash_agrees_with_equality_on_reference_model_kernels(
    fused_functions: list[g.Function],
) -> None:
    funcs = fused_functions + [_renamed(f) for f in fused_functions]
    assert len(fused_functions) >= 36
    hashes = [structural_hash(f) for f in funcs]
    for i, a in enumerate(funcs):
        for j in range(i + 1, len(funcs)):
            assert structural_equal(a, funcs[j]) == (hashes[i] == hashes[j]), (i, j)
    # every function equals its rebuilt copy, and some kernels repeat within a model
    n = len(fused_functions)
    assert all(hashes[i] == hashes[i + n] for i in range(n))
    assert len(set(hashes)) < n
