"""Transposed 1-d/3-d convolutions (grouped) and grouped 2-d against a scatter in numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


def _run(out_t: Any, ins: list[Any], arrays: list[np.ndarray]) -> np.ndarray:
    f = tvm.build(te.create_schedule(out_t.op), [*ins, out_t], "llvm")
    out = tvm.nd.array(np.zeros([int(d) for d in out_t.shape], out_t.dtype))
    f(*[tvm.nd.array(a) for a in arrays], out)
    return out.numpy()


def _scatter(
    x: np.ndarray, w: np.ndarray, s: list[int], before: list[int], after: list[int],
    opad: list[int], groups: int,
) -> np.ndarray:  # fmt: skip
    """Each input element adds ``x * w`` into a full output, which is then cropped."""
    n, c, *sp = x.shape
    og, ks = w.shape[1], w.shape[2:]
    full = [(v - 1) * st + k + op for v, st, k, op in zip(sp, s, ks, opad, strict=True)]
    out = np.zeros((n, og * groups, *full), "float64")
    cg = c // groups
    for ch in range(c):
        g = ch // cg
        for pos in np.ndindex(*sp):
            sl = tuple(slice(p * st, p * st + k) for p, st, k in zip(pos, s, ks, strict=True))
            value = x[(slice(None), ch, *pos)].reshape(n, 1, *[1] * len(ks))
            out[(slice(None), slice(g * og, (g + 1) * og), *sl)] += value * w[ch][None]
    crop = tuple(slice(b, f - a) for b, a, f in zip(before, after, full, strict=True))
    return out[(slice(None), slice(None), *crop)].astype("float32")


@pytest.mark.parametrize("groups", [1, 2])
def test_conv1d_transpose_matches_a_scatter(groups: int) -> None:
    x = np.random.uniform(size=(2, 4, 6)).astype("float32")
    w = np.random.uniform(size=(4, 3, 3)).astype("float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    out_t = topi.nn.group_conv1d_transpose_ncw(X, W, 2, (1, 2), "float32", 1, groups)
    want = _scatter(x, w, [2], [1], [2], [1], groups)
    np.testing.assert_allclose(_run(out_t, [X, W], [x, w]), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv3d_transpose_matches_a_scatter(groups: int) -> None:
    x = np.random.uniform(size=(1, 4, 3, 4, 3)).astype("float32")
    w = np.random.uniform(size=(4, 2, 2, 3, 2)).astype("float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    pads = (1, 0, 1, 0, 1, 0)
    out_t = topi.nn.group_conv3d_transpose_ncdhw(
        X, W, (2, 1, 2), pads, "float32", (1, 0, 0), groups
    )
    want = _scatter(x, w, [2, 1, 2], [1, 0, 1], [0, 1, 0], [1, 0, 0], groups)
    np.testing.assert_allclose(_run(out_t, [X, W], [x, w]), want, rtol=1e-5, atol=1e-5)


def test_group_conv2d_transpose_takes_string_padding() -> None:
    x = np.random.uniform(size=(1, 4, 5, 5)).astype("float32")
    w = np.random.uniform(size=(4, 2, 3, 3)).astype("float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    out_t = topi.nn.group_conv2d_transpose_nchw(X, W, 1, "SAME", "float32", 0, 2)
    want = _scatter(x, w, [1, 1], [1, 1], [1, 1], [0, 0], 2)
    np.testing.assert_allclose(_run(out_t, [X, W], [x, w]), want, rtol=1e-5, atol=1e-5)
