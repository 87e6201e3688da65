"""Statements of the loop IR: loops, stores, allocations, conditionals, bindings, sequences."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from ..ffi.errors import TVMTypeError, TVMValueError
from .expr import Buffer, PrimExpr, Var, lanes_of, with_lanes

__all__ = [
    "Allocate",
    "AssertStmt",
    "AttrStmt",
    "BufferStore",
    "Evaluate",
    "For",
    "ForKind",
    "IfThenElse",
    "LetStmt",
    "SeqStmt",
    "Stmt",
    "rebuild_seq",
    "seq",
]


class Stmt:
    """Base of every statement node."""

    __slots__ = ()

    def __str__(self) -> str:
        return _TEXT[0](self)


#: How statements print; installed by the printer module when ``pytvm.tir`` loads.
_TEXT: list[Callable[[Any], str]] = [lambda stmt: type(stmt).__name__]


def set_text_hook(render: Callable[[Any], str]) -> None:
    """Install the function that renders a statement as text (used by ``str``)."""
    _TEXT[0] = render


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


class ForKind(Enum):
    """How a loop runs: in order, split across threads, as SIMD lanes, or unrolled."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"


@dataclass(frozen=True, slots=True, eq=False)
class For(Stmt):
    """``for loop_var in [min, min + extent): body``; pragmas live in ``annotations``."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    annotations: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "annotations", _frozen(self.annotations))
        if self.min.dtype != self.loop_var.dtype or self.extent.dtype != self.loop_var.dtype:
            raise TVMTypeError(
                f"loop {self.loop_var.name}: min ({self.min.dtype}) and extent "
                f"({self.extent.dtype}) must have the loop variable's type {self.loop_var.dtype}"
            )


@dataclass(frozen=True, slots=True, eq=False)
class BufferStore(Stmt):
    """``buffer[indices] = value``; a Ramp index stores a vector."""

    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", tuple(self.indices))
        lanes = max((lanes_of(i.dtype) for i in self.indices), default=1)
        if self.value.dtype != with_lanes(self.buffer.dtype, lanes):
            raise TVMTypeError(
                f"store to {self.buffer.name}: value of type {self.value.dtype}, expected "
                f"{with_lanes(self.buffer.dtype, lanes)}"
            )
        if self.buffer.ndim and len(self.indices) != self.buffer.ndim:
            raise TVMValueError(
                f"store to {self.buffer.name}: {len(self.indices)} indices for a "
                f"{self.buffer.ndim}-d buffer"
            )


@dataclass(frozen=True, slots=True, eq=False)
class Allocate(Stmt):
    """``buffer`` allocated (on the stack for ``local`` scope, else as a workspace) for ``body``."""

    buffer: Buffer
    body: Stmt


@dataclass(frozen=True, slots=True, eq=False)
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case``."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@dataclass(frozen=True, slots=True, eq=False)
class LetStmt(Stmt):
    """``var = value`` in scope for ``body``."""

    var: Var
    value: PrimExpr
    body: Stmt


@dataclass(frozen=True, slots=True, eq=False)
class AttrStmt(Stmt):
    """An annotation ``key = value`` on ``node`` (a buffer, a var, or None) for ``body``."""

    node: Any
    key: str
    value: PrimExpr
    body: Stmt


@dataclass(frozen=True, slots=True, eq=False)
class AssertStmt(Stmt):
    """Fail with ``message`` unless ``condition`` holds, then run ``body``."""

    condition: PrimExpr
    message: str
    body: Stmt


@dataclass(frozen=True, slots=True, eq=False)
class Evaluate(Stmt):
    """Evaluate an expression for its effect (a call)."""

    value: PrimExpr


@dataclass(frozen=True, slots=True, eq=False)
class SeqStmt(Stmt):
    """Statements run in order."""

    seq: tuple[Stmt, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "seq", tuple(self.seq))

    def __getitem__(self, index: int) -> Stmt:
        """Statement ``index`` of the sequence (TVM's ``SeqStmt[i]``)."""
        return self.seq[index]

    def __len__(self) -> int:
        return len(self.seq)

    def __bool__(self) -> bool:
        return True  # a statement, even an empty sequence, is never falsy


def seq(*stmts: Stmt | None) -> Stmt:
    """Statements in order, with nested sequences flattened and ``None`` dropped."""
    flat: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))


def rebuild_seq(s: SeqStmt, parts: Iterable[Stmt | None]) -> Stmt | None:
    """``s`` with its children replaced by ``parts`` (``None`` drops a child): ``None`` when
    nothing is left, ``s`` itself when every child came back unchanged, else their :func:`seq`.
    """
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    if len(kept) == len(s.seq) and all(a is b for a, b in zip(kept, s.seq, strict=True)):
        return s
    return seq(*kept)
