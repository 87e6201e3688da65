"""``topi.image.grid_sample`` and ``affine_grid`` compile and match TVM's numpy references
(``topi.testing.grid_sample_python``, PyTorch's convention) in 2-d and 3-d, for every method,
padding mode and ``align_corners``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.topi.testing import affine_grid_python, grid_sample_python

pytestmark = pytest.mark.needs_cc

# Every method with every padding mode in 2-d (align_corners alternating), two 3-d cases.
_CASES = [
    *[
        (2, method, padding, k % 2)
        for k, (method, padding) in enumerate(
            itertools.product(("nearest", "bilinear", "bicubic"), ("zeros", "border", "reflection"))
        )
    ],
    (3, "nearest", "reflection", 0),
    (3, "bilinear", "border", 1),
]


def _run(target: str, tensors: list[te.Tensor], arrays: list[np.ndarray]) -> np.ndarray:
    out = tensors[-1]
    f = pytvm.build(te.create_schedule(out.op), tensors, target)
    result = pytvm.nd.empty(tuple(topi.utils.get_const_tuple(out.shape)), out.dtype)
    f(*[pytvm.nd.array(a) for a in arrays], result)
    return result.numpy()


@pytest.mark.parametrize(("nsp", "method", "padding", "align"), _CASES)
def test_grid_sample_matches_the_reference(nsp: int, method: str, padding: str, align: int) -> None:
    rng = np.random.default_rng(nsp)
    shape = (2, 3, 4, 5) if nsp == 2 else (1, 2, 3, 4, 5)
    gshape = (shape[0], nsp, 3, 4, *((2,) if nsp == 3 else ()))
    layout = "NCHW" if nsp == 2 else "NCDHW"
    x = rng.standard_normal(shape).astype("float32")
    g = rng.uniform(-1.7, 1.7, gshape).astype("float32")
    xt, gt = te.placeholder(shape, name="x"), te.placeholder(gshape, name="g")
    y = topi.image.grid_sample(xt, gt, method, layout, padding, bool(align))
    got = _run("llvm", [xt, gt, y], [x, g])
    want = grid_sample_python(x, g, method, layout, padding, bool(align))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_affine_grid_compiles_to_c_and_matches_the_reference() -> None:
    theta = np.random.default_rng(0).standard_normal((2, 2, 3)).astype("float32")
    t = te.placeholder((2, 2, 3), name="t")
    y = topi.image.affine_grid(t, (3, 4))
    got = _run("c", [t, y], [theta])
    np.testing.assert_allclose(got, affine_grid_python(theta, (3, 4)), rtol=1e-5, atol=1e-6)


def test_grid_sample_refuses_bad_attributes() -> None:
    x, g = te.placeholder((1, 1, 2, 2), name="x"), te.placeholder((1, 2, 2, 2), name="g")
    with pytest.raises(TVMValueError, match="padding_mode"):
        topi.image.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(TVMValueError, match="layout"):
        topi.image.grid_sample(x, g, layout="NHWC")
