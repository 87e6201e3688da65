"""topi.all and topi.any: logical reductions to bool, with numpy's axis/keepdims rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


@pytest.mark.parametrize(("fn", "ref"), [(topi.all, np.all), (topi.any, np.any)])
@pytest.mark.parametrize(
    ("axis", "keepdims"), [(None, False), (None, True), ((0, 2), False), (1, True)]
)
@pytest.mark.parametrize("dtype", ["bool", "int32"])
def test_logical_reduction_matches_numpy(
    fn: Callable[..., Any], ref: Callable[..., Any], axis: Any, keepdims: bool, dtype: str
) -> None:
    A = te.placeholder((3, 4, 5), dtype, "A")
    B = fn(A, axis=axis, keepdims=keepdims)
    assert B.dtype == "bool"
    f = tvm.build(te.create_schedule(B.op), [A, B], "llvm")
    x = np.random.choice([1, 0], size=(3, 4, 5), p=[0.8, 0.2]).astype(dtype)
    want = ref(x, axis=axis, keepdims=keepdims)
    out = tvm.nd.empty(want.shape, "bool")
    f(tvm.nd.array(x), out)
    np.testing.assert_array_equal(out.numpy(), want)


def test_sum_of_booleans_is_their_logical_or() -> None:
    A = te.placeholder((4, 5), "bool", "A")
    B = topi.sum(A, axis=1)
    f = tvm.build(te.create_schedule(B.op), [A, B], "llvm")
    x = np.ones((4, 5), "bool")
    x[0] = False
    x[1, 1:] = False
    out = tvm.nd.empty((4,), "bool")
    f(tvm.nd.array(x), out)
    np.testing.assert_array_equal(out.numpy(), x.sum(axis=1, dtype="bool"))
