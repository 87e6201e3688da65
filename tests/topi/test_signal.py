"""topi.dft against numpy's FFT: forward and inverse, several ranks, float16 to float64."""

from __future__ import annotations

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 4, 5)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_dft_matches_numpy_fft(inverse: bool, shape: tuple[int, ...], dtype: str) -> None:
    re_t = te.placeholder(shape, dtype, "re")
    im_t = te.placeholder(shape, dtype, "im")
    outs = topi.dft(re_t, im_t, inverse)
    f = tvm.build(te.create_schedule([t.op for t in outs]), [re_t, im_t, *outs], "llvm")
    re = np.random.normal(size=shape).astype(dtype)
    im = np.random.normal(size=shape).astype(dtype)
    got = [tvm.nd.array(np.zeros(shape, dtype)) for _ in range(2)]
    f(tvm.nd.array(re), tvm.nd.array(im), *got)
    want = (np.fft.ifft if inverse else np.fft.fft)(re.astype("float64") + 1j * im)
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got[0].numpy(), want.real, rtol=tol, atol=tol)
    np.testing.assert_allclose(got[1].numpy(), want.imag, rtol=tol, atol=tol)
