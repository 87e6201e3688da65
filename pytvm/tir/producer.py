"""Statements over tensors before lowering: ``ProducerStore`` and ``ProducerRealize``.

A hybrid script's body writes tensors (``c[i, j] = ...``) and declares scratch tensors before
any buffer exists; lowering replaces them by ``BufferStore`` and ``Allocate`` (TVM's
``tir.ProducerStore`` / ``tir.ProducerRealize``). The producer is a ``te.Tensor``, typed
``Any`` here because tensor expressions sit above this layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ffi.errors import TVMTypeError, TVMValueError
from .expr import PrimExpr, Range
from .stmt import Stmt

__all__ = ["ProducerRealize", "ProducerStore"]


@dataclass(frozen=True, slots=True, eq=False)
class ProducerStore(Stmt):
    """``producer[indices] = value`` for a tensor ``producer``."""

    producer: Any
    value: PrimExpr
    indices: tuple[PrimExpr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", tuple(self.indices))
        ndim = len(self.producer.shape)
        if len(self.indices) != ndim:
            raise TVMValueError(
                f"store to {self.producer.name}: {len(self.indices)} indices for a {ndim}-d tensor"
            )
        if self.value.dtype != self.producer.dtype:
            raise TVMTypeError(
                f"store to {self.producer.name}: value of type {self.value.dtype}, expected "
                f"{self.producer.dtype}"
            )


@dataclass(frozen=True, slots=True, eq=False)
class ProducerRealize(Stmt):
    """Tensor ``producer`` exists over ``bounds`` (in ``storage_scope``) while ``body`` runs."""

    producer: Any
    bounds: tuple[Range, ...]
    condition: PrimExpr
    body: Stmt
    storage_scope: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bounds", tuple(self.bounds))
        if len(self.bounds) != len(self.producer.shape):
            raise TVMValueError(
                f"realize {self.producer.name}: {len(self.bounds)} bounds for a "
                f"{len(self.producer.shape)}-d tensor"
            )
