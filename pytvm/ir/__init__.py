"""TVM's ``tvm.ir`` names: the module of kernels (``IRModule``), structural equality and hashing
of IR, ``PrimExpr`` and ``Range``, ``SourceName`` and ``Span``, and ``transform`` (the pass
infrastructure of both IRs: ``PassContext``, ``Pass``, ``Sequential``, ``PassInstrument``).

``structural_equal``, ``assert_structural_equal`` and ``structural_hash`` take nodes of either
IR and compare them with that IR's own comparison. ``SourceName`` and ``Span`` name places in a
source. ``module`` and ``transform`` are the base both IRs build on (:mod:`pytvm.tir` and
:mod:`pytvm.graph` import them); the other names are the loop IR's (:mod:`pytvm.tir`), loaded on
first use so that the loop IR can import this package's base while it loads. The dataflow graph
IR has its own module and comparison in :mod:`pytvm.graph`.

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

import importlib
from typing import TYPE_CHECKING, Any

from . import module, transform
from .module import IRModuleBase
from .span import SourceName, Span
from .structural import assert_structural_equal, structural_equal, structural_hash

if TYPE_CHECKING:
    from ..tir.expr import PrimExpr, Range
    from ..tir.function import IRModule
    from ..tir.intrinsic import Op
    from ..tir.serialization import load_json, save_json

__all__ = [
    "IRModule",
    "IRModuleBase",
    "Op",
    "PrimExpr",
    "Range",
    "SourceName",
    "Span",
    "assert_structural_equal",
    "load_json",
    "module",
    "save_json",
    "structural_equal",
    "structural_hash",
    "transform",
]

# The loop IR's names, by the module that defines them.
_LOOP_IR_NAMES = {
    "PrimExpr": "pytvm.tir.expr",
    "Range": "pytvm.tir.expr",
    "IRModule": "pytvm.tir.function",
    "Op": "pytvm.tir.intrinsic",
    "load_json": "pytvm.tir.serialization",
    "save_json": "pytvm.tir.serialization",
}


def __getattr__(name: str) -> Any:
    where = _LOOP_IR_NAMES.get(name)
    if where is None:
        raise AttributeError(f"module 'pytvm.ir' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
