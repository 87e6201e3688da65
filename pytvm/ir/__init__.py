"""TVM's ``tvm.ir`` names: the module of kernels (``IRModule``), structural equality and hashing
of IR, ``PrimExpr`` and ``Range``, and ``transform`` (``PassContext``, ``Pass``).

The IR these names cover is the loop IR of :mod:`pytvm.tir` (its ``IRModule``, functions and
expressions); the dataflow graph IR has its own module and comparison in :mod:`pytvm.graph`.

Examples
--------
>>> from pytvm import ir, te
>>> a = te.placeholder((4,), name="A")
>>> b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
>>> func = te.create_prim_func([a, b]).with_attr("global_symbol", "myadd")
>>> mod = ir.IRModule.from_expr(func)
>>> list(mod), ir.structural_equal(mod, ir.IRModule.from_expr(func))
(['myadd'], True)
"""

from __future__ import annotations

from ..tir.expr import PrimExpr, Range
from ..tir.function import IRModule
from ..tir.structural import assert_structural_equal, structural_equal, structural_hash
from . import transform

__all__ = [
    "IRModule",
    "PrimExpr",
    "Range",
    "assert_structural_equal",
    "structural_equal",
    "structural_hash",
    "transform",
]
