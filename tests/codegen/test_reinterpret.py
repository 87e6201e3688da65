"""``tir.op.reinterpret``: the bits of a value read as another type of the same width, in both
code generators (scalars and vectors) and the expression evaluator; widths that differ are
refused when the expression is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, tir
from pytvm.ffi.errors import TVMTypeError
from pytvm.testing.te_eval import evaluate


def _pow2_kernel(vector: bool) -> tuple[Any, list[Any]]:
    a = te.placeholder((64,), "int32", name="a")
    b = te.compute(a.shape, lambda i: tir.op.reinterpret("float32", (a[i] + 127) * (1 << 23)))
    s = te.create_schedule(b.op)
    if vector:
        _, inner = s[b].split(b.op.axis[0], factor=16)
        s[b].vectorize(inner)
    return s, [a, b]


@pytest.mark.parametrize("target", ["llvm", "llvm -backend=c"])
@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
def test_reinterpret_builds_exponent_fields(target: str, vector: bool) -> None:
    s, args = _pow2_kernel(vector)
    f = pytvm.build(s, args, target=target, name="pow2")
    x = np.arange(-60, 4, dtype="int32")
    out = pytvm.runtime.empty((64,), "float32")
    f["pow2"](pytvm.runtime.ndarray.array(x), out)
    np.testing.assert_array_equal(out.numpy(), np.ldexp(np.float32(1), x))
    assert np.array_equal(evaluate(args[1], {args[0]: x})[0], out.numpy())


def test_reinterpret_keeps_lanes_and_refuses_other_widths() -> None:
    v = tir.expr.Broadcast(tir.const(1.0, "float32"), 8)
    assert tir.op.reinterpret("int32", v).dtype == "int32x8"
    with pytest.raises(TVMTypeError, match="differ in width"):
        tir.op.reinterpret("float64", tir.const(1, "int32"))
