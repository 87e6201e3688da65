"""TVM's generic schedules (``topi.generic.schedule_*``): each lowers and runs its operator
as written inside ``with Target("llvm")``; the default schedule inlines injective stages when
asked; a target pytvm cannot compile for is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target


def _run(out: Any, inputs: list[Any], arrays: list[np.ndarray], sched: Callable[..., Any]) -> Any:
    with Target("llvm"):
        s = sched([out])
    f = pytvm.build(s, [*inputs, out], "llvm")
    res = pytvm.nd.array(np.zeros([int(d) for d in out.shape], out.dtype))
    f(*[pytvm.nd.array(a) for a in arrays], res)
    return res.numpy()


def test_dense_and_batch_matmul_as_written() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 5), "float32"), rng.random((4, 5), "float32")
    A, B = te.placeholder(a.shape, name="A"), te.placeholder(b.shape, name="B")
    out = _run(topi.nn.relu(topi.nn.dense(A, B)), [A, B], [a, b], topi.generic.schedule_dense)
    np.testing.assert_allclose(out, np.maximum(a @ b.T, 0), rtol=1e-5)
    x, y = rng.random((2, 3, 5), "float32"), rng.random((2, 4, 5), "float32")
    X, Y = te.placeholder(x.shape, name="X"), te.placeholder(y.shape, name="Y")
    out = _run(topi.nn.batch_matmul(X, Y), [X, Y], [x, y], topi.generic.schedule_batch_matmul)
    np.testing.assert_allclose(out, x @ y.transpose(0, 2, 1), rtol=1e-5)


def test_conv2d_and_pool_as_written() -> None:
    rng = np.random.default_rng(1)
    x, w = rng.random((1, 2, 5, 5), "float32"), rng.random((3, 2, 3, 3), "float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    out = _run(
        topi.nn.conv2d_nchw(X, W, 1, 0, 1), [X, W], [x, w], topi.generic.schedule_conv2d_nchw
    )
    ref = np.einsum("nchw,fc->nfhw", x[:, :, 1:4, 1:4], w[:, :, 1, 1])
    for i in range(3):
        for j in range(3):
            if (i, j) != (1, 1):
                ref += np.einsum("nchw,fc->nfhw", x[:, :, i : i + 3, j : j + 3], w[:, :, i, j])
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    pool = topi.nn.pool2d(X, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max")

    def sched(outs: Any) -> Any:
        return topi.generic.schedule_pool(outs, "NCHW")

    out = _run(pool, [X], [x], sched)
    np.testing.assert_allclose(out, x[:, :, :4, :4].reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)))


def test_softmax_concatenate_and_extern() -> None:
    x = np.random.default_rng(2).random((3, 6), "float32")
    X = te.placeholder(x.shape, name="X")
    out = _run(topi.nn.softmax(X), [X], [x], topi.generic.schedule_softmax)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    cat = topi.concatenate([topi.exp(X), X], axis=0)
    out = _run(cat, [X], [x], topi.generic.schedule_concatenate)
    np.testing.assert_allclose(out, np.concatenate([np.exp(x), x]), rtol=1e-5)
    out = _run(topi.add(X, 1.0), [X], [x], topi.generic.schedule_extern)
    np.testing.assert_allclose(out, x + 1)


def test_default_schedule_inlines_injective_stages_when_asked() -> None:
    A = te.placeholder((4, 8), name="A")
    B = topi.add(topi.exp(A), 1.0)
    s = topi.generic.default_schedule(B, auto_inline=True)
    assert len(s[B].leaf_iter_vars) == 1
    s = topi.generic.default_schedule(B, auto_inline=False)
    assert len(s[B].leaf_iter_vars) == 2


def test_a_target_pytvm_cannot_compile_for_is_an_error() -> None:
    A = te.placeholder((4,), name="A")
    with Target("llvm -keys=gpu"), pytest.raises(TVMValueError, match="CPUs only"):
        topi.generic.schedule_dense(topi.exp(A))


def test_generic_conv2d_module_schedules_with_inlined_stages() -> None:
    x = np.random.default_rng(3).random((1, 4, 4, 2), "float32")
    X = te.placeholder(x.shape, name="X")
    padded = topi.nn.pad(X, [0, 1, 1, 0], [0, 1, 1, 0])
    Y = te.compute(
        (1, 4, 4, 2),
        lambda n, h, w, c: padded[n, h, w, c] + padded[n, h + 2, w + 2, c],
        name="Y",
        tag="injective",
    )
    out = _run(Y, [X], [x], topi.generic.conv2d.schedule_depthwise_conv2d_nhwc)
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    np.testing.assert_allclose(out, xp[:, :4, :4] + xp[:, 2:, 2:])


@pytest.mark.parametrize(
    "sched",
    [
        topi.generic.schedule_unique,
        topi.generic.schedule_argwhere,
        topi.generic.schedule_sort,
        topi.generic.schedule_topk,
        topi.generic.schedule_nms,
        topi.generic.schedule_roi_align,
        topi.generic.schedule_einsum,
        topi.generic.schedule_dilation2d_nchw,
    ],
)
def test_search_sort_vision_math_image_schedules_run_as_written(sched: Any) -> None:
    x = np.random.default_rng(4).random((3, 4), "float32")
    X = te.placeholder(x.shape, name="X")
    out = _run(topi.sum(X, axis=1), [X], [x], sched)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5)
    assert sched.__name__.startswith("schedule_")
