"""Integer arithmetic on the loop IR: bounds, simplification, proofs (TVM's ``tvm.arith``)."""

from __future__ import annotations

from .analyzer import Analyzer
from .int_bound import NEG_INF, POS_INF, ConstIntBound
from .int_set import IntSet
from .linear import expr_key

__all__ = ["NEG_INF", "POS_INF", "Analyzer", "ConstIntBound", "IntSet", "expr_key"]
