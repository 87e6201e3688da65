"""TVM's ``Stage.iter_var_attrs``: what a schedule says about each loop axis.

A loop's kind (vectorized, unrolled, parallel), the thread it is bound to and its pragmas, read
back from the stage as TVM's ``IterVarAttr`` records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...ir.container import Map
from ...tir.expr import IterVar, IterVarType, PrimExpr, StringImm, convert

__all__ = ["IterVarAttr", "iter_var_attrs"]

#: The loop kinds ``Stage.vectorize``/``unroll``/``parallel`` record, as TVM's iteration types.
_KIND_TYPES = {
    "vectorize": IterVarType.VECTORIZED,
    "unroll": IterVarType.UNROLLED,
    "parallel": IterVarType.PARALLELIZED,
}


@dataclass(frozen=True, slots=True)
class IterVarAttr:
    """How one axis of a stage is run: its kind, bound thread and pragmas."""

    iter_type: IterVarType
    bind_thread: IterVar | None = None
    pragma_keys: tuple[StringImm, ...] = ()
    pragma_values: tuple[PrimExpr, ...] = ()


def iter_var_attrs(
    kinds: Mapping[IterVar, str],
    threads: Mapping[IterVar, IterVar],
    pragmas: Mapping[IterVar, Mapping[str, Any]],
) -> Map[IterVar, IterVarAttr]:
    """The attribute record of every axis the schedule says something about."""
    out: Map[IterVar, IterVarAttr] = Map()
    for iv in [*kinds, *threads, *pragmas]:
        if iv in out:
            continue
        marks = pragmas.get(iv, {})
        keys = tuple(StringImm(k.removeprefix("pragma_")) for k in marks)
        values = tuple(
            convert(v) if isinstance(v, (int, float)) else convert(0) for v in marks.values()
        )
        out[iv] = IterVarAttr(
            _KIND_TYPES.get(kinds.get(iv, ""), IterVarType.DATA_PAR),
            threads.get(iv),
            keys,
            values,
        )
    return out
