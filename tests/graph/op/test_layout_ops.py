"""Packed weight layouts: ``layout_transform`` and the convolution and dense that read packed
weights (``kernel_layout``/``weight_layout``); the interpreter and the compiled kernels agree
with numpy on the plain weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import graph as g
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.op.layout import layout_transform_np
from pytvm.testing.graph_ops import OpCase, build_cases, interpret_case, run_compiled

RNG = np.random.default_rng(5)


def _f(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype("float32")


IMG = _f(1, 3, 7, 6)
W = _f(16, 3, 3, 3)
A, B = _f(5, 12), _f(24, 12)
CONV_ATTRS = {"strides": (2, 1), "padding": (1, 0, 2, 1), "dilation": (1, 2)}


def _conv_np(x: np.ndarray, w: np.ndarray) -> Any:
    x = np.pad(x, ((0, 0), (0, 0), (1, 2), (0, 1))).astype(np.float64)
    oh, ow = (x.shape[2] - 3) // 2 + 1, x.shape[3] - 4
    out = np.zeros((1, w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            patch = x[:, :, i : i + 2 * oh : 2, 2 * j : 2 * j + ow]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


CASES = [
    OpCase(
        "layout_transform_padded_blocks",
        "layout_transform",
        [_f(20, 3, 2, 2)],
        {"src_layout": "OIHW", "dst_layout": "OIHW8o"},
        expected=lambda w: (
            np.pad(w, ((0, 4), (0, 0), (0, 0), (0, 0)))
            .reshape(3, 8, 3, 2, 2)
            .transpose(0, 2, 3, 4, 1)
        ),
    ),
    OpCase(
        "layout_transform_between_blocks",
        "layout_transform",
        [layout_transform_np(B, "NK", "NK8n")],
        {"src_layout": "NK8n", "dst_layout": "KN"},
        expected=B.T,
    ),
    OpCase(
        "conv2d_packed_kernel",
        "nn.conv2d",
        [IMG, layout_transform_np(W, "OIHW", "OIHW8o")],
        {**CONV_ATTRS, "kernel_layout": "OIHW8o"},
        expected=_conv_np(IMG, W),
        rtol=1e-4,
        atol=1e-5,
    ),
    OpCase(
        "dense_packed_weight",
        "nn.dense",
        [A, layout_transform_np(B, "NK", "NK8n")],
        {"weight_layout": "NK8n"},
        expected=A @ B.T,
        rtol=1e-4,
    ),
]
IDS = [c.name for c in CASES]


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, BaseException]]:
    return build_cases(CASES)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_interpreter_matches_numpy(case: OpCase) -> None:
    np.testing.assert_allclose(interpret_case(case), case.want(), rtol=case.rtol, atol=case.atol)


@pytest.mark.needs_cc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_compiled_kernel_matches_numpy(case: OpCase, built: tuple[Any, Any]) -> None:
    mod, errors = built
    if case.name in errors:
        raise errors[case.name]
    got = run_compiled(mod, case)
    np.testing.assert_allclose(got, case.want(), rtol=case.rtol, atol=case.atol)


def test_packed_kernel_whose_blocks_span_groups_is_rejected() -> None:
    x = g.Var("x", g.TensorType((1, 4, 5, 5), "float32"))
    w = g.const(_f(1, 2, 3, 3, 8))  # a block of 8 output channels, 4 in each group
    with pytest.raises(TVMValueError, match="groups 2"):
        g.call("nn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1),
               groups=2, kernel_layout="OIHW8o")  # fmt: skip


def test_packed_dense_weight_must_have_panels() -> None:
    x = g.Var("x", g.TensorType((2, 12), "float32"))
    with pytest.raises(TVMValueError, match="weight_layout 'NK8n' for a 2-d weight"):
        g.call("nn.dense", x, g.const(B), weight_layout="NK8n")


def test_layout_transform_type_follows_the_layouts() -> None:
    x = g.Var("x", g.TensorType((40, 3, 3, 3), "float32"))
    y = g.call("layout_transform", x, src_layout="OIHW", dst_layout="OIHW16o")
    assert y.checked_type == g.TensorType((3, 3, 3, 3, 16), "float32")
    with pytest.raises(TVMValueError, match="the same primal axes"):
        g.call("layout_transform", x, src_layout="OIHW", dst_layout="OIHWK")
