"""Structural equality of kernels: two PrimFuncs built alike are equal (their ``buffer_map`` is
keyed by parameters, paired in order), and different bodies or buffers are not.
"""

from __future__ import annotations

from pytvm import te, tir


def _kernel(offset: float, n: int = 8) -> tir.PrimFunc:
    a = te.placeholder((n,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + offset, name="B")
    return te.create_prim_func([a, b]).with_attr("global_symbol", "k")


def test_prim_funcs_built_alike_are_structurally_equal() -> None:
    assert tir.structural_equal(_kernel(1.0), _kernel(1.0))
    assert tir.structural_hash(_kernel(1.0)) == tir.structural_hash(_kernel(1.0))


def test_prim_funcs_with_other_bodies_or_buffers_differ() -> None:
    assert not tir.structural_equal(_kernel(1.0), _kernel(2.0))
    assert not tir.structural_equal(_kernel(1.0), _kernel(1.0, n=9))
