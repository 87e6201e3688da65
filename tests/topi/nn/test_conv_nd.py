"""Direct convolutions in NCW/NWC, NHWC/HWCN (grouped, depthwise), NCDHW/NDHWC against a
numpy convolution; TVM's Workload records of conv2d and depthwise_conv2d.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.topi.nn.conv2d import _get_workload
from pytvm.topi.nn.depthwise_conv2d import _get_workload as _depthwise_workload


def _run(out_t: Any, ins: list[Any], arrays: list[np.ndarray]) -> np.ndarray:
    f = tvm.build(te.create_schedule(out_t.op), [*ins, out_t], "llvm")
    out = tvm.nd.array(np.zeros([int(d) for d in out_t.shape], out_t.dtype))
    f(*[tvm.nd.array(a) for a in arrays], out)
    return out.numpy()


def _conv_nc(
    x: np.ndarray, w: np.ndarray, stride: int, pads: list[tuple[int, int]], dil: int, groups: int
) -> np.ndarray:
    """``x [N, C, *S]`` with ``w [O, C / groups, *K]``."""
    xp = np.pad(x, [(0, 0), (0, 0), *pads])
    n_sp = x.ndim - 2
    kdims = w.shape[2:]
    outs = [(xp.shape[2 + i] - (kdims[i] - 1) * dil - 1) // stride + 1 for i in range(n_sp)]
    out = np.zeros((x.shape[0], w.shape[0], *outs), "float64")
    per = w.shape[1]
    for o in range(w.shape[0]):
        g = o // (w.shape[0] // groups)
        for pos in np.ndindex(*outs):
            sl = tuple(
                slice(p * stride, p * stride + (k - 1) * dil + 1, dil)
                for p, k in zip(pos, kdims, strict=True)
            )
            patch = xp[(slice(None), slice(g * per, (g + 1) * per), *sl)]
            out[(slice(None), o, *pos)] = (patch * w[o]).reshape(x.shape[0], -1).sum(1)
    return out.astype("float32")


@pytest.mark.parametrize(("groups", "layout"), [(1, "NCW"), (2, "NCW"), (1, "NWC"), (2, "NWC")])
def test_conv1d_matches_numpy(groups: int, layout: str) -> None:
    x = np.random.uniform(size=(2, 4, 11)).astype("float32")
    w = np.random.uniform(size=(6, 4 // groups, 3)).astype("float32")
    want = _conv_nc(x, w, 2, [(1, 2)], 1, groups)
    if layout == "NCW":
        X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
        got = _run(topi.nn.conv1d(X, W, 2, (1, 2), 1, groups, "NCW"), [X, W], [x, w])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        return
    xt, wt = x.transpose(0, 2, 1), w.transpose(2, 1, 0)
    X, W = te.placeholder(xt.shape, name="X"), te.placeholder(wt.shape, name="W")
    got = _run(topi.nn.conv1d(X, W, 2, (1, 2), 1, groups, "NWC"), [X, W], [xt, wt])
    np.testing.assert_allclose(got, want.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("padding", "dilation", "groups"), [("SAME", 1, 1), (1, 2, 2), ("VALID", 1, 1)]
)
def test_conv2d_nhwc_and_hwcn_match_numpy(padding: Any, dilation: int, groups: int) -> None:
    x = np.random.uniform(size=(2, 4, 9, 9)).astype("float32")
    w = np.random.uniform(size=(6, 4 // groups, 3, 3)).astype("float32")
    p: int = {"SAME": dilation, "VALID": 0}[padding] if isinstance(padding, str) else padding
    want = _conv_nc(x, w, 1, [(p, p), (p, p)], dilation, groups)
    wt = w.transpose(2, 3, 1, 0)
    X, W = (
        te.placeholder(x.transpose(0, 2, 3, 1).shape, name="X"),
        te.placeholder(wt.shape, name="W"),
    )
    if groups == 1:
        out_t = topi.nn.conv2d_nhwc(X, W, 1, padding, dilation)
    else:
        out_t = topi.nn.group_conv2d_nhwc(X, W, 1, padding, dilation, groups)
    got = _run(out_t, [X, W], [x.transpose(0, 2, 3, 1), wt])
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)
    if groups == 1:
        H = te.placeholder(x.transpose(2, 3, 1, 0).shape, name="H")
        got = _run(
            topi.nn.conv2d_hwcn(H, W, 1, padding, dilation), [H, W], [x.transpose(2, 3, 1, 0), wt]
        )
        np.testing.assert_allclose(got, want.transpose(2, 3, 1, 0), rtol=1e-4, atol=1e-4)


def test_depthwise_conv2d_nhwc_matches_numpy() -> None:
    x = np.random.uniform(size=(1, 3, 8, 8)).astype("float32")
    w = np.random.uniform(size=(3, 2, 3, 3)).astype("float32")
    want = np.concatenate(
        [_conv_nc(x[:, c : c + 1], w[c][:, None], 2, [(1, 1), (1, 1)], 1, 1) for c in range(3)], 1
    )
    X = te.placeholder((1, 8, 8, 3), name="X")
    W = te.placeholder((3, 3, 3, 2), name="W")
    got = _run(
        topi.nn.depthwise_conv2d_nhwc(X, W, 2, 1, 1),
        [X, W],
        [x.transpose(0, 2, 3, 1), w.transpose(2, 3, 0, 1)],
    )
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_conv3d_matches_numpy(layout: str) -> None:
    x = np.random.uniform(size=(1, 4, 5, 6, 7)).astype("float32")
    w = np.random.uniform(size=(4, 2, 2, 3, 3)).astype("float32")
    want = _conv_nc(x, w, 1, [(1, 1)] * 3, 1, 2)
    if layout == "NCDHW":
        X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
        got = _run(topi.nn.conv3d_ncdhw(X, W, 1, 1, 1, 2), [X, W], [x, w])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        return
    xt, wt = x.transpose(0, 2, 3, 4, 1), w.transpose(2, 3, 4, 1, 0)
    X, W = te.placeholder(xt.shape, name="X"), te.placeholder(wt.shape, name="W")
    got = _run(topi.nn.conv3d_ndhwc(X, W, 1, 1, 1, 2), [X, W], [xt, wt])
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 4, 1), rtol=1e-4, atol=1e-4)


def test_workloads_describe_the_convolution() -> None:
    x = te.placeholder((1, 9, 9, 4), name="x")
    w = te.placeholder((3, 3, 2, 8), name="w")
    wkl = _get_workload(x, w, (2, 1), "SAME", 2, "float32", "NHWC")
    assert (wkl.height, wkl.in_filter, wkl.groups, wkl.out_filter) == (9, 4, 2, 8)
    assert (wkl.padt, wkl.padb, wkl.stride_h, wkl.stride_w, wkl.dilation_h) == (2, 2, 2, 1, 2)
    d = _depthwise_workload(
        te.placeholder((1, 3, 8, 8)), te.placeholder((3, 2, 3, 3)), 1, 1, 1, None
    )
    assert (d.in_filter, d.out_filter, d.padl) == (3, 6, 1)


def test_conv_refuses_groups_that_do_not_match_the_kernel() -> None:
    X, W = te.placeholder((1, 4, 8), name="X"), te.placeholder((6, 3, 3), name="W")
    with pytest.raises(TVMValueError, match="conv1d_ncw: bad groups 1"):
        topi.nn.conv1d_ncw(X, W)


def test_depthwise_nhwc_reads_any_layout_but_hwio_as_hwoi() -> None:
    # TVM's test passes the dtype where kernel_layout goes; TVM reads the filter as HWOI then
    x = np.random.uniform(size=(1, 6, 6, 2)).astype("float32")
    w = np.random.uniform(size=(3, 3, 2, 2)).astype("float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    a = _run(topi.nn.depthwise_conv2d_nhwc(X, W, 1, 1, 1, "HWOI"), [X, W], [x, w])
    b = _run(topi.nn.depthwise_conv2d_nhwc(X, W, 1, 1, 1, "float32"), [X, W], [x, w])
    c = _run(
        topi.nn.depthwise_conv2d_nhwc(X, W, 1, 1, 1, "HWIO"),
        [X, W],
        [x, w.transpose(0, 1, 3, 2).copy()],
    )
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, c, rtol=1e-6)


def test_nchw_convolutions_take_string_padding() -> None:
    x = np.random.uniform(size=(1, 4, 7, 7)).astype("float32")
    w = np.random.uniform(size=(4, 1, 3, 3)).astype("float32")
    X, W = te.placeholder(x.shape, name="X"), te.placeholder(w.shape, name="W")
    same = _run(topi.nn.depthwise_conv2d_nchw(X, W, 1, "SAME", 2), [X, W], [x, w])
    ints = _run(topi.nn.depthwise_conv2d_nchw(X, W, 1, 2, 2), [X, W], [x, w])
    np.testing.assert_array_equal(same, ints)
