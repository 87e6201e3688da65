"""Pooling and resize against ONNX Runtime running the matching single ONNX operator."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.te_eval import evaluate

RNG = np.random.default_rng(3)
Arr = np.ndarray[Any, Any]


def run_onnx(
    op: str, x: Arr, out_rank: int = 4, extra: list[Any] | None = None, **attrs: Any
) -> Arr:
    inputs = ["x", *(e[0] for e in (extra or []))]
    node = helper.make_node(op, inputs, ["y"], **attrs)
    inits = [helper.make_tensor(n, t, v.shape, v.flatten().tolist()) for n, t, v in (extra or [])]
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * out_rank)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]  # type: ignore[no-any-return]


_POOLS = [
    ("max", (3, 3), (2, 2), (0, 0, 0, 0), False, True, 1),
    ("max", (3, 3), (2, 2), (1, 1, 1, 1), True, True, 1),
    ("max", (2, 3), (1, 2), (0, 1, 1, 0), False, True, 2),
    ("avg", (3, 3), (2, 2), (1, 1, 1, 1), False, True, 1),
    ("avg", (3, 3), (2, 2), (1, 1, 1, 1), False, False, 1),
    ("avg", (3, 2), (2, 2), (1, 0, 0, 1), True, True, 1),
    ("avg", (3, 2), (2, 2), (1, 0, 0, 1), True, False, 1),
]


@pytest.mark.parametrize(("kind", "kernel", "stride", "pad", "ceil", "include", "dil"), _POOLS)
def test_pool2d_matches_onnxruntime(
    kind: str,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
    ceil: bool,
    include: bool,
    dil: int,
) -> None:
    x = RNG.standard_normal((1, 2, 8, 7)).astype("float32")
    X = te.placeholder(x.shape, name="X")
    y = topi.nn.pool2d(X, kernel, stride, (dil, dil), pad, kind, ceil, "NCHW", include)
    (got,) = evaluate(y, {X: x})
    onnx_pads = [pad[0], pad[1], pad[2], pad[3]]
    attrs: dict[str, Any] = {"kernel_shape": kernel, "strides": stride, "pads": onnx_pads}
    attrs["ceil_mode"] = int(ceil)
    if kind == "avg":
        attrs["count_include_pad"] = int(include)
    else:
        attrs["dilations"] = [dil, dil]
    ref = run_onnx("MaxPool" if kind == "max" else "AveragePool", x, **attrs)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_global_and_adaptive_pool(kind: str) -> None:
    x = RNG.standard_normal((2, 3, 5, 7)).astype("float32")
    X = te.placeholder(x.shape, name="X")
    (g,) = evaluate(topi.nn.global_pool(X, kind), {X: x})
    red = np.max if kind == "max" else np.mean
    np.testing.assert_allclose(g, red(x, axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)
    (a,) = evaluate(topi.nn.adaptive_pool(X, (2, 3), kind), {X: x})
    for i in range(2):
        for j in range(3):
            hs, he = i * 5 // 2, -(-(i + 1) * 5 // 2)
            ws, we = j * 7 // 3, -(-(j + 1) * 7 // 3)
            want = red(x[:, :, hs:he, ws:we], axis=(2, 3))
            np.testing.assert_allclose(a[:, :, i, j], want, rtol=1e-5, atol=1e-6)


def test_pool2d_rejects_bad_attributes() -> None:
    X = te.placeholder((1, 1, 4, 4), name="X")
    with pytest.raises(TVMValueError, match=r"pool2d: bad pool_type 'sum'"):
        topi.nn.pool2d(X, (2, 2), (1, 1), (1, 1), (0, 0, 0, 0), "sum")
    with pytest.raises(TVMValueError, match=r"pool2d: bad stride \(0, 1\)"):
        topi.nn.pool2d(X, (2, 2), (0, 1), (1, 1), (0, 0, 0, 0), "max")


_RESIZE = [
    ("nearest", "asymmetric", "floor", (7, 5)),
    ("nearest", "half_pixel", "round_prefer_floor", (9, 3)),
    ("nearest", "align_corners", "round_prefer_ceil", (8, 10)),
    ("nearest", "tf_half_pixel_for_nn", "ceil", (3, 7)),
    ("linear", "half_pixel", "", (9, 3)),
    ("linear", "align_corners", "", (7, 11)),
    ("linear", "asymmetric", "", (8, 2)),
    ("linear", "pytorch_half_pixel", "", (1, 9)),
]


@pytest.mark.parametrize(("method", "mode", "rounding", "size"), _RESIZE)
def test_resize2d_matches_onnxruntime(
    method: str, mode: str, rounding: str, size: tuple[int, int]
) -> None:
    x = RNG.standard_normal((1, 2, 4, 5)).astype("float32")
    X = te.placeholder(x.shape, name="X")
    y = topi.image.resize2d(
        X, None, size, method=method, coordinate_transformation_mode=mode,
        rounding_method=rounding,
    )  # fmt: skip
    (got,) = evaluate(y, {X: x})
    sizes = np.array([1, 2, *size], "int64")
    attrs: dict[str, Any] = {"mode": method, "coordinate_transformation_mode": mode}
    if method == "nearest":
        attrs["nearest_mode"] = rounding
    empty = np.zeros((0,), "float32")
    extra = [("roi", TensorProto.FLOAT, empty), ("scales", TensorProto.FLOAT, empty)]
    extra.append(("sizes", TensorProto.INT64, sizes))
    ref = run_onnx("Resize", x, extra=extra, **attrs)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_resize2d_rejects_unknown_and_unsupported_modes() -> None:
    X = te.placeholder((1, 1, 4, 4), name="X")
    with pytest.raises(TVMValueError, match="resize2d: bad coordinate_transformation_mode 'x'"):
        topi.image.resize2d(X, None, (8, 8), coordinate_transformation_mode="x")
    with pytest.raises(TVMValueError, match="resize2d: bad method 'quadratic'"):
        topi.image.resize2d(X, None, (8, 8), method="quadratic")
