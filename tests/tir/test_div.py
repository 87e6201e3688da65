"""``tir.div`` / ``te.div`` (TVM's names): C's division, true for floats and truncating toward
zero for integers, compiled and compared with numpy.
"""

from __future__ import annotations

import numpy as np

import pytvm
from pytvm import te, tir


def test_div_is_true_division_for_floats_and_truncates_integers() -> None:
    n = 8
    a = te.placeholder((n,), name="a", dtype="float32")
    i = te.placeholder((n,), name="i", dtype="int32")
    fa = te.compute((n,), lambda k: te.div(a[k], 4.0), name="fa")
    fi = te.compute((n,), lambda k: tir.div(i[k], 3), name="fi")
    s = te.create_schedule([fa.op, fi.op])
    f = pytvm.build(s, [a, i, fa, fi], target="llvm")
    dev = pytvm.cpu()
    a_np = np.linspace(-3.0, 3.0, n).astype("float32")
    i_np = np.arange(-4, 4, dtype="int32")
    out = [pytvm.nd.empty((n,), "float32", dev), pytvm.nd.empty((n,), "int32", dev)]
    f(pytvm.nd.array(a_np, dev), pytvm.nd.array(i_np, dev), *out)
    np.testing.assert_allclose(out[0].numpy(), a_np / 4.0, rtol=1e-6)
    np.testing.assert_array_equal(out[1].numpy(), np.trunc(i_np / 3).astype("int32"))
