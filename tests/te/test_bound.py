"""Bound inference (``pytvm.te.bound``): root ranges, leaf ranges through split/fuse/reorder, the
region a stage computed at a consumer's loop covers, and a schedule that lowering leaves as it was.
"""

from __future__ import annotations

import pytest

from pytvm import te
from pytvm.te.bound import infer_bound
from pytvm.tir.expr import IterVar, PrimExpr, Range


def _ewise(m: int, n: int) -> tuple[te.Tensor, te.Tensor, te.Schedule]:
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    return A, B, te.create_schedule(B.op)


def _extents(ranges: dict[IterVar, Range], axes: list[IterVar]) -> list[str]:
    return [str(ranges[iv].extent) for iv in axes]


def test_a_plain_compute_covers_its_whole_domain() -> None:
    A = te.placeholder((6, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    B = te.compute((6,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    bounds = infer_bound(s)
    ranges = bounds.ranges(s[B])
    assert [(str(r.min), str(r.extent)) for r in ranges.values()] == [("0", "6"), ("0", "5")]
    assert [(str(lo), str(ext)) for lo, ext in bounds.root_ranges(s[B])] == [("0", "6")]
    assert bounds.leaf(s[B]).guards == []


def test_a_split_by_an_exact_factor_needs_no_guard() -> None:
    _, B, s = _ewise(12, 5)
    outer, inner = s[B].split(B.op.axis[0], factor=4)
    info = infer_bound(s).leaf(s[B])
    assert _extents(infer_bound(s).ranges(s[B]), [outer, inner]) == ["3", "4"]
    assert info.guards == []
    assert str(info.root_value[B.op.axis[0].var]) == "((i.outer * 4) + i.inner)"


def test_a_split_by_an_inexact_factor_rounds_up_and_guards_the_parent() -> None:
    _, B, s = _ewise(10, 5)
    outer, inner = s[B].split(B.op.axis[0], factor=4)
    info = infer_bound(s).leaf(s[B])
    assert [str(info.extent[iv]) for iv in (outer, inner)] == ["3", "4"]
    assert [(iv, str(cond)) for iv, cond in info.guards] == [
        (B.op.axis[0], "(((i.outer * 4) + i.inner) < 10)")
    ]


def test_a_split_by_nparts_gives_the_outer_extent() -> None:
    _, B, s = _ewise(6, 7)
    outer, inner = s[B].split(B.op.axis[1], nparts=3)
    info = infer_bound(s).leaf(s[B])
    assert [str(info.extent[iv]) for iv in (outer, inner)] == ["3", "3"]
    assert len(info.guards) == 1


def test_a_fuse_multiplies_extents_and_recovers_each_axis() -> None:
    _, B, s = _ewise(6, 5)
    i, j = B.op.axis
    fused = s[B].fuse(i, j)
    info = infer_bound(s).leaf(s[B])
    assert str(info.extent[fused]) == "30"
    assert str(info.root_value[i.var]) == "floordiv(i.j.fused, 5)"
    assert str(info.root_value[j.var]) == "floormod(i.j.fused, 5)"


def test_a_reorder_changes_no_range() -> None:
    _, B, s = _ewise(13, 7)
    i, j = B.op.axis
    jo, ji = s[B].split(j, factor=3)
    before = {iv: str(r.extent) for iv, r in infer_bound(s).ranges(s[B]).items()}
    s[B].reorder(jo, i, ji)
    after = {iv: str(r.extent) for iv, r in infer_bound(s).ranges(s[B]).items()}
    assert after == before
    assert [before[iv] for iv in (i, jo, ji)] == ["13", "3", "3"]


def test_a_producer_at_a_split_axis_covers_what_one_iteration_reads() -> None:
    A = te.placeholder((30,), name="A")
    B = te.compute((30,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((28,), lambda i: B[i] + B[i + 1] + B[i + 2], name="C")
    s = te.create_schedule(C.op)
    xo, _ = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    bounds = infer_bound(s)
    ((lo, extent),) = bounds.root_ranges(s[B])
    assert (str(lo), str(extent)) == ("(i.outer * 8)", "10")  # 8 points and a halo of 2
    assert str(bounds.leaf(s[C]).extent[xo]) == "4"
    # The last tile (i.outer = 3) would reach past B's 30 points: guarded.
    assert [str(cond) for _, cond in bounds.leaf(s[B]).guards] == ["(((i.outer * 8) + i) < 30)"]


def test_stage_bounds_are_inferred_once_per_result() -> None:
    _, B, s = _ewise(4, 4)
    bounds = infer_bound(s)
    assert bounds.leaf(s[B]) is bounds.leaf(s[B])
    assert infer_bound(s).leaf(s[B]) is not bounds.leaf(s[B])


def test_inlined_stages_need_the_substituted_bodies() -> None:
    _, B, _ = _ewise(4, 4)
    C = te.compute((4, 4), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    with pytest.raises(ValueError, match=r"stages B are inlined; pass the bodies"):
        infer_bound(s)


def _snapshot(s: te.Schedule) -> list[dict[str, object]]:
    def frozen(value: object) -> object:
        if isinstance(value, (list, tuple)):
            return tuple(id(v) for v in value)
        if isinstance(value, dict):
            return tuple((k, id(v)) for k, v in value.items())
        return id(value) if not isinstance(value, (str, bool, int)) else value

    return [{name: frozen(v) for name, v in vars(stage).items()} for stage in s.stages]


def test_lowering_leaves_the_schedule_as_it_was() -> None:
    A = te.placeholder((20, 9), name="A")
    T = te.compute((20, 9), lambda i, j: A[i, j] + 1.0, name="T")
    U = te.compute((20, 9), lambda i, j: T[i, j] * 2.0, name="U")
    s = te.create_schedule(U.op)
    io, ii = s[U].split(U.op.axis[0], factor=6)
    s[U].vectorize(ii)
    s[T].compute_at(s[U], io)
    before = _snapshot(s)
    first = str(te.lower_schedule(s, [A, U], "f"))
    assert _snapshot(s) == before
    assert not any(name.startswith("_") for stage in s.stages for name in vars(stage))
    assert str(te.lower_schedule(s, [A, U], "f")) == first


def test_infer_bound_example() -> None:
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    outer, inner = s[B].split(B.op.axis[0], factor=4)
    ranges = infer_bound(s).ranges(s[B])
    extents: list[PrimExpr] = [ranges[outer].extent, ranges[inner].extent]
    assert [str(e) for e in extents] == ["3", "4"]
