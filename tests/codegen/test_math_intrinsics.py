"""TVM's math, classification and bit intrinsics compile and compute numpy's numbers in both code
generators (scalar and vectorized; float16 through float64 as C does).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, tir
from pytvm.tir.expr import Call, PrimExpr

TARGETS = ["c", "llvm"]


def _call(op: str, dtype: str, *args: PrimExpr) -> PrimExpr:
    return Call(dtype, op, tuple(args))


def _run(
    target: str, dtype: str, out_dtype: str, body: Callable[[te.Tensor, PrimExpr], PrimExpr],
    a: np.ndarray, vectorize: bool = False,
) -> np.ndarray:  # fmt: skip
    A = te.placeholder((a.size,), name="A", dtype=dtype)
    B = te.compute((a.size,), lambda i: body(A, i), name="B")
    s = te.create_schedule(B.op)
    if vectorize:
        s[B].vectorize(B.op.axis[0])
    f = tvm.build(s, [A, B], target)
    b = tvm.nd.array(np.zeros(a.size, out_dtype))
    f(tvm.nd.array(a), b)
    return b.numpy()


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tan": np.tan, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "atanh": np.arctanh, "log1p": np.log1p,
    "exp10": lambda x: 10.0**x,
}  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_libm_intrinsics(target: str, dtype: str, name: str) -> None:
    a = np.random.uniform(0.1, 0.9, 16).astype(dtype)
    got = _run(target, dtype, dtype, lambda A, i: _call(f"tir.{name}", dtype, A[i]), a, True)
    expected = UNARY[name](a.astype("float64")).astype(dtype)
    np.testing.assert_allclose(got, expected, rtol=2e-3 if dtype == "float16" else 1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_binary_libm_intrinsics(target: str) -> None:
    a = np.random.uniform(0.1, 0.9, 8)

    def body(A: te.Tensor, i: PrimExpr) -> PrimExpr:
        return _call("tir.atan2", "float64", A[i], A[7 - i]) + _call(
            "tir.hypot",
            "float64",
            A[i],
            _call("tir.copysign", "float64", A[i], tir.const(-1.0, "float64")),
        )

    expected = np.arctan2(a, a[::-1]) + np.hypot(a, -a)
    np.testing.assert_allclose(_run(target, "float64", "float64", body, a), expected, rtol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification(target: str, dtype: str, name: str) -> None:
    if dtype == "int32":
        a = np.arange(8, dtype="int32")
    else:
        a = np.array([0.5, np.nan, np.inf, -np.inf, -1.0, 0.0, 3.0, np.nan], dtype)
    got = _run(target, dtype, "bool", lambda A, i: _call(f"tir.{name}", "bool", A[i]), a)
    np.testing.assert_array_equal(got, getattr(np, name)(a))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16"])
def test_bit_counts_and_operators(target: str, dtype: str) -> None:
    info = np.iinfo(dtype)
    a = np.random.randint(max(info.min, -1000), min(info.max, 1000), 16).astype(dtype)
    a[0] = 0
    bits = np.dtype(dtype).itemsize * 8
    unsigned = [int(v) & ((1 << bits) - 1) for v in a]
    clz = _run(target, dtype, dtype, lambda A, i: _call("tir.clz", dtype, A[i]), a, True)
    np.testing.assert_array_equal(clz, [bits - v.bit_length() for v in unsigned])
    ones = _run(target, dtype, dtype, lambda A, i: _call("tir.popcount", dtype, A[i]), a, True)
    np.testing.assert_array_equal(ones, [bin(v).count("1") for v in unsigned])

    def mixed(A: te.Tensor, i: PrimExpr) -> PrimExpr:
        x = _call("tir.bitwise_xor", dtype, A[i], A[15 - i])
        y = _call("tir.bitwise_and", dtype, _call("tir.bitwise_not", dtype, x), A[i])
        return _call("tir.shift_right", dtype, y, tir.const(1, dtype))

    expected = ((~(a ^ a[::-1])) & a) >> 1
    np.testing.assert_array_equal(_run(target, dtype, dtype, mixed, a), expected)
