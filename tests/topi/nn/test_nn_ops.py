"""Dense, matmul, convolutions, normalization and padding against numpy (reference evaluator)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.te_eval import evaluate

RNG = np.random.default_rng(2)
Arr = np.ndarray[Any, Any]


def _rand(*shape: int) -> Arr:
    return RNG.standard_normal(shape).astype("float32")


def conv2d_ref(
    x: Arr, w: Arr, stride: int, pad: tuple[int, int, int, int], dil: int, groups: int
) -> Arr:
    top, left, bottom, right = pad
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = xp.shape
    f, kc, kh, kw = w.shape
    oh = (h - (kh - 1) * dil - 1) // stride + 1
    ow = (wd - (kw - 1) * dil - 1) // stride + 1
    out = np.zeros((n, f, oh, ow), "float64")
    per = f // groups
    for ff in range(f):
        g = ff // per
        for ry in range(kh):
            for rx in range(kw):
                ys = slice(ry * dil, ry * dil + stride * (oh - 1) + 1, stride)
                xs = slice(rx * dil, rx * dil + stride * (ow - 1) + 1, stride)
                patch = xp[:, g * kc : (g + 1) * kc, ys, xs]
                out[:, ff] += np.einsum("nchw,c->nhw", patch, w[ff, :, ry, rx])
    return out.astype("float32")


def test_dense_matmul_and_bias() -> None:
    X = te.placeholder((5, 7), name="X")
    W = te.placeholder((3, 7), name="W")
    B = te.placeholder((3,), name="B")
    x, w, b = _rand(5, 7), _rand(3, 7), _rand(3)
    (d,) = evaluate(topi.nn.dense(X, W, B), {X: x, W: w, B: b})
    np.testing.assert_allclose(d, x @ w.T + b, rtol=1e-5, atol=1e-5)
    Y = te.placeholder((7, 3), name="Y")
    (m,) = evaluate(topi.matmul(X, Y), {X: x, Y: w.T.copy()})
    np.testing.assert_allclose(m, x @ w.T, rtol=1e-5, atol=1e-5)
    XT = te.placeholder((7, 5), name="XT")
    (mt,) = evaluate(
        topi.nn.matmul(XT, W, transpose_a=True, transpose_b=True), {XT: x.T.copy(), W: w}
    )
    np.testing.assert_allclose(mt, x @ w.T, rtol=1e-5, atol=1e-5)
    with pytest.raises(TVMValueError, match=r"matmul: bad reduction extents \(7, 6\)"):
        topi.nn.dense(X, te.placeholder((3, 6), name="V"))


@pytest.mark.parametrize("n", [16, 21])
def test_dense_pack_from_packed_and_unpacked_weight(n: int) -> None:
    X = te.placeholder((4, 9), name="X")
    W = te.placeholder((n, 9), name="W")
    x, w = _rand(4, 9), _rand(n, 9)
    out = topi.nn.dense_pack(X, W)
    assert [int(str(d)) for d in out.shape] == [4, n]
    (got,) = evaluate(out, {X: x, W: w})
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-5)
    bn = 8
    panels = -(-n // bn)
    wp = np.zeros((panels * bn, 9), "float32")
    wp[:n] = w
    packed = wp.reshape(panels, bn, 9).transpose(0, 2, 1).copy()
    P = te.placeholder(packed.shape, name="P")
    (from_packed,) = evaluate(topi.nn.dense_pack(X, P, units=n), {X: x, P: packed})
    np.testing.assert_allclose(from_packed, x @ w.T, rtol=1e-5, atol=1e-5)
    (pw,) = evaluate(topi.nn.dense_pack_weight(W, bn), {W: w})
    np.testing.assert_array_equal(pw, packed)


@pytest.mark.parametrize(("ta", "tb"), [(False, True), (False, False), (True, True)])
def test_batch_matmul_transposes_and_broadcasts(ta: bool, tb: bool) -> None:
    a, b = _rand(3, 4, 5), _rand(1, 5, 6)
    a_in = a.transpose(0, 2, 1).copy() if ta else a
    b_in = b.transpose(0, 2, 1).copy() if tb else b
    A = te.placeholder(a_in.shape, name="A")
    B = te.placeholder(b_in.shape, name="B")
    (got,) = evaluate(
        topi.nn.batch_matmul(A, B, transpose_a=ta, transpose_b=tb), {A: a_in, B: b_in}
    )
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("stride", "padding", "dilation"),
    [(1, 0, 1), (2, 1, 1), (1, (1, 0, 2, 1), 2), ((2, 1), (1, 2), 1)],
)
def test_conv2d_nchw_matches_reference(stride: Any, padding: Any, dilation: int) -> None:
    x, w = _rand(1, 3, 7, 8), _rand(4, 3, 3, 3)
    X = te.placeholder(x.shape, name="X")
    W = te.placeholder(w.shape, name="W")
    (got,) = evaluate(topi.nn.conv2d_nchw(X, W, stride, padding, dilation), {X: x, W: w})
    pad4 = padding if isinstance(padding, tuple) and len(padding) == 4 else None
    if pad4 is None:
        ph, pw = (padding, padding) if isinstance(padding, int) else padding
        pad4 = (ph, pw, ph, pw)
    if isinstance(stride, tuple):
        ref = conv2d_ref(x, w, 1, pad4, dilation, 1)[:, :, :: stride[0], :: stride[1]]
    else:
        ref = conv2d_ref(x, w, stride, pad4, dilation, 1)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_group_and_depthwise_conv2d() -> None:
    x = _rand(2, 4, 6, 5)
    X = te.placeholder(x.shape, name="X")
    w = _rand(6, 2, 3, 3)
    W = te.placeholder(w.shape, name="W")
    (got,) = evaluate(topi.nn.group_conv2d_nchw(X, W, 1, 1, 1, groups=2), {X: x, W: w})
    np.testing.assert_allclose(got, conv2d_ref(x, w, 1, (1, 1, 1, 1), 1, 2), rtol=1e-4, atol=1e-4)
    dw = _rand(4, 2, 3, 3)  # channel multiplier 2
    D = te.placeholder(dw.shape, name="D")
    (dgot,) = evaluate(topi.nn.depthwise_conv2d_nchw(X, D, 2, 1, 1), {X: x, D: dw})
    ref = conv2d_ref(x, dw.reshape(8, 1, 3, 3), 2, (1, 1, 1, 1), 1, 4)
    np.testing.assert_allclose(dgot, ref, rtol=1e-4, atol=1e-4)


def test_conv2d_rejects_bad_attributes() -> None:
    X = te.placeholder((1, 3, 8, 8), name="X")
    W = te.placeholder((4, 3, 3, 3), name="W")
    with pytest.raises(TVMValueError, match=r"conv2d_nchw: bad stride 0; expected values >= 1"):
        topi.nn.conv2d_nchw(X, W, 0, 1, 1)
    with pytest.raises(TVMValueError, match=r"conv2d_nchw: bad filter channels 2"):
        topi.nn.conv2d_nchw(X, te.placeholder((4, 2, 3, 3), name="V"), 1, 1, 1)
    with pytest.raises(TVMValueError, match=r"group_conv2d_nchw: bad groups 2"):
        topi.nn.group_conv2d_nchw(X, W, 1, 1, 1, 2)
    with pytest.raises(TVMValueError, match=r"conv2d_nchw: bad kernel height 9"):
        topi.nn.conv2d_nchw(X, te.placeholder((4, 3, 9, 3), name="V"), 1, 0, 1)
    with pytest.raises(TVMValueError, match=r"conv2d_nchw: bad padding -1"):
        topi.nn.conv2d_nchw(X, W, 1, -1, 1)


def test_pad_fills_borders() -> None:
    x = _rand(2, 3)
    X = te.placeholder(x.shape, name="X")
    (got,) = evaluate(topi.nn.pad(X, (1, 0), (0, 2), pad_value=-3.0), {X: x})
    np.testing.assert_array_equal(got, np.pad(x, ((1, 0), (0, 2)), constant_values=-3.0))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax(axis: int) -> None:
    x = _rand(3, 4, 5) * 4
    X = te.placeholder(x.shape, name="X")
    e = np.exp(x - x.max(axis, keepdims=True))
    ref = e / e.sum(axis, keepdims=True)
    (got,) = evaluate(topi.nn.softmax(X, axis), {X: x})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    (lg,) = evaluate(topi.nn.log_softmax(X, axis), {X: x})
    np.testing.assert_allclose(lg, np.log(ref), rtol=1e-4, atol=1e-5)


def test_layer_norm_over_trailing_axes() -> None:
    x = _rand(2, 3, 8) * 3 + 1
    X = te.placeholder(x.shape, name="X")
    for axes in ([-1], [1, 2]):
        shape = [x.shape[a] for a in axes]
        g, b = _rand(*shape), _rand(*shape)
        G = te.placeholder(g.shape, name="G")
        B = te.placeholder(b.shape, name="B")
        (got,) = evaluate(topi.nn.layer_norm(X, G, B, axes, 1e-5), {X: x, G: g, B: b})
        t = tuple(axes)
        mu, var = x.mean(t, keepdims=True), x.var(t, keepdims=True)
        np.testing.assert_allclose(
            got, (x - mu) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4, atol=1e-4
        )


def test_batch_norm_inference() -> None:
    x = _rand(2, 3, 4, 4)
    X = te.placeholder(x.shape, name="X")
    g, b, m = _rand(3), _rand(3), _rand(3)
    v = np.abs(_rand(3)) + 0.5
    G, B, M, V = (te.placeholder((3,), name=n) for n in "GBMV")
    out = topi.nn.batch_norm(X, G, B, M, V, axis=1, epsilon=1e-3)
    (got,) = evaluate(out[0], {X: x, G: g, B: b, M: m, V: v})
    (mean_copy,) = evaluate(out[1], {M: m})  # copies of the moving statistics, not M itself
    np.testing.assert_array_equal(mean_copy, m)
    assert out[1] is not M
    s = (slice(None), None, None)
    ref = (x - m[s]) / np.sqrt(v[s] + 1e-3) * g[s] + b[s]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_batch_norm_training_uses_batch_statistics() -> None:
    x = _rand(2, 3, 4)
    X = te.placeholder(x.shape, name="X")
    g, b, m, v = _rand(3), _rand(3), _rand(3), np.abs(_rand(3)) + 0.5
    G, B, M, V = (te.placeholder((3,), name=n) for n in "GBMV")
    out, new_m, new_v = topi.nn.batch_norm(X, G, B, M, V, 1, 1e-3, training=True, momentum=0.2)
    feeds = {X: x, G: g, B: b, M: m, V: v}
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    s = (slice(None), None)
    (got,) = evaluate(out, feeds)
    np.testing.assert_allclose(got, (x - mean[s]) / np.sqrt(var[s] + 1e-3) * g[s] + b[s], rtol=1e-4)
    (got_m,) = evaluate(new_m, feeds)
    np.testing.assert_allclose(got_m, 0.8 * m + 0.2 * mean, rtol=1e-5)
    (got_v,) = evaluate(new_v, feeds)
    np.testing.assert_allclose(got_v, 0.8 * v + 0.2 * var, rtol=1e-4)


def test_scale_shift_layouts() -> None:
    x = _rand(1, 3, 2, 2)
    sc, sh = _rand(3), _rand(3)
    X, S, H = (
        te.placeholder(x.shape, name="X"),
        te.placeholder((3,), name="S"),
        te.placeholder((3,), name="H"),
    )
    (got,) = evaluate(topi.nn.scale_shift_nchw(X, S, H), {X: x, S: sc, H: sh})
    np.testing.assert_allclose(got, x * sc[:, None, None] + sh[:, None, None], rtol=1e-6)
    xt = x.transpose(0, 2, 3, 1)
    XT = te.placeholder(xt.shape, name="XT")
    (got,) = evaluate(topi.nn.scale_shift_nhwc(XT, S, H), {XT: xt, S: sc, H: sh})
    np.testing.assert_allclose(got, xt * sc + sh, rtol=1e-6)
