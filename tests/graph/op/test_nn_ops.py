"""Convolutions, matrix products, pooling, normalizations and resizing: the interpreter and the
compiled kernels agree with ONNX Runtime running the matching ONNX node (or with numpy).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm.testing.graph_ops import (
    OpCase,
    build_cases,
    interpret_case,
    onnx_node_reference,
    run_compiled,
)

RNG = np.random.default_rng(3)


def _f(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype("float32")


IMG = _f(1, 4, 7, 6)
IMG2 = _f(2, 3, 5, 5)


def _conv(x: np.ndarray, w: np.ndarray, s: int, p: tuple[int, ...], d: int, g: int) -> Any:
    return onnx_node_reference(
        "Conv", [x, w], strides=[s, s], pads=list(p), dilations=[d, d], group=g
    )


def _conv_case(
    name: str, w_shape: tuple[int, ...], s: int, p: tuple[int, ...], d: int, g: int
) -> OpCase:
    w = _f(*w_shape)
    top, left, bottom, right = p[0], p[1], p[2], p[3]
    return OpCase(
        name,
        "nn.conv2d",
        [IMG, w],
        {"strides": (s, s), "padding": (top, left, bottom, right), "dilation": (d, d), "groups": g},
        expected=_conv(IMG, w, s, (top, left, bottom, right), d, g),
    )


def _convt_case(
    name: str,
    w_shape: tuple[int, ...],
    s: int,
    p: tuple[int, int, int, int],
    op: int,
    d: int,
    g: int,
) -> OpCase:
    w = _f(*w_shape)
    want = onnx_node_reference(
        "ConvTranspose",
        [IMG, w],
        strides=[s, s],
        pads=list(p),
        output_padding=[op, op],
        dilations=[d, d],
        group=g,
    )
    attrs = {
        "strides": (s, s),
        "padding": p,
        "output_padding": (op, op),
        "dilation": (d, d),
        "groups": g,
    }
    return OpCase(name, "nn.conv2d_transpose", [IMG, w], attrs, expected=want)


def _pool_case(name: str, kind: str, **attrs: Any) -> OpCase:
    onnx_attrs: dict[str, Any] = {
        "kernel_shape": list(attrs["pool_size"]),
        "strides": list(attrs.get("strides", (1, 1))),
        "pads": list(attrs.get("padding", (0, 0, 0, 0))),
        "ceil_mode": int(attrs.get("ceil_mode", False)),
    }
    if kind == "avg":
        onnx_attrs["count_include_pad"] = int(attrs.get("count_include_pad", False))
    if "dilation" in attrs:
        onnx_attrs["dilations"] = list(attrs["dilation"])
    op_type = "MaxPool" if kind == "max" else "AveragePool"
    want = onnx_node_reference(op_type, [IMG], opset=19, **onnx_attrs)
    return OpCase(name, f"nn.{kind}_pool2d", [IMG], attrs, expected=want)


def _resize_case(name: str, size: tuple[int, int], scales: Any = None, **attrs: Any) -> OpCase:
    method = attrs.get("method", "linear")
    onnx_attrs: dict[str, Any] = {
        "mode": "nearest" if method == "nearest_neighbor" else method,
        "coordinate_transformation_mode": attrs.get("coordinate_transformation_mode", "half_pixel"),
    }
    if "rounding_method" in attrs:
        onnx_attrs["nearest_mode"] = attrs["rounding_method"]
    if scales is None:
        sizes = np.array([1, 4, *size], "int64")
        want = onnx_node_reference("Resize", [IMG, None, None, sizes], **onnx_attrs)
    else:
        factors = np.array([1, 1, *scales], "float32")
        want = onnx_node_reference("Resize", [IMG, None, factors], **onnx_attrs)
        attrs = {**attrs, "scales": scales}
    return OpCase(name, "image.resize2d", [IMG], {"size": size, **attrs}, expected=want)


BN = [_f(4, lo=0.5, hi=1.5), _f(4), _f(4), _f(4, lo=0.5, hi=1.5)]
SEQ = _f(2, 3, 8)
GAMMA, BETA = _f(8), _f(8)
GAMMA2, BETA2 = _f(3, 8), _f(3, 8)
MA, MB = _f(5, 7), _f(7, 3)
BA, BB = _f(2, 5, 7), _f(1, 3, 7)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)  # type: ignore[no-any-return]


CASES: list[OpCase] = [
    _conv_case("conv2d", (5, 4, 3, 3), 1, (1, 1, 1, 1), 1, 1),
    _conv_case("conv2d_strided_asymmetric_pad", (3, 4, 3, 2), 2, (0, 1, 2, 0), 1, 1),
    _conv_case("conv2d_dilated", (2, 4, 3, 3), 1, (2, 2, 2, 2), 2, 1),
    _conv_case("conv2d_grouped", (6, 2, 3, 3), 1, (1, 1, 1, 1), 1, 2),
    _conv_case("conv2d_depthwise", (8, 1, 3, 3), 2, (1, 1, 1, 1), 1, 4),
    _convt_case("conv2d_transpose", (4, 3, 3, 3), 1, (1, 1, 1, 1), 0, 1, 1),
    _convt_case("conv2d_transpose_strided", (4, 2, 3, 2), 2, (1, 0, 0, 1), 1, 1, 1),
    _convt_case("conv2d_transpose_grouped_dilated", (4, 3, 2, 2), 2, (0, 0, 0, 0), 0, 2, 2),
    OpCase("dense", "nn.dense", [MA, MB.T.copy()], expected=lambda a, b: a @ b.T),
    OpCase("matmul", "nn.matmul", [MA, MB], expected=lambda a, b: a @ b),
    OpCase(
        "matmul_transposed",
        "nn.matmul",
        [MA.T.copy(), MB.T.copy()],
        {"transpose_a": True, "transpose_b": True},
        expected=lambda a, b: a.T @ b.T,
    ),
    OpCase(
        "batch_matmul_broadcast_batch",
        "nn.batch_matmul",
        [BA, BB],
        expected=lambda a, b: a @ b.transpose(0, 2, 1),
    ),
    OpCase(
        "batch_matmul_nn",
        "nn.batch_matmul",
        [BA, _f(2, 7, 4)],
        {"transpose_b": False},
        expected=lambda a, b: a @ b,
    ),
    OpCase("bias_add", "nn.bias_add", [IMG, _f(4)], expected=lambda x, b: x + b[:, None, None]),
    OpCase(
        "bias_add_last_axis",
        "nn.bias_add",
        [MA, _f(7)],
        {"axis": -1},
        expected=lambda x, b: x + b,
    ),
    _pool_case("max_pool2d", "max", pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1)),
    _pool_case("max_pool2d_ceil", "max", pool_size=(2, 2), strides=(2, 2), ceil_mode=True),
    _pool_case(
        "max_pool2d_dilated", "max", pool_size=(2, 2), dilation=(2, 2), padding=(1, 0, 0, 1)
    ),
    _pool_case("avg_pool2d", "avg", pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1)),
    _pool_case(
        "avg_pool2d_count_pad",
        "avg",
        pool_size=(3, 2),
        strides=(2, 1),
        padding=(1, 1, 1, 0),
        count_include_pad=True,
    ),
    _pool_case("avg_pool2d_ceil", "avg", pool_size=(3, 3), strides=(2, 2), ceil_mode=True),
    OpCase(
        "global_avg_pool2d",
        "nn.global_avg_pool2d",
        [IMG2],
        expected=lambda x: x.mean((2, 3), keepdims=True),
    ),
    OpCase(
        "global_max_pool2d",
        "nn.global_max_pool2d",
        [IMG2],
        expected=lambda x: x.max((2, 3), keepdims=True),
    ),
    OpCase(
        "batch_norm",
        "nn.batch_norm",
        [IMG, *BN],
        {"epsilon": 1e-3},
        expected=onnx_node_reference("BatchNormalization", [IMG, *BN], epsilon=1e-3),
    ),
    OpCase(
        "layer_norm",
        "nn.layer_norm",
        [SEQ, GAMMA, BETA],
        {"axis": -1, "epsilon": 1e-5},
        expected=onnx_node_reference("LayerNormalization", [SEQ, GAMMA, BETA], axis=-1),
    ),
    OpCase(
        "layer_norm_two_axes",
        "nn.layer_norm",
        [SEQ, GAMMA2, BETA2],
        {"axis": (1, 2), "epsilon": 1e-5},
        expected=onnx_node_reference("LayerNormalization", [SEQ, GAMMA2, BETA2], axis=1),
    ),
    OpCase("softmax", "nn.softmax", [SEQ], {"axis": 1}, expected=lambda x: _softmax(x, 1)),
    OpCase(
        "log_softmax",
        "nn.log_softmax",
        [SEQ],
        {"axis": -1},
        expected=lambda x: np.log(_softmax(x, -1)),
    ),
    OpCase(
        "lrn",
        "nn.lrn",
        [IMG],
        {"size": 3, "alpha": 0.1, "beta": 0.75, "bias": 1.5},
        expected=onnx_node_reference("LRN", [IMG], size=3, alpha=0.1, beta=0.75, bias=1.5),
    ),
    _resize_case("resize_linear_half_pixel", (11, 4)),
    _resize_case(
        "resize_linear_align_corners", (9, 9), coordinate_transformation_mode="align_corners"
    ),
    _resize_case("resize_linear_scales", (4, 3), scales=(0.6, 0.6)),
    _resize_case(
        "resize_nearest_asymmetric_floor",
        (14, 12),
        method="nearest_neighbor",
        coordinate_transformation_mode="asymmetric",
        rounding_method="floor",
    ),
    _resize_case(
        "resize_nearest_half_pixel_prefer_floor",
        (10, 5),
        method="nearest_neighbor",
        rounding_method="round_prefer_floor",
    ),
    _resize_case(
        "resize_linear_pytorch_half_pixel",
        (3, 1),
        coordinate_transformation_mode="pytorch_half_pixel",
    ),
    _resize_case(
        "resize_linear_half_pixel_symmetric",
        (10, 8),
        scales=(1.5, 1.4),
        coordinate_transformation_mode="half_pixel_symmetric",
    ),
]
IDS = [c.name for c in CASES]


def _check(got: Any, case: OpCase) -> None:
    want = np.asarray(case.want())
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, BaseException]]:
    return build_cases(CASES)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_interpreter_matches_reference(case: OpCase) -> None:
    _check(interpret_case(case), case)


@pytest.mark.needs_cc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_compiled_kernel_matches_reference(case: OpCase, built: tuple[Any, Any]) -> None:
    mod, errors = built
    if case.name in errors:
        raise errors[case.name]
    _check(run_compiled(mod, case), case)
