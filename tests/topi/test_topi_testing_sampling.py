"""topi.testing's references that sample at computed points: resize, crop_and_resize, ROI
align and pool, deformable convolution, correlation, affine_grid and grid_sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm.ffi.errors import TVMValueError
from pytvm.topi import testing as tt

RNG = np.random.default_rng(11)
Arr = np.ndarray[Any, Any]


def _rand(*shape: int) -> Arr:
    return RNG.uniform(-1, 1, shape).astype("float32")


def test_resize_modes() -> None:
    x = np.arange(3, dtype="float32").reshape(1, 1, 3)
    near = tt.resize1d_python(x, (2.0,), "NCW", "nearest_neighbor", "asymmetric")
    np.testing.assert_array_equal(near[0, 0], [0, 0, 1, 1, 2, 2])
    lin = tt.resize1d_python(x, (5 / 3,), "NCW", "linear", "align_corners")
    np.testing.assert_allclose(lin[0, 0], [0, 0.5, 1, 1.5, 2], rtol=1e-6)
    flat = np.full((1, 2, 3, 4), 7.0, dtype="float32")
    cubic = tt.resize2d_python(flat, (1.5, 2.0), "NCHW", "cubic", "half_pixel")
    assert cubic.shape == (1, 2, 4, 8)
    np.testing.assert_allclose(cubic, 7.0, rtol=1e-6)
    y = _rand(1, 3, 4, 5, 2)
    got = tt.resize3d_python(y, (2.0, 1.0, 0.5), "NDHWC", "linear", "half_pixel")
    want = tt.resize3d_python(
        y.transpose(0, 4, 1, 2, 3), (2.0, 1.0, 0.5), "NCDHW", "linear", "half_pixel"
    )
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 4, 1), rtol=1e-6)
    with pytest.raises(TVMValueError, match="coordinate_transformation_mode"):
        tt.resize1d_python(x, (2.0,), "NCW", "linear", "tf_half_pixel")


def test_crop_and_resize_of_the_whole_image_is_an_align_corners_resize() -> None:
    img = _rand(1, 2, 5, 6)
    box = np.array([[0.0, 0.0, 1.0, 1.0]], dtype="float32")
    got = tt.crop_and_resize_python(img, box, np.array([0]), (9, 11), "NCHW")
    want = tt.resize2d_python(img, (9 / 5, 11 / 6), "NCHW", "linear", "align_corners")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    outside = np.array([[1.5, 0.0, 2.0, 1.0]], dtype="float32")
    ext = tt.crop_and_resize_python(img, outside, np.array([0]), (2, 2), "NCHW", "bilinear", 3.0)
    np.testing.assert_array_equal(ext, 3.0)


def test_roi_align_and_pool() -> None:
    const = np.full((1, 2, 6, 6), 4.0, dtype="float32")
    rois = np.array([[0, 0.5, 0.5, 4.5, 3.5]], dtype="float32")
    np.testing.assert_allclose(tt.roi_align_nchw_python(const, rois, 2, 1.0, 2), 4.0, rtol=1e-6)
    x = np.arange(36, dtype="float32").reshape(1, 1, 6, 6)
    pooled = tt.roi_pool_nchw_python(x, np.array([[0, 0, 0, 5, 5]], dtype="float32"), 2, 1.0)
    np.testing.assert_array_equal(pooled[0, 0], [[14, 17], [32, 35]])
    mx = tt.roi_align_nhwc_python(x.transpose(0, 2, 3, 1), rois, 1, 1.0, 1, "max")
    assert mx.shape == (1, 1, 1, 1)


def test_deformable_conv_with_zero_offsets_is_a_convolution() -> None:
    x, w = _rand(2, 4, 6, 7), _rand(3, 4, 3, 3)
    off = np.zeros((2, 2 * 2 * 9, 3, 4), dtype="float32")
    got = tt.deformable_conv2d_nchw_python(x, off, w, 2, 1, 1, 2, 1)
    np.testing.assert_allclose(got, tt.conv2d_nchw_python(x, w, 2, 1), rtol=1e-5, atol=1e-5)
    shifted = np.zeros((2, 18, 3, 4), dtype="float32")
    shifted[:, 1::2] = 1.0  # every tap reads one column to the right
    moved = tt.deformable_conv2d_nchw_python(x, shifted, w, 2, 1, 1, 1, 1)
    # Column j - 1 + 1 of the padded input is column j of x (zero past its right edge).
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 2)))
    np.testing.assert_allclose(moved, tt.conv2d_nchw_python(padded, w, 2, 0), rtol=1e-5, atol=1e-5)


def test_correlation_at_zero_displacement_is_the_mean_product() -> None:
    a, b = _rand(1, 3, 5, 5), _rand(1, 3, 5, 5)
    got = tt.correlation_nchw_python(a, b, 1, 0, 1, 1, 0, True)
    np.testing.assert_allclose(got[0, 0], (a * b).mean(axis=1)[0], rtol=1e-5)
    diff = tt.correlation_nchw_python(a, b, 1, 2, 1, 1, 2, False)
    assert diff.shape == (1, 25, 5, 5) and np.all(diff >= 0)


def test_grid_sample_on_the_identity_grid_returns_the_input() -> None:
    theta = np.array([[[1.0, 0, 0], [0, 1.0, 0]]], dtype="float32")
    grid = tt.affine_grid_python(theta, (4, 5))
    assert grid.shape == (1, 2, 4, 5)
    np.testing.assert_allclose(grid[0, 0, 0], np.linspace(-1, 1, 5), rtol=1e-6)
    x = _rand(1, 2, 4, 5)
    for method in ("nearest", "bilinear", "bicubic"):
        got = tt.grid_sample_python(x, grid, method, "NCHW", "zeros", True)
        np.testing.assert_allclose(got, x, rtol=1e-5, atol=1e-6)
    far = tt.grid_sample_python(x, grid + 5.0, "bilinear", "NCHW", "border", True)
    np.testing.assert_allclose(far, np.broadcast_to(x[:, :, -1:, -1:], x.shape), rtol=1e-6)
    with pytest.raises(TVMValueError, match="bicubic"):
        tt.grid_sample_python(_rand(1, 1, 2, 2, 2), _rand(1, 3, 2, 2, 2), "bicubic", "NCDHW")
