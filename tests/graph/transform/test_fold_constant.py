"""FoldConstant: weight-only subgraphs are evaluated at compile time, compared with the expected
graph structurally; a constant subexpression whose result would exceed
``graph.max_constant_bytes`` stays a call (computed at run time) rather than filling the
compiler's memory.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import graph as g
from pytvm.ffi.errors import TVMTypeError, TVMValueError
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import fold_constant
from pytvm.graph.transform.fold_constant import (
    DEFAULT_MAX_CONSTANT_BYTES,
    fold_call,
    max_constant_bytes,
)
from pytvm.ir.transform import PassContext

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def test_fold_constant_evaluates_weight_only_subgraphs() -> None:
    x = _var("x", 2, 3)
    w = g.call("transpose", g.const(_rand(3, 4)), axes=(1, 0))
    before = _mod([x], g.call("nn.dense", x, w))
    x2 = _var("x", 2, 3)
    expected = _mod([x2], g.call("nn.dense", x2, g.const(_rand(3, 4).T.copy())))
    assert_structural_equal(fold_constant(before), expected)


def _broadcast(side: int) -> g.IRModule:
    """``x + broadcast_to(1.0, (side, side))``: a scalar constant made ``side``² elements."""
    x = g.Var("x", g.TensorType((side, side), "float32"))
    big = g.call("broadcast_to", g.const(np.float32(1)), shape=(side, side))
    return g.IRModule.from_expr(g.Function((x,), g.call("add", x, big)))


def test_a_fold_over_the_limit_stays_a_call() -> None:
    huge = _broadcast(2**20)  # 4 TiB if folded
    assert_structural_equal(fold_constant(huge), huge)


def test_the_limit_is_a_pass_context_option() -> None:
    small = _broadcast(64)  # 16 KiB
    with PassContext(config={"graph.max_constant_bytes": 1024}):
        assert_structural_equal(fold_constant(small), small)
    folded = fold_constant(small)["main"].body
    assert isinstance(folded, g.Call) and isinstance(folded.args[1], g.Constant)


def test_the_limit_defaults_to_512_mib_and_must_be_a_byte_count() -> None:
    assert max_constant_bytes() == DEFAULT_MAX_CONSTANT_BYTES == 512 * 2**20
    with PassContext(config={"graph.max_constant_bytes": "1G"}):
        with pytest.raises(TVMTypeError, match=r"graph.max_constant_bytes.*got '1G'"):
            fold_constant(_broadcast(4))
    with pytest.raises(TVMValueError, match="must be >= 0"):
        max_constant_bytes(given=-1)


def test_fold_call_docstring_example() -> None:
    folded = fold_call(g.call("add", g.const(1.0), g.const(2.0)), limit=1024)
    assert isinstance(folded, g.Constant)
    np.testing.assert_array_equal(folded.data, np.array(3.0))


def test_fold_call_tells_a_result_over_the_limit_and_computes_nothing() -> None:
    big = g.call("broadcast_to", g.const(np.float32(1)), shape=(2**20, 2**20))
    told: list[int] = []
    assert fold_call(big, limit=1024, over_limit=lambda _, nbytes: told.append(nbytes)) is None
    assert told == [4 * 2**40]
    at_limit = g.call("broadcast_to", g.const(np.float32(1)), shape=(16, 16))
    assert isinstance(fold_call(at_limit, limit=1024), g.Constant)  # 1024 bytes: within


def test_a_call_of_a_tuple_of_constants_folds() -> None:
    parts = g.Tuple((g.const(np.ones(2, np.float32)), g.const(np.zeros(3, np.float32))))
    folded = fold_call(g.call("concatenate", parts, axis=0), limit=1024)
    assert isinstance(folded, g.Constant)
    np.testing.assert_array_equal(folded.data, [1, 1, 0, 0, 0])
    x = g.Var("x", g.TensorType((2,), "float32"))
    assert fold_call(g.call("add", x, g.const(np.ones(2, np.float32))), limit=1024) is None
