"""pool1d/pool2d/pool3d in several layouts, adaptive pooling and pool_grad against numpy."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError


def _run(outs: Any, ins: list[Any], arrays: list[np.ndarray]) -> np.ndarray:
    f = tvm.build(te.create_schedule(outs.op), [*ins, outs], "llvm")
    out = tvm.nd.array(np.zeros([int(d) for d in outs.shape], outs.dtype))
    f(*[tvm.nd.array(a) for a in arrays], out)
    return out.numpy()


def _dims(t: Any) -> list[int]:
    return [int(d) for d in t.shape]


def _at(pos: tuple[int, ...]) -> tuple[Any, ...]:
    return (Ellipsis, *pos)


def _spatial(layout: str) -> list[int]:
    letters = [c for c in layout if c.isalpha()]
    return [letters.index(c) for c in "DHW" if c in letters]


def _ref_pool(
    x: np.ndarray, k: Sequence[int], s: Sequence[int], d: Sequence[int], pad: Sequence[int],
    kind: str, ceil: bool, cip: bool, axes: list[int],
) -> np.ndarray:  # fmt: skip
    n = len(k)
    outs = []
    for i, a in enumerate(axes):
        span = x.shape[a] - (k[i] - 1) * d[i] - 1 + pad[i] + pad[i + n] + (s[i] - 1 if ceil else 0)
        outs.append(span // s[i] + 1)
    shape = list(x.shape)
    for a, o in zip(axes, outs, strict=True):
        shape[a] = o
    out = np.zeros(shape, x.dtype)
    last = list(range(x.ndim - n, x.ndim))
    xm, om = np.moveaxis(x, axes, last), np.moveaxis(out, axes, last)
    for pos in itertools.product(*[range(o) for o in outs]):
        taps, inside, padded = [], 1, 1
        for i, p in enumerate(pos):
            size = x.shape[axes[i]]
            t = [p * s[i] - pad[i] + r * d[i] for r in range(k[i])]
            taps.append([v for v in t if 0 <= v < size])
            inside *= len(taps[-1])
            padded *= len([v for v in t if v < size + pad[i + n]])
        key: tuple[Any, ...] = (Ellipsis, *np.ix_(*taps))
        win = xm[key].reshape(*xm.shape[: x.ndim - n], -1)
        if kind == "max":
            om[_at(pos)] = win.max(-1) if inside else -np.inf
        else:
            om[_at(pos)] = win.sum(-1) / max(padded if cip else inside, 1)
    return out


_POOLS: list[tuple[Any, ...]] = [
    (
        topi.nn.pool2d,
        (1, 2, 31, 31),
        (3, 3),
        (3, 3),
        (1, 1),
        (2, 1, 2, 1),
        "max",
        True,
        "NCHW",
        True,
    ),
    (
        topi.nn.pool2d,
        (1, 2, 31, 31),
        (3, 3),
        (3, 3),
        (1, 1),
        (2, 1, 0, 3),
        "avg",
        True,
        "NCHW",
        True,
    ),
    (
        topi.nn.pool2d,
        (1, 2, 16, 16),
        (2, 3),
        (2, 2),
        (2, 3),
        (0, 3, 2, 1),
        "avg",
        False,
        "NCHW",
        False,
    ),
    (
        topi.nn.pool2d,
        (1, 31, 31, 2),
        (3, 3),
        (3, 3),
        (1, 1),
        (2, 1, 2, 1),
        "avg",
        True,
        "NHWC",
        False,
    ),
    (
        topi.nn.pool2d,
        (1, 2, 9, 9, 4),
        (3, 3),
        (2, 2),
        (1, 1),
        (1, 1, 1, 1),
        "avg",
        True,
        "NCHW4c",
        True,
    ),
    (topi.nn.pool1d, (1, 3, 31), (3,), (3,), (1,), (2, 1), "avg", True, "NCW", True),
    (topi.nn.pool1d, (1, 31, 3), (3,), (3,), (2,), (1, 2), "max", True, "NWC", True),
    (
        topi.nn.pool3d,
        (1, 2, 9, 9, 9),
        (3, 3, 3),
        (3, 3, 3),
        (1, 1, 1),
        (2, 1, 0, 5, 4, 3),
        "avg",
        True,
        "NCDHW",
        False,
    ),
    (
        topi.nn.pool3d,
        (1, 9, 9, 9, 2),
        (3, 3, 3),
        (2, 2, 2),
        (1, 1, 1),
        (2, 1, 0, 1, 1, 1),
        "max",
        False,
        "NDHWC",
        True,
    ),
]


@pytest.mark.parametrize("case", _POOLS, ids=lambda c: f"{c[0].__name__}-{c[8]}-{c[6]}")
def test_pool_matches_numpy_with_tvm_output_size(case: Any) -> None:
    fn, shape, k, s, d, pad, kind, ceil, layout, cip = case
    A = te.placeholder(shape, name="A")
    B = fn(A, k, s, d, pad, kind, ceil, layout, cip)
    x = np.random.uniform(0.001, 1, shape).astype("float32")
    want = _ref_pool(x, k, s, d, pad, kind, ceil, cip, _spatial(layout))
    np.testing.assert_allclose(_run(B, [A], [x]), want, rtol=1e-5)


def test_pool2d_ceil_mode_keeps_a_window_starting_in_the_trailing_padding() -> None:
    # TVM's rule for H: (31 - 3 + 2 + 2 + 2) // 3 + 1 = 12; ONNX's drops the 12th (it would
    # start at 33 - 2 = 31, in the trailing padding) and gives 11.
    A = te.placeholder((1, 1, 31, 31), name="A")
    B = topi.nn.pool2d(A, (3, 3), (3, 3), (1, 1), (2, 1, 2, 1), "max", ceil_mode=True)
    assert _dims(B) == [1, 1, 12, 11]


def _ref_adaptive(x: np.ndarray, outs: Sequence[int], kind: str, axes: list[int]) -> np.ndarray:
    n = len(axes)
    shape = list(x.shape)
    for a, o in zip(axes, outs, strict=True):
        shape[a] = o
    last = list(range(x.ndim - n, x.ndim))
    out = np.zeros(shape, x.dtype)
    xm, om = np.moveaxis(x, axes, last), np.moveaxis(out, axes, last)
    for pos in itertools.product(*[range(o) for o in outs]):
        sizes = xm.shape[x.ndim - n :]
        cells = tuple(
            slice(p * m // o, -(-(p + 1) * m // o))
            for p, o, m in zip(pos, outs, sizes, strict=True)
        )
        key: tuple[Any, ...] = (Ellipsis, *cells)
        win = xm[key].reshape(*xm.shape[: x.ndim - n], -1)
        om[_at(pos)] = win.max(-1) if kind == "max" else win.mean(-1)
    return out


@pytest.mark.parametrize(
    ("fn", "shape", "outs", "kind", "layout"),
    [
        (topi.nn.adaptive_pool, (1, 3, 10, 7), (3, 4), "avg", "NCHW"),
        (topi.nn.adaptive_pool, (1, 10, 7, 3), (3, 4), "max", "NHWC"),
        (topi.nn.adaptive_pool1d, (1, 3, 13), (5,), "avg", "NCW"),
        (topi.nn.adaptive_pool3d, (1, 5, 7, 9, 2), (2, 3, 4), "avg", "NDHWC"),
    ],
)
def test_adaptive_pool_matches_numpy(
    fn: Callable[..., Any], shape: tuple[int, ...], outs: tuple[int, ...], kind: str, layout: str
) -> None:
    A = te.placeholder(shape, name="A")
    x = np.random.uniform(size=shape).astype("float32")
    want = _ref_adaptive(x, outs, kind, _spatial(layout))
    np.testing.assert_allclose(_run(fn(A, outs, kind, layout), [A], [x]), want, rtol=1e-5)


def _ref_grad(
    x: np.ndarray, g: np.ndarray, k: Sequence[int], s: Sequence[int], pad: Sequence[int],
    kind: str, cip: bool,
) -> np.ndarray:  # fmt: skip
    _, _, h, w = x.shape
    gi = np.zeros_like(x)
    for y, v in itertools.product(range(g.shape[2]), range(g.shape[3])):
        hs, ws = y * s[0] - pad[0], v * s[1] - pad[1]
        hh = [t for t in range(hs, hs + k[0]) if 0 <= t < h]
        ww = [t for t in range(ws, ws + k[1]) if 0 <= t < w]
        if not hh or not ww:
            continue
        if kind == "avg":
            rows = len([t for t in range(hs, hs + k[0]) if t < h + pad[2]]) if cip else len(hh)
            cols = len([t for t in range(ws, ws + k[1]) if t < w + pad[3]]) if cip else len(ww)
            gi[:, :, hh[0] : hh[-1] + 1, ww[0] : ww[-1] + 1] += (g[:, :, y, v] / (rows * cols))[
                :, :, None, None
            ]
        else:
            win = x[:, :, hh][:, :, :, ww].reshape(*x.shape[:2], -1).argmax(-1)
            for i, j in itertools.product(range(x.shape[0]), range(x.shape[1])):
                gi[i, j, hh[win[i, j] // len(ww)], ww[win[i, j] % len(ww)]] += g[i, j, y, v]
    return gi


@pytest.mark.parametrize(
    ("k", "s", "pad", "kind", "ceil", "cip"),
    [
        ((3, 3), (2, 2), (1, 1, 1, 1), "avg", False, False),
        ((2, 2), (2, 2), (0, 0, 0, 0), "avg", False, True),
        ((3, 3), (2, 2), (1, 1, 1, 1), "avg", True, True),
        ((3, 3), (2, 2), (1, 1, 1, 1), "max", False, True),
        ((3, 3), (2, 1), (1, 0, 2, 1), "max", True, True),
    ],
)
def test_pool_grad_matches_numpy(
    k: tuple[int, int], s: tuple[int, int], pad: tuple[int, ...], kind: str, ceil: bool, cip: bool
) -> None:
    A = te.placeholder((1, 3, 9, 9), name="A")
    B = topi.nn.pool2d(A, k, s, (1, 1), pad, kind, ceil, "NCHW", cip)
    G = te.placeholder(B.shape, name="G")
    P = topi.nn.pool_grad(G, A, k, s, pad, kind, ceil, cip)
    x = np.random.uniform(0.001, 1, (1, 3, 9, 9)).astype("float32")
    g = np.random.uniform(0.001, 1, _dims(B)).astype("float32")
    want = _ref_grad(x, g, k, s, pad, kind, cip)
    np.testing.assert_allclose(_run(P, [A, G], [x, g]), want, rtol=1e-5, atol=1e-6)


def test_pooling_rejects_a_layout_without_its_pooled_axes() -> None:
    A = te.placeholder((1, 2, 8, 8), name="A")
    with pytest.raises(TVMValueError, match="pool2d: Unsupported layout NCDW"):
        topi.nn.pool2d(A, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", layout="NCDW")
    with pytest.raises(TVMValueError, match="pool3d: Unsupported layout NCHW"):
        topi.nn.pool3d(A, (2, 2, 2), (2, 2, 2), (1, 1, 1), (0,) * 6, "max", layout="NCHW")
