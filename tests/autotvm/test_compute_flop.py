"""``autotvm.task.compute_flop`` with TVM's argument (a schedule) and TVM's error for pure data
movement; ``autotvm.task.create`` still makes a task of such a template (FLOP count 0).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytvm import autotvm, te
from pytvm.autotvm.task import compute_flop


def test_a_schedule_counts_its_outputs() -> None:
    n = 32
    a = te.placeholder((n, n), name="a")
    b = te.placeholder((n, n), name="b")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="c")
    d = te.compute((n, n), lambda i, j: te.div(c[i, j], 2.0), name="d")
    s = te.create_schedule(d.op)
    assert compute_flop(s) == compute_flop([d]) == 2 * n**3 + n * n


def test_pure_data_movement_raises_and_create_counts_zero() -> None:
    a = te.placeholder((64,), name="a")
    b = te.compute((64,), lambda i: a[63 - i], name="b")
    with pytest.raises(RuntimeError, match="add_flop"):
        compute_flop(te.create_schedule(b.op))

    @autotvm.template("test_compute_flop.reverse")
    def reverse(n: int) -> tuple[Any, list[Any]]:
        x = te.placeholder((n,), name="x")
        y = te.compute((n,), lambda i: x[n - 1 - i], name="y")
        s = te.create_schedule(y.op)
        cfg = autotvm.get_config()
        cfg.define_split("tile", y.op.axis[0], num_outputs=2)
        cfg["tile"].apply(s, y, y.op.axis[0])
        return s, [x, y]

    task = autotvm.task.create("test_compute_flop.reverse", (64,), "llvm")
    assert task.flop == 0 and len(task.config_space) == 7
