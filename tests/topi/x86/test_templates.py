"""TVM's x86 entry points over pytvm's kernels: the AutoTVM dense and batch-matmul templates
(called without a configuration), the convolution entries (NCHW, NHWC, depthwise) and the
default knobs of a convolution workload.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

import pytvm
from pytvm import autotvm, te, topi
from pytvm.autotvm.task.space import FallbackConfigEntity
from pytvm.target import Target
from pytvm.topi.nn.utils import get_pad_tuple
from pytvm.topi.testing import get_conv2d_nchw_implement
from pytvm.topi.utils import get_const_tuple
from pytvm.topi.x86.conv2d_avx_common import _fallback_schedule, get_simd_32bit_lanes


def _build_run(s: Any, args: list[Any], arrays: list[np.ndarray]) -> np.ndarray:
    f = pytvm.build(s, args, "llvm")
    out = pytvm.nd.array(np.zeros([int(d) for d in args[-1].shape], args[-1].dtype))
    f(*[pytvm.nd.array(a) for a in arrays], out)
    return out.numpy()


@pytest.mark.parametrize(
    ("compute", "schedule"),
    [
        (topi.x86.dense_nopack, topi.x86.schedule_dense_nopack),
        (topi.x86.dense_pack, topi.x86.schedule_dense_pack),
        (topi.x86.dense_dynamic, topi.x86.schedule_dense_dynamic),
    ],
)
def test_dense_templates_with_bias_and_relu(compute: Any, schedule: Any) -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.random((3, 40), "float32"), rng.random((24, 40), "float32"), rng.random(24)
    A, B = te.placeholder(a.shape, name="A"), te.placeholder(b.shape, name="B")
    C = te.placeholder((24,), name="C")
    with Target("llvm"):
        D = topi.nn.relu(compute(A, B, C, "float32"))
        s = schedule([D])
    out = _build_run(s, [A, B, C, D], [a, b, c.astype("float32")])
    np.testing.assert_allclose(out, np.maximum(a @ b.T + c, 0), rtol=1e-5)
    assert autotvm.task.get_workload(D)[0].endswith(".x86")


def test_dense_int8_accumulates_in_int32() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 127, (2, 16)).astype("int8")
    b = rng.integers(-128, 127, (8, 16)).astype("int8")
    A, B = te.placeholder(a.shape, "int8", name="A"), te.placeholder(b.shape, "int8", name="B")
    with Target("llvm"):
        D = topi.x86.dense_nopack(A, B, None, "int32")
        s = topi.x86.schedule_dense_nopack([D])
    out = _build_run(s, [A, B, D], [a, b])
    np.testing.assert_array_equal(out, a.astype("int32") @ b.T.astype("int32"))


def test_batch_matmul_template() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.random((2, 5, 12), "float32"), rng.random((2, 7, 12), "float32")
    X, Y = te.placeholder(x.shape, name="X"), te.placeholder(y.shape, name="Y")
    with Target("llvm"):
        Z = topi.x86.batch_matmul(X, Y, None, "float32")
        s = topi.x86.schedule_batch_matmul([Z])
    np.testing.assert_allclose(_build_run(s, [X, Y, Z], [x, y]), x @ y.transpose(0, 2, 1), 1e-5)


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: tuple[int, ...]) -> np.ndarray:
    top, left, bottom, right = pad
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    f, _, kh, kw = w.shape
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], f, oh, ow), "float32")
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


@pytest.mark.parametrize(("c", "f", "k", "stride", "pad"), [(3, 8, 3, 2, 1), (8, 16, 1, 1, 0)])
def test_conv2d_nchw_entry(c: int, f: int, k: int, stride: int, pad: int) -> None:
    rng = np.random.default_rng(3)
    x, w = rng.random((1, c, 10, 10), "float32"), rng.random((f, c, k, k), "float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    compute, schedule = get_conv2d_nchw_implement("llvm")
    with Target("llvm"):
        Y = topi.nn.relu(compute(X, W, (stride, stride), pad, (1, 1), "float32"))
        s = schedule([Y])
    ref = np.maximum(_conv_ref(x, w, stride, (pad,) * 4), 0)
    np.testing.assert_allclose(_build_run(s, [X, W, Y], [x, w]), ref, rtol=1e-4, atol=1e-4)


def test_conv2d_nhwc_entry_with_same_padding() -> None:
    rng = np.random.default_rng(4)
    x, w = rng.random((1, 7, 7, 4), "float32"), rng.random((3, 3, 4, 5), "float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    with Target("llvm"):
        Y = topi.x86.conv2d_nhwc(X, W, 1, "SAME", 1, "float32")
        s = topi.x86.schedule_conv2d_nhwc([Y])
    ref = _conv_ref(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 1, (1, 1, 1, 1))
    out = _build_run(s, [X, W, Y], [x, w])
    np.testing.assert_allclose(out, ref.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pad", [1, 9])
def test_depthwise_conv2d_nchw_entry(pad: int) -> None:
    rng = np.random.default_rng(5)
    x, w = rng.random((1, 4, 8, 8), "float32"), rng.random((4, 2, 3, 3), "float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    with Target("llvm"):
        Y = topi.x86.depthwise_conv2d_nchw(X, W, 1, pad, 1, "float32")
        s = topi.x86.schedule_depthwise_conv2d_nchw([Y])
    full = w.reshape(8, 1, 3, 3)
    ref = np.concatenate(
        [_conv_ref(x[:, c // 2 : c // 2 + 1], full[c : c + 1], 1, (pad,) * 4) for c in range(8)],
        axis=1,
    )
    np.testing.assert_allclose(_build_run(s, [X, W, Y], [x, w]), ref, rtol=1e-4, atol=1e-4)


class _Workload(NamedTuple):
    """The fields of TVM's ``topi.nn.conv2d.Workload`` the fallback reads."""

    in_filter: int
    out_filter: int
    width: int
    kernel_w: int
    dilation_w: int
    padl: int
    padr: int
    stride_w: int


def test_fallback_knobs_of_a_convolution_workload() -> None:
    cfg = FallbackConfigEntity()
    with Target("llvm"):
        _fallback_schedule(cfg, _Workload(64, 64, 56, 3, 1, 1, 1, 1))
        lanes = get_simd_32bit_lanes()
    assert cfg["tile_ow"].size == [2, 28]
    assert cfg["tile_oc"].size[1] == max(d for d in range(1, lanes + 1) if 64 % d == 0)
    assert cfg["unroll_kw"].val is False


def _nchwc(a: np.ndarray, block: int) -> np.ndarray:
    n, c, h, w = a.shape
    return a.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2)


@pytest.mark.parametrize(
    ("c", "f", "k", "stride", "pad", "dil", "groups", "ib", "ob"),
    [(3, 16, 5, 2, 2, 1, 1, 3, 8), (8, 16, 3, 1, 1, 2, 1, 4, 8), (16, 8, 3, 2, 1, 1, 2, 4, 4)],
)
def test_conv2d_nchwc_template(
    c: int, f: int, k: int, stride: int, pad: int, dil: int, groups: int, ib: int, ob: int
) -> None:
    rng = np.random.default_rng(6)
    x = rng.random((1, c, 9, 9), "float32")
    w = rng.random((f, c // groups, k, k), "float32")
    b = rng.random((f, 1, 1), "float32")
    X = te.placeholder((1, c // ib, 9, 9, ib), name="X")
    W = te.placeholder((f // ob, c // groups // ib, k, k, ib, ob), name="W")
    B = te.placeholder((f // ob, 1, 1, ob), name="B")
    with Target("llvm"):
        conv = topi.x86.conv2d_NCHWc(
            X, W, (stride, stride), pad, (dil, dil), f"NCHW{ib}c", f"NCHW{ob}c", "float32"
        )
        Y = topi.nn.relu(topi.add(conv, B))
        s = topi.x86.schedule_conv2d_NCHWc([Y])
    wk = w.reshape(f // ob, ob, c // groups // ib, ib, k, k).transpose(0, 2, 4, 5, 3, 1)
    bk = b.reshape(f // ob, ob, 1, 1).transpose(0, 2, 3, 1)
    out = _build_run(s, [X, W, B, Y], [_nchwc(x, ib), wk, bk])
    dw = np.zeros((f, c // groups, (k - 1) * dil + 1, (k - 1) * dil + 1), "float32")
    dw[:, :, ::dil, ::dil] = w
    per = c // groups
    ref = np.concatenate(
        [
            _conv_ref(x[:, g * per : (g + 1) * per], dw[g * f // groups : (g + 1) * f // groups],
                      stride, (pad,) * 4)
            for g in range(groups)
        ],
        axis=1,
    )  # fmt: skip
    np.testing.assert_allclose(out, _nchwc(np.maximum(ref + b, 0), ob), rtol=1e-4, atol=1e-4)


def test_conv2d_nchwc_reads_the_configured_knobs() -> None:
    X = te.placeholder((1, 2, 8, 8, 4), name="X")
    W = te.placeholder((1, 2, 3, 3, 4, 8), name="W")
    record = {
        "index": 0,
        "code_hash": None,
        "entity": [
            ["tile_ic", "sp", [-1, 4]],
            ["tile_oc", "sp", [-1, 8]],
            ["tile_ow", "sp", [-1, 2]],
            ["unroll_kw", "ot", True],
        ],
    }
    cfg = autotvm.task.space.ConfigEntity.from_json_dict(record)
    with Target("llvm"), autotvm.ApplyConfig(cfg):
        Y = topi.x86.conv2d_NCHWc(X, W, 1, 1, 1, "NCHW4c", "NCHW8c", "float32")
        s = topi.x86.schedule_conv2d_NCHWc([Y])
    text = str(pytvm.lower(s, [X, W, Y]))
    assert "x.outer: int32, 0, 4)" in text  # 8 columns in blocks of 2
    assert text.count("ic.inner: int32, 0, 4)") == 3  # the kernel's columns unrolled


@pytest.mark.parametrize(
    ("mult", "stride", "pad", "dil"), [(1, 1, 1, 1), (2, 2, "SAME", 1), (1, 1, 2, 2)]
)
def test_depthwise_conv2d_nchwc_template(mult: int, stride: int, pad: Any, dil: int) -> None:
    rng = np.random.default_rng(7)
    c, ib, ob = 8, 4, 8
    x = rng.random((1, c, 10, 10), "float32")
    w = rng.random((c, mult, 3, 3), "float32")
    X = te.placeholder((1, c // ib, 10, 10, ib), name="X")
    W = te.placeholder((c * mult // ob, 1, 3, 3, 1, ob), name="W")
    with Target("llvm"):
        Y = topi.nn.relu(
            topi.x86.depthwise_conv2d_NCHWc(
                X, W, stride, pad, dil, f"NCHW{ib}c", f"NCHW{ob}c", "float32"
            )
        )
        s = topi.x86.schedule_depthwise_conv2d_NCHWc([Y])
    wk = w.reshape(c * mult // ob, ob, 1, 3, 3).transpose(0, 2, 3, 4, 1)[:, :, :, :, None, :]
    out = _build_run(s, [X, W, Y], [_nchwc(x, ib), wk])
    dk = (3 - 1) * dil + 1
    pads = get_pad_tuple(pad, (dk, dk))
    dw = np.zeros((c * mult, 1, dk, dk), "float32")
    dw[:, :, ::dil, ::dil] = w.reshape(c * mult, 1, 3, 3)
    ref = np.concatenate(
        [
            _conv_ref(x[:, o // mult : o // mult + 1], dw[o : o + 1], stride, pads)
            for o in range(c * mult)
        ],
        axis=1,
    )
    np.testing.assert_allclose(out, _nchwc(np.maximum(ref, 0), ob), rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_nchw_entry_with_relu() -> None:
    rng = np.random.default_rng(8)
    x, w = rng.random((1, 3, 5, 5), "float32"), rng.random((3, 4, 3, 3), "float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    with Target("llvm"):
        Y = topi.nn.relu(topi.x86.conv2d_transpose_nchw(X, W, (2, 2), (1, 1, 1, 1), "float32", 1))
        s = topi.x86.schedule_conv2d_transpose_nchw([Y])
    full = np.zeros((1, 4, 2 * 4 + 3 + 1, 2 * 4 + 3 + 1), "float32")
    for i in range(5):
        for j in range(5):
            full[0, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3] += np.einsum(
                "c,cfhw->fhw", x[0, :, i, j], w
            )
    ref = full[:, :, 1:11, 1:11]
    np.testing.assert_allclose(_build_run(s, [X, W, Y], [x, w]), ref, rtol=1e-5, atol=1e-5)


def test_same_padding_covers_the_dilated_kernel() -> None:
    X = te.placeholder((1, 4, 5, 5), name="X")
    W = te.placeholder((4, 4, 2, 2), name="W")
    D = te.placeholder((4, 1, 3, 3), name="D")
    with Target("llvm"):
        Y = topi.x86.conv2d_nchw(X, W, 1, "SAME", 2, "float32")
        Z = topi.x86.depthwise_conv2d_nchw(X, D, 1, "SAME", 2, "float32")
    assert get_const_tuple(Y.shape) == (1, 4, 5, 5)
    assert get_const_tuple(Z.shape) == (1, 4, 5, 5)


def test_schedule_batch_norm_runs_the_normalized_output() -> None:
    rng = np.random.default_rng(9)
    x = rng.random((2, 3, 4, 5), "float32")
    g, b, m = rng.random(3, "float32"), rng.random(3, "float32"), rng.random(3, "float32")
    v = rng.random(3, "float32") + 0.5
    X, G, B, M, V = (te.placeholder(a.shape, name=n) for a, n in zip([x, g, b, m, v], "xgbmv"))
    with Target("llvm"):
        out = topi.nn.batch_norm(X, G, B, M, V, 1, 0.01, True, True, False, 0.1)[0]
        s = topi.x86.schedule_batch_norm([out])
    res = _build_run(s, [X, G, B, M, V, out], [x, g, b, m, v])
    shape = (1, 3, 1, 1)
    ref = (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 0.01) * g.reshape(shape)
    np.testing.assert_allclose(res, ref + b.reshape(shape), rtol=1e-5, atol=1e-6)


def test_schedule_conv2d_nhwc_takes_a_plain_nhwc_convolution() -> None:
    x = np.random.default_rng(10).random((1, 5, 5, 3), "float32")
    w = np.random.default_rng(11).random((3, 3, 3, 2), "float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    ry, rx, rc = te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"), te.reduce_axis((0, 3))
    Y = te.compute(
        (1, 3, 3, 2),
        lambda n, y, x_, f: te.sum(X[n, y + ry, x_ + rx, rc] * W[ry, rx, rc, f], axis=[ry, rx, rc]),
        name="Y",
    )
    R = topi.nn.relu(Y)
    with Target("llvm"):
        s = topi.x86.schedule_conv2d_nhwc([R])
    out = _build_run(s, [X, W, R], [x, w])
    ref = _conv_ref(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 1, (0, 0, 0, 0))
    np.testing.assert_allclose(out, np.maximum(ref, 0).transpose(0, 2, 3, 1), rtol=1e-5)
