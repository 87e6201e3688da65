"""Building statement sequences: ``seq`` and ``rebuild_seq``."""

from __future__ import annotations

from pytvm import tir
from pytvm.tir.stmt import SeqStmt, rebuild_seq, seq

A = tir.decl_buffer((4,), "float32", "A")


def _store(i: int) -> tir.Stmt:
    return tir.BufferStore(A, tir.const(float(i), "float32"), (tir.const(i),))


def test_rebuild_seq_keeps_the_node_when_no_child_changed() -> None:
    a, b = _store(0), _store(1)
    s = seq(a, b)
    assert isinstance(s, SeqStmt)
    assert rebuild_seq(s, [a, b]) is s


def test_rebuild_seq_drops_none_and_empties_to_none() -> None:
    a, b, c = _store(0), _store(1), _store(2)
    s = seq(a, b, c)
    assert isinstance(s, SeqStmt)
    assert rebuild_seq(s, [None, None, None]) is None
    assert rebuild_seq(s, [a, None, None]) is a
    rebuilt = rebuild_seq(s, [a, None, c])
    assert isinstance(rebuilt, SeqStmt)
    assert rebuilt.seq == (a, c)
