"""topi.testing's numpy references against direct definitions (loops over the formula) and
against compiled topi kernels.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.topi import testing as tt

RNG = np.random.default_rng(7)
Arr = np.ndarray[Any, Any]


def _rand(*shape: int) -> Arr:
    return RNG.uniform(-1, 1, shape).astype("float32")


def _direct_conv2d(x: Arr, w: Arr, stride: int, pads: tuple[int, ...], groups: int) -> Arr:
    top, left, bottom, right = pads
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = xp.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, f, oh, ow))
    for b, o, y, z in itertools.product(range(n), range(f), range(oh), range(ow)):
        g = o // (f // groups)
        patch = xp[
            b, g * cg : (g + 1) * cg, y * stride : y * stride + kh, z * stride : z * stride + kw
        ]
        out[b, o, y, z] = np.sum(patch * w[o])
    return out


@pytest.mark.parametrize(
    ("stride", "padding", "pads"),
    [(1, 0, (0, 0, 0, 0)), (2, (1, 0, 2, 1), (1, 0, 2, 1)), (1, "SAME", (1, 1, 1, 0))],
)
def test_conv2d_layouts_match_the_direct_sum(stride: int, padding: Any, pads: Any) -> None:
    x, w = _rand(2, 4, 7, 6), _rand(6, 2, 3, 2)
    want = _direct_conv2d(x, w, stride, pads, 2)
    got = tt.conv2d_nchw_python(x, w, stride, padding, groups=2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    nhwc = tt.conv2d_nhwc_python(
        x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), stride, padding, 2
    )
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-5)
    w1 = _rand(5, 4, 3, 2)
    hwcn = tt.conv2d_hwcn_python(x.transpose(2, 3, 1, 0), w1.transpose(2, 3, 1, 0), stride, padding)
    want1 = _direct_conv2d(x, w1, stride, pads, 1)
    np.testing.assert_allclose(hwcn.transpose(3, 2, 0, 1), want1, rtol=1e-5, atol=1e-5)


def test_depthwise_is_a_conv_per_channel() -> None:
    x, w = _rand(1, 3, 6, 6), _rand(3, 2, 3, 3)
    got = tt.depthwise_conv2d_python_nchw(x, w, 1, 1)
    for c, m in itertools.product(range(3), range(2)):
        want = _direct_conv2d(x[:, c : c + 1], w[c, m][None, None], 1, (1, 1, 1, 1), 1)
        np.testing.assert_allclose(got[:, c * 2 + m], want[:, 0], rtol=1e-5, atol=1e-5)
    nhwc = tt.depthwise_conv2d_python_nhwc(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 0, 1), 1, 1)
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), got, rtol=1e-6)


def test_conv1d_dilation_and_conv3d_agree_with_conv2d() -> None:
    x, w = _rand(2, 3, 9), _rand(4, 3, 2)
    dilated = tt.dilate_python(w, (1, 1, 3))
    np.testing.assert_allclose(
        tt.conv1d_ncw_python(x, w, 1, (1, 2), 3), tt.conv1d_ncw_python(x, dilated, 1, (1, 2), 1)
    )
    x2, w2 = _rand(1, 2, 5, 6), _rand(3, 2, 3, 3)
    as3d = tt.conv3d_ncdhw_python(x2[:, :, None], w2[:, :, None], 1, (0, 1, 1))
    np.testing.assert_allclose(as3d[:, :, 0], tt.conv2d_nchw_python(x2, w2, 1, 1), rtol=1e-6)


def test_dilate_python_spreads_values() -> None:
    got = tt.dilate_python(np.array([[1, 2], [3, 4]]), (2, 1), dilation_value=9)
    np.testing.assert_array_equal(got, [[1, 2], [9, 9], [3, 4]])
    with pytest.raises(TVMValueError, match="one per axis"):
        tt.dilate_python(np.ones((2, 2)), (2,))


def test_conv2d_transpose_scatters_each_input_point() -> None:
    x, w = _rand(1, 2, 3, 4), _rand(2, 3, 3, 3)
    stride, pad, opad = 2, 1, 1
    full = np.zeros((1, 3, (3 - 1) * stride + 3 + opad, (4 - 1) * stride + 3 + opad))
    for c, y, z in itertools.product(range(2), range(3), range(4)):
        full[0, :, y * stride : y * stride + 3, z * stride : z * stride + 3] += x[0, c, y, z] * w[c]
    want = full[:, :, pad : full.shape[2] - pad, pad : full.shape[3] - pad]
    got = tt.conv2d_transpose_nchw_python(x, w, stride, pad, (opad, opad))
    np.testing.assert_allclose(
        got[:, :, : want.shape[2], : want.shape[3]], want, rtol=1e-5, atol=1e-6
    )
    assert got.shape == (1, 3, 6, 8)
    with pytest.raises(TVMValueError, match="less than the stride"):
        tt.conv2d_transpose_nchw_python(x, w, 1, 0, 1)


def test_pool_counts_padding_only_when_asked() -> None:
    x = np.arange(1, 10, dtype="float32").reshape(1, 1, 3, 3)
    incl = tt.poolnd_python(x, (2, 2), (2, 2), (1, 1), (1, 1), (0, 0), "avg", True)
    excl = tt.poolnd_python(x, (2, 2), (2, 2), (1, 1), (1, 1), (0, 0), "avg", False)
    assert incl[0, 0, 0, 0] == pytest.approx(1 / 4) and excl[0, 0, 0, 0] == 1
    assert excl[0, 0, 1, 1] == pytest.approx((5 + 6 + 8 + 9) / 4)
    ceil = tt.poolnd_python(x, (2, 2), (2, 2), (1, 1), (0, 0), (0, 0), "max", ceil_mode=True)
    np.testing.assert_array_equal(ceil[0, 0], [[5, 6], [8, 9]])
    nhwc = tt.poolnd_python(
        x.transpose(0, 2, 3, 1), (2, 2), (1, 1), (1, 1), (0, 0), (0, 0), "max", layout="NHWC"
    )
    np.testing.assert_array_equal(nhwc[0, :, :, 0], [[5, 6], [8, 9]])


def test_pool_grad_routes_to_the_maximum_and_spreads_the_average() -> None:
    x = np.array([[[[1, 5], [3, 2]]]], dtype="float32")
    g = np.array([[[[2.0]]]], dtype="float32")
    mx = tt.pool_grad_nchw(x, g, (2, 2), (2, 2), (0, 0, 0, 0), "max", False)
    np.testing.assert_array_equal(mx[0, 0], [[0, 2], [0, 0]])
    avg = tt.pool_grad_nchw(x, g, (2, 2), (2, 2), (0, 0, 0, 0), "avg", False)
    np.testing.assert_array_equal(avg[0, 0], np.full((2, 2), 0.5))


def test_adaptive_pool_windows() -> None:
    x = np.arange(5, dtype="float32").reshape(1, 1, 5)
    np.testing.assert_allclose(tt.adaptive_pool(x, (3,), "avg", "NCW")[0, 0], [0.5, 2, 3.5])
    np.testing.assert_array_equal(
        tt.adaptive_pool(x.transpose(0, 2, 1), 2, "max", "NWC")[0, :, 0], [2, 4]
    )


def test_normalizations() -> None:
    x = _rand(2, 4, 3, 5)
    gamma, beta = _rand(3, 5), _rand(3, 5)
    got = tt.layer_norm_python(x, gamma, beta, (2, 3), 1e-5)
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    np.testing.assert_allclose(
        got, (x - mean) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5
    )
    gn = tt.group_norm_python(x, np.ones(4), np.zeros(4), 2, 1, [2, 3])
    g0 = x[:, :2]
    np.testing.assert_allclose(
        gn[:, :2],
        (g0 - g0.mean((1, 2, 3), keepdims=True)) / np.sqrt(g0.var((1, 2, 3), keepdims=True) + 1e-5),
        rtol=1e-4,
        atol=1e-5,
    )
    sm = tt.softmax_python(x, 1)
    np.testing.assert_allclose(sm.sum(1), 1, rtol=1e-5)
    np.testing.assert_allclose(tt.log_softmax_python(x, 1), np.log(sm), rtol=1e-4, atol=1e-5)
    lrn = tt.lrn_python(x, 3, 1, 2.0, 0.5, 0.75)
    s1 = x[:, 0] ** 2 + x[:, 1] ** 2
    np.testing.assert_allclose(lrn[:, 0], x[:, 0] / (2 + 0.5 * s1 / 3) ** 0.75, rtol=1e-5)
    out, mean_out, _ = tt.batch_norm(
        x, np.ones(4), np.zeros(4), np.zeros(4), np.ones(4), 1, 1e-5, True, True, True, 0.1
    )
    np.testing.assert_allclose(mean_out, 0.1 * x.mean((0, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(out.mean((0, 2, 3)), 0, atol=1e-5)


def test_indexing_references() -> None:
    data = np.arange(24).reshape(2, 3, 4)
    idx = np.array([[1, 0], [2, 1]])
    np.testing.assert_array_equal(tt.gather_nd_python(data, idx), [data[1, 2], data[0, 1]])
    np.testing.assert_array_equal(
        tt.gather_python(data, 2, np.array([[[3]] * 3] * 2)), data[:, :, 3:]
    )
    np.testing.assert_array_equal(
        tt.strided_slice_python(data, [1, 0], [-1, 2], None, "size"), data[1:, 0:2]
    )
    np.testing.assert_array_equal(
        tt.strided_slice_python(data, [3], [0], [-2], axes=[2]), data[:, :, 3:0:-2]
    )
    oh = tt.one_hot(np.array([0, 2]), 1, 0, 3, 0, "int32")
    np.testing.assert_array_equal(oh, [[1, 0], [0, 0], [0, 1]])
    band = tt.matrix_set_diag(
        np.zeros((3, 3)), np.array([[1, 2, 0], [3, 4, 5]]), (0, 1), "LEFT_RIGHT"
    )
    np.testing.assert_array_equal(band, [[3, 1, 0], [0, 4, 2], [0, 0, 5]])
    found = tt.searchsorted_ref(np.array([1, 3, 5]), np.array([[3, 6]]), True, "int64")
    np.testing.assert_array_equal(found, [[2, 3]])
    loss = tt.nll_loss(
        np.log(np.array([[0.5, 0.5], [0.2, 0.8]])), np.array([1, -100]), np.ones(2), "sum"
    )
    assert float(loss) == pytest.approx(-np.log(0.5))


def test_space_batch_round_trip_and_depth_moves() -> None:
    x = _rand(2, 4, 6, 3)
    s2b = tt.space_to_batch_nd_python(x, [2, 3], [0, 0], [0, 0])
    assert s2b.shape == (12, 2, 2, 3)
    np.testing.assert_array_equal(tt.batch_to_space_nd_python(s2b, [2, 3], [0, 0], [0, 0]), x)
    y = _rand(1, 2, 4, 6)
    np.testing.assert_array_equal(tt.depth_to_space_python(tt.space_to_depth_python(y, 2), 2), y)
    assert tt.reorg_python(_rand(1, 8, 4, 4), 2).shape == (1, 32, 2, 2)


def test_matmul_references() -> None:
    a, b = _rand(3, 4, 5), _rand(1, 6, 5)
    np.testing.assert_allclose(tt.batch_matmul(a, b), a @ b[0].T, rtol=1e-5)
    d = tt.dense(a[0], b[0], np.ones(6, "float32"), use_bias=True, use_relu=True)
    np.testing.assert_allclose(d, np.maximum(a[0] @ b[0].T + 1, 0), rtol=1e-5)
    h, c = tt.lstm_python(_rand(3, 2, 4), _rand(12, 4), _rand(12, 3))
    assert h.shape == (3, 2, 3) and c.shape == (3, 2, 3)


@pytest.mark.needs_cc
def test_compiled_conv2d_and_softmax_match_the_references() -> None:
    x, w = _rand(1, 3, 8, 8), _rand(4, 3, 3, 3)
    X = te.placeholder(x.shape, name="X")
    W = te.placeholder(w.shape, name="W")
    conv = topi.nn.conv2d_nchw(X, W, 2, 1, 1)
    sm = topi.nn.softmax(X, axis=1)
    dev = pytvm.cpu()
    for out, args, want in (
        (conv, [X, W], tt.conv2d_nchw_python(x, w, 2, 1)),
        (sm, [X], tt.softmax_python(x, 1)),
    ):
        s = te.create_schedule([out.op])
        mod = pytvm.build(s, [*args, out], target="llvm")
        arrays = [pytvm.nd.array(v, dev) for v in (x, w)[: len(args)]]
        res = pytvm.nd.array(np.zeros(want.shape, "float32"), dev)
        mod(*arrays, res)
        np.testing.assert_allclose(res.numpy(), want, rtol=1e-4, atol=1e-5)


def test_poolnd_python_max_counts_padding_as_zeros_like_tvms_reference() -> None:
    data = -np.ones((1, 1, 3, 3), dtype="float32")
    args = ([3, 3], [1, 1], [1, 1], [1, 1], [1, 1], "max")
    with_pad = tt.poolnd_python(data, *args, count_include_pad=True)
    without = tt.poolnd_python(data, *args, count_include_pad=False)
    assert with_pad[0, 0, 0, 0] == 0.0 and with_pad[0, 0, 1, 1] == -1.0  # centre: no padding
    assert (without == -1.0).all()


def test_nll_loss_of_one_sample_and_depth_to_space_cdr() -> None:
    pred = np.log(np.array([0.2, 0.3, 0.5]))
    for reduction in ("none", "mean", "sum"):
        assert np.isclose(tt.nll_loss(pred, np.array(2), np.ones(3), reduction), -pred[2])
    x = np.arange(16, dtype="float32").reshape(1, 4, 2, 2)
    np.testing.assert_array_equal(
        tt.depth_to_space_python(x, 2, "CDR"), tt.depth_to_space_python(x, 2, "CRD")
    )
