"""group_norm, instance_norm, rms_norm, and layer_norm of float16 (statistics in float32)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError


def _run(out_t: Any, ins: list[Any], arrays: list[np.ndarray]) -> np.ndarray:
    f = tvm.build(te.create_schedule(out_t.op), [*ins, out_t], "llvm")
    out = tvm.nd.array(np.zeros([int(d) for d in out_t.shape], out_t.dtype))
    f(*[tvm.nd.array(a) for a in arrays], out)
    return out.numpy()


def _standardize(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    w = x.astype("float32")
    mean = w.mean(axes, keepdims=True)
    return (w - mean) / np.sqrt(w.var(axes, keepdims=True) + eps)  # type: ignore[no-any-return]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(("shape", "axes"), [((2, 4, 16), (2,)), ((2, 4, 4, 6), (2, 3))])
def test_group_norm_matches_numpy(
    dtype: str, shape: tuple[int, ...], axes: tuple[int, ...]
) -> None:
    data = te.placeholder(shape, dtype, "data")
    g, b = te.placeholder((4,), dtype, "g"), te.placeholder((4,), dtype, "b")
    x = np.random.uniform(size=shape).astype(dtype)
    gn, bn = (np.random.uniform(size=4).astype(dtype) for _ in range(2))
    split = (shape[0], 2, 2, *shape[2:])
    over = (2, *[a + 1 for a in axes])
    normed = _standardize(x.reshape(split), over, 1e-5).reshape(shape).astype(dtype)
    view = (1, 4) + (1,) * (len(shape) - 2)
    want = normed * gn.reshape(view) + bn.reshape(view)
    got = _run(topi.nn.group_norm(data, g, b, 2, 1, axes), [data, g, b], [x, gn, bn])
    tol = 1e-5 if dtype == "float32" else 2e-3
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_group_norm_refuses_groups_that_do_not_divide_the_channels() -> None:
    data = te.placeholder((2, 6, 4), name="data")
    g = te.placeholder((6,), name="g")
    with pytest.raises(TVMValueError, match="group_norm: bad num_groups 4"):
        topi.nn.group_norm(data, g, g, 4, 1, (2,))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_layer_and_instance_norm_take_float16_statistics_in_float32(dtype: str) -> None:
    shape, axes = (4, 16, 16), (1, 2)
    data = te.placeholder(shape, dtype, "data")
    g, b = te.placeholder((16, 16), dtype, "g"), te.placeholder((16, 16), dtype, "b")
    x = (np.random.uniform(size=shape) + 100).astype(dtype)  # a large mean: one-pass float16 fails
    gn, bn = (np.random.uniform(size=(16, 16)).astype(dtype) for _ in range(2))
    want = _standardize(x, axes, 1e-5).astype(dtype) * gn + bn
    tol = 1e-3 if dtype == "float32" else 5e-3  # values near 100: float32 rounding of x - mean
    for fn in (topi.nn.layer_norm, topi.nn.instance_norm):
        got = _run(fn(data, g, b, axes, 1e-5), [data, g, b], [x, gn, bn])
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_rms_norm_matches_numpy_with_symbolic_rows(dtype: str) -> None:
    rows = te.var("rows")
    data = te.placeholder((rows, 16), dtype, "data")
    w = te.placeholder((16,), dtype, "w")
    x = np.random.uniform(size=(5, 16)).astype(dtype)
    wn = np.random.uniform(size=16).astype(dtype)
    xf = x.astype("float32")
    want = (xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-5) * wn.astype("float32")).astype(
        dtype
    )
    out_t = topi.nn.rms_norm(data, w, (1,))
    f = tvm.build(te.create_schedule(out_t.op), [data, w, out_t], "llvm")
    out = tvm.nd.array(np.zeros((5, 16), dtype))
    f(tvm.nd.array(x), tvm.nd.array(wn), out)
    np.testing.assert_allclose(out.numpy(), want, rtol=5e-3, atol=1e-4)
