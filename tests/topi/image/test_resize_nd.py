"""resize1d/2d/3d in several layouts and methods, crop_and_resize, and nn.upsampling against
numpy interpolation written out here.
"""

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


def _coords(size: int, out: int, mode: str) -> np.ndarray:
    x = np.arange(out, dtype=np.float64)
    if mode == "align_corners":
        return x * (size - 1) / (out - 1)
    if mode == "asymmetric":
        return x * size / out
    return (x + 0.5) * size / out - 0.5  # half_pixel


def _cubic(t: np.ndarray, a: float = -0.5) -> list[np.ndarray]:
    return [
        a * (t**3 - 2 * t**2 + t),
        (a + 2) * t**3 - (3 + a) * t**2 + 1,
        -(a + 2) * t**3 + (3 + 2 * a) * t**2 - a * t,
        -a * t**3 + a * t**2,
    ]


def _resize_axis(x: np.ndarray, axis: int, out: int, mode: str, method: str) -> np.ndarray:
    """Separable 1-d interpolation of ``x`` along ``axis`` (reads clamped to the edges)."""
    size = x.shape[axis]
    c = _coords(size, out, mode)

    def take(idx: np.ndarray) -> np.ndarray:
        picked: np.ndarray = np.take(x, np.clip(idx, 0, size - 1), axis=axis)
        return picked

    shape = [1] * x.ndim
    shape[axis] = out
    if method == "nearest":
        rounded = np.round(c) if mode == "align_corners" else np.floor(c + 1e-5)
        return take(rounded.astype(int))
    base = np.floor(c).astype(int)
    t = (c - base).reshape(shape)
    if method == "linear":
        blend: np.ndarray = take(base) * (1 - t) + take(base + 1) * t
        return blend
    w = _cubic(t)
    out_v: np.ndarray = take(base - 1) * w[0]
    for k in range(1, 4):
        out_v = out_v + take(base - 1 + k) * w[k]
    return out_v


@pytest.mark.parametrize(
    ("layout", "shape", "size", "mode", "method"),
    [
        ("NCW", (1, 2, 7), (12,), "half_pixel", "linear"),
        ("NWC", (1, 7, 2), (5,), "align_corners", "cubic"),
        ("NCHW", (1, 2, 5, 6), (9, 4), "asymmetric", "nearest_neighbor"),
        ("NHWC", (1, 5, 6, 2), (8, 11), "half_pixel", "cubic"),
        ("NCHW4c", (1, 1, 5, 6, 4), (10, 12), "asymmetric", "nearest_neighbor"),
        ("NDHWC", (1, 3, 4, 5, 2), (6, 3, 7), "half_pixel", "linear"),
    ],
)
def test_resize_matches_separable_numpy(
    layout: str, shape: tuple[int, ...], size: tuple[int, ...], mode: str, method: str
) -> None:
    x = np.random.uniform(size=shape).astype("float32")
    letters = [ch for ch in layout if ch.isalpha()]
    axes = [letters.index(ch) for ch in "DHW" if ch in letters]
    kind = "nearest" if method == "nearest_neighbor" else method
    want = x.astype(np.float64)
    for a, o in zip(axes, size, strict=True):
        want = _resize_axis(want, a, o, mode, kind)
    fn = {1: topi.image.resize1d, 2: topi.image.resize2d, 3: topi.image.resize3d}[len(axes)]
    X = te.placeholder(shape, name="X")
    got = _run(fn(X, None, size, layout, method, mode), [X], [x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_crop_and_resize_extrapolates_outside_the_image() -> None:
    x = np.random.uniform(size=(2, 6, 8, 3)).astype("float32")
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [0.5, -0.5, 1.2, 0.5]], "float32")
    index = np.array([1, 0], "int32")
    X = te.placeholder(x.shape, name="X")
    B = te.placeholder(boxes.shape, name="B")
    I = te.placeholder(index.shape, "int32", "I")  # noqa: E741
    got = _run(
        topi.image.crop_and_resize(X, B, I, (4, 5), "NHWC", "bilinear", 9.0),
        [X, B, I],
        [x, boxes, index],
    )
    assert got.shape == (2, 4, 5, 3)
    # the first box is the whole of image 1: its corners are the image's corners
    np.testing.assert_allclose(got[0, [0, -1]][:, [0, -1]], x[1, [0, -1]][:, [0, -1]], rtol=1e-6)
    # the second box starts left of the image: its first column is extrapolated
    np.testing.assert_array_equal(got[1, :, 0], np.full((4, 3), 9.0, "float32"))


def test_upsampling_rounds_the_scaled_size() -> None:
    x = np.random.uniform(size=(1, 2, 22, 4)).astype("float32")
    X = te.placeholder(x.shape, name="X")
    out_t = topi.nn.upsampling(X, 1.954545497894287, 2.0)
    assert [str(d) for d in out_t.shape] == ["1", "2", "43", "8"]
    want = _resize_axis(
        _resize_axis(x.astype(np.float64), 2, 43, "asymmetric", "nearest"),
        3,
        8,
        "asymmetric",
        "nearest",
    )
    np.testing.assert_array_equal(_run(out_t, [X], [x]), want.astype("float32"))
