"""``pytvm.container`` (TVM's ``tvm.ir.container``): ``Map`` and ``Array``."""

from __future__ import annotations

import pytvm
from pytvm import te
from pytvm.ir.container import Array, Map


def test_infer_bound_returns_a_map() -> None:
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    bounds = te.schedule.InferBound(s)
    assert isinstance(bounds, pytvm.container.Map)
    assert int(bounds[B.op.axis[0]].extent) == 10


def test_array_slices_stay_arrays() -> None:
    arr = Array([1, 2, 3])
    assert isinstance(arr[1:], Array) and arr[1:] == (2, 3)
    assert Map({1: 2}) == {1: 2}
