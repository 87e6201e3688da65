"""``te.keep_schedule_record``: a snapshot of the schedule after every primitive."""

from __future__ import annotations

from pytvm import te, transform


def test_records_each_primitive_and_snapshots_stay_unchanged() -> None:
    with transform.PassContext(config={"te.keep_schedule_record": True}):
        A = te.placeholder((16, 16), name="A")
        B = te.compute((16, 16), lambda i, j: A[i, j] * 2.0, name="B")
        s = te.create_schedule(B.op)
        *_, yi = s[B].tile(B.op.axis[0], B.op.axis[1], 4, 4)
        s[B].vectorize(yi)
    assert s.primitive_record == ["vanilla", "split", "split", "reorder", "vectorize"]
    assert len(s.schedule_record[0][B].leaf_iter_vars) == 2
    assert len(s.schedule_record[1][B].leaf_iter_vars) == 3
    assert len(s[B].leaf_iter_vars) == 4


def test_no_record_without_the_option() -> None:
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].split(B.op.axis[0], factor=2)
    assert s.schedule_record == [] and s.primitive_record == []
