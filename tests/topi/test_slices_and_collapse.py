"""strided_slice with None ends, expression bounds and run-time tensor bounds;
dynamic_strided_slice; collapse_sum (the sum that undoes a broadcast).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, tir, topi
from pytvm.ffi.errors import TVMValueError

_CASES = [
    ([0, 0, 0], [4, -5, 4], [1, -1, 2]),
    ([1, 1, 0], [4, 4, 3], [2, 1, 1]),
    ([1, -1, 0], [4, -5, 3], [2, -1, 1]),
    ([0, 2, 0], [1, 2, 3], [1, 1, 1]),
]


def _ref(x: np.ndarray, b: list[Any], e: list[Any], s: list[int]) -> np.ndarray:
    return x[tuple(slice(*v) for v in zip(b, e, s, strict=True))]


def test_strided_slice_end_none_runs_to_the_end() -> None:
    A = te.placeholder((3, 4, 3), name="A")
    B = topi.strided_slice(A, [1, 0, 0], [None, None, None], [1, -1, 1])
    assert [str(d) for d in B.shape] == ["2", "1", "3"]


@pytest.mark.parametrize(("b", "e", "s"), _CASES)
def test_strided_slice_reads_tensor_bounds_at_run_time(
    b: list[int], e: list[int], s: list[int]
) -> None:
    A = te.placeholder((3, 4, 3), name="A")
    bg, en, st = (te.placeholder((3,), name=n, dtype="int64") for n in ("begin", "end", "strides"))
    bounds = [bg, en, st]
    x = np.random.uniform(size=(3, 4, 3)).astype("float32")
    want = _ref(x, b, e, s) + 1
    for out_t in (
        topi.strided_slice(A, bg, en, st) + 1,
        topi.dynamic_strided_slice(A, bg, en, st, want.shape) + 1,
    ):
        f = tvm.build(te.create_schedule(out_t.op), [A, *bounds, out_t], "llvm")
        out = tvm.nd.empty(want.shape, "float32")
        f(tvm.nd.array(x), *[tvm.nd.array(np.array(v, "int64")) for v in (b, e, s)], out)
        np.testing.assert_allclose(out.numpy(), want)


def test_strided_slice_with_expression_bounds_and_axes() -> None:
    A = te.placeholder((16, 32, 64), name="A")
    b1, b2, e1, e2 = (tir.Var(n, "int32") for n in ("b1", "b2", "e1", "e2"))
    B = topi.strided_slice(A, [b1, b2], [e1, e2], [1, 1], [2, 1])
    assert str(B.shape[1]) == str(e2 - b2)
    assert str(B.shape[2]) == str(e1 - b1)
    body: Any = B.op.body[0]
    assert str(body.indices[1]) == str(B.op.axis[1].var + b2)


def test_strided_slice_refuses_axes_with_tensor_bounds() -> None:
    A = te.placeholder((3, 4), name="A")
    Bg = te.placeholder((2,), name="b", dtype="int64")
    with pytest.raises(TVMValueError, match="strided_slice: bad axes"):
        topi.strided_slice(A, Bg, Bg, Bg, axes=[0, 1])


_N = tir.Var("n", "int32")


@pytest.mark.parametrize(
    ("data_shape", "target_shape", "sizes"),
    [
        ((2, 3), (3,), {}),
        ((2, 3, 4), (2, 1, 4), {}),
        ((2, 3, 4, 5), (3, 1, 5), {}),
        ((2, _N, 4, 5), (_N, 1, 5), {_N: 3}),
    ],
)
def test_collapse_sum_undoes_a_broadcast(
    data_shape: tuple[Any, ...], target_shape: tuple[Any, ...], sizes: dict[Any, int]
) -> None:
    A = te.placeholder(data_shape, name="A")
    B = topi.collapse_sum(A, target_shape)
    f = tvm.build(te.create_schedule([B.op]), [A, B], "llvm")
    x = np.random.uniform(size=[sizes.get(d, d) for d in data_shape]).astype("float32")
    tshape = [sizes.get(d, d) for d in target_shape]
    lead = x.ndim - len(tshape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, t in enumerate(tshape) if t == 1 and x.shape[lead + k] != 1
    )
    want = x.sum(axis=axes).reshape(tshape)
    out = tvm.nd.array(np.zeros(tshape, "float32"))
    f(tvm.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


def test_collapse_sum_refuses_a_shape_that_does_not_broadcast() -> None:
    with pytest.raises(TVMValueError, match="collapse_sum: bad target_shape"):
        topi.collapse_sum(te.placeholder((2, 3), name="A"), (4,))
