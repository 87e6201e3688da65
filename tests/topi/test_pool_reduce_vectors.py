"""Reductions and global/adaptive poolings in vector lanes: numerics against numpy for odd
row lengths, keepdims, axis combinations, int and float dtypes, and vector accumulators in the
loop IR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.topi.generic._lane_reduction import lane_plan

_TARGET = "llvm"  # the host: the kernels run here
_IR_TARGET = "llvm -mattr=+avx2"  # 8 float32 lanes, 16 vector registers, whatever the host


def _run(s: Any, args: Sequence[te.Tensor], x: np.ndarray) -> np.ndarray:
    f = tvm.build(s, list(args), target=_TARGET)
    out = args[-1]
    y = tvm.nd.empty([int(d) for d in out.shape], out.dtype)  # type: ignore[call-overload]
    f(tvm.nd.array(x), y)
    return y.numpy()


def _data(shape: Sequence[int], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


def _ir(s: Any, args: Sequence[te.Tensor]) -> str:
    return str(tvm.lower(s, list(args)))


_REDUCTIONS: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
    (topi.sum, np.sum),
    (topi.max, np.max),
    (topi.min, np.min),
]


@pytest.mark.parametrize(("fn", "ref"), _REDUCTIONS)
@pytest.mark.parametrize(
    ("shape", "axis", "keepdims"),
    [
        ((2, 5, 7, 7), (2, 3), True),
        ((1, 3, 14, 14), (2, 3), False),
        ((1, 4, 56, 56), (2, 3), True),
        ((3, 197, 40), (-1,), True),
        ((2, 3, 9), (1, 2), False),
        ((4, 6, 8), (0, 2), False),
        ((5, 16), None, False),
        ((2, 3, 11, 13), (1, 2, 3), True),
        ((6, 17), (0,), False),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_reduce_matches_numpy(
    fn: Callable[..., Any],
    ref: Callable[..., Any],
    shape: tuple[int, ...],
    axis: tuple[int, ...] | None,
    keepdims: bool,
    dtype: str,
) -> None:
    x = _data(shape, dtype)
    A = te.placeholder(shape, dtype, "A")
    with tvm.target.Target(_TARGET):
        B = fn(A, axis=list(axis) if axis else None, keepdims=keepdims)
        s = topi.x86.schedule_reduce(B)
    got = _run(s, [A, B], x)
    want = ref(x, axis=axis, keepdims=keepdims)
    if dtype.startswith("float"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(1, 7, 7, 7), (2, 3, 14, 14), (1, 5, 28, 28), (1, 2, 10, 6)])
@pytest.mark.parametrize("pool_type", ["avg", "max"])
def test_global_pool_matches_numpy(shape: tuple[int, ...], pool_type: str) -> None:
    x = _data(shape, "float32")
    A = te.placeholder(shape, "float32", "A")
    with tvm.target.Target(_TARGET):
        B = topi.nn.global_pool(A, pool_type)
        s = topi.x86.schedule_adaptive_pool(B)
    got = _run(s, [A, B], x)
    ref = np.mean if pool_type == "avg" else np.max
    np.testing.assert_allclose(got, ref(x, axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-5)


def test_mean_of_fused_elementwise_producer() -> None:
    shape = (1, 6, 12, 12)
    x = _data(shape, "float32")
    A = te.placeholder(shape, "float32", "A")
    with tvm.target.Target(_TARGET):
        B = topi.mean(topi.nn.relu(A), axis=[2, 3], keepdims=True)
        s = topi.x86.schedule_reduce(B)
    got = _run(s, [A, B], x)
    np.testing.assert_allclose(got, np.maximum(x, 0).mean(axis=(2, 3), keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("output_size", [(1, 1), (2, 3)])
def test_adaptive_pool_matches_numpy(output_size: tuple[int, int]) -> None:
    shape = (1, 3, 12, 12)
    x = _data(shape, "float32")
    A = te.placeholder(shape, "float32", "A")
    with tvm.target.Target(_TARGET):
        B = topi.nn.adaptive_pool(A, output_size, "avg")
        s = topi.x86.schedule_adaptive_pool(B)
    got = _run(s, [A, B], x)
    oh, ow = output_size
    want = np.zeros((1, 3, oh, ow), "float32")
    for i in range(oh):
        for j in range(ow):
            h0, h1 = i * 12 // oh, -(-(i + 1) * 12 // oh)
            w0, w1 = j * 12 // ow, -(-(j + 1) * 12 // ow)
            want[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_global_pool_accumulates_in_vectors() -> None:
    A = te.placeholder((1, 8, 56, 56), "float32", "A")
    with tvm.target.Target(_IR_TARGET):
        B = topi.nn.global_pool(A, "avg")
        ir = _ir(topi.x86.schedule_adaptive_pool(B), [A, B])
    # 3136 = 8 lanes x 392: 8 accumulators of 8 lanes, each added to as a whole vector.
    assert "adaptive_pool_sum.rf[ramp(56, 1, 8)] = (adaptive_pool_sum.rf[ramp(56, 1, 8)] +" in ir
    assert "'local'" in ir


def test_last_axis_mean_accumulates_in_vectors() -> None:
    A = te.placeholder((4, 768), "float32", "A")
    with tvm.target.Target(_IR_TARGET):
        B = topi.mean(A, axis=[-1], keepdims=True)
        ir = _ir(topi.x86.schedule_reduce(B), [A, B])
    assert "T_sum.rf[ramp(0, 1, 8)] = (T_sum.rf[ramp(0, 1, 8)] + A_2[ramp(" in ir


def test_odd_rows_interleave_outputs() -> None:
    A = te.placeholder((1, 12, 7, 7), "float32", "A")
    with tvm.target.Target(_IR_TARGET):
        B = topi.sum(A, axis=[2, 3])
        ir = _ir(topi.x86.schedule_reduce(B), [A, B])
    # 4 outputs (a quarter of 16 registers) per block, the 7x7 window loops around them.
    body = ir[ir.index("for (k3") :]
    assert "T_sum_2[((i0.i1.fused.outer * 4) + 3)] = (" in body
    assert "+ 4)] = (" not in body


def test_strided_reduction_keeps_plain_loop() -> None:
    A = te.placeholder((16, 8), "float32", "A")
    with tvm.target.Target(_IR_TARGET):
        B = topi.sum(A, axis=[0])
        ir = _ir(topi.x86.schedule_reduce(B), [A, B])
    assert ".rf" not in ir


def test_lane_plan_divides_the_row() -> None:
    with tvm.target.Target(_IR_TARGET):
        assert lane_plan(3136, "float32") == (8, 8)
        assert lane_plan(49, "float32") == (1, 7)
        assert lane_plan(196, "float32") == (4, 7)
        assert lane_plan(4, "float32") is None
        assert lane_plan(13, "float32") is None
