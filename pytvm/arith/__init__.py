"""TVM's ``tvm.arith``: integer arithmetic on the loop IR (``Analyzer``: simplify, bounds,
proofs), which pytvm keeps beside the loop IR in :mod:`pytvm.tir.arith`.

Examples
--------
>>> from pytvm import arith, tir
>>> x = tir.Var("x", "int32")
>>> str(arith.Analyzer().simplify(x + 1 - 1))
'x'
"""

from __future__ import annotations

from ..tir.arith import NEG_INF, POS_INF, Analyzer, ConstIntBound, IntSet

__all__ = ["NEG_INF", "POS_INF", "Analyzer", "ConstIntBound", "IntSet"]
