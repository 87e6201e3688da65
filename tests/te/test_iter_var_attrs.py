"""``Stage.iter_var_attrs``: each marked axis's kind and pragmas, as TVM reports them."""

from __future__ import annotations

from pytvm import te
from pytvm.tir.expr import IterVar


def test_kinds_and_pragmas_are_reported() -> None:
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=2)
    s[B].unroll(xi)
    s[B].pragma(xo, "pragma1")
    s[B].pragma(B.op.axis[1], "vectorize")
    attrs = s[B].iter_var_attrs
    assert attrs[xi].iter_type == IterVar.Unrolled
    assert attrs[B.op.axis[1]].iter_type == IterVar.Vectorized
    assert [k.value for k in attrs[xo].pragma_keys] == ["pragma1"]
