"""``Stage.transform_layout``: placeholder stages, physical buffer shapes, loops over the new
layout, and maps that would pad or need multi-dimensional buffers.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.ffi.errors import TVMError, TVMValueError
from pytvm.te.schedule.layout_map import LayoutMap
from pytvm.tir.expr import IntImm, IterVar, PrimExpr, const


def _ints(values: list[PrimExpr] | tuple[PrimExpr, ...]) -> list[int]:
    return [int(v.value) for v in values if isinstance(v, IntImm)]


def _dims(axes: list[IterVar]) -> list[int]:
    return _ints([iv.dom.extent for iv in axes if iv.dom is not None])


def _copy(shape: tuple[int, ...]) -> tuple[te.Tensor, te.Tensor, te.Schedule]:
    A = te.placeholder(shape, name="A", dtype="int32")
    B = te.compute(shape, lambda *i: A[i] + 1, name="B")
    return A, B, te.create_schedule(B.op)


def test_placeholders_have_stages_without_loops() -> None:
    A, _, s = _copy((4,))
    assert [st.name for st in s.stages] == ["A", "B"]
    assert s[A].is_input and s[A].leaf_iter_vars == []


def test_transposed_output_loops_and_buffer_follow_the_physical_layout() -> None:
    A, B, s = _copy((2, 3))
    axes = s[B].transform_layout(lambda i, j: [j, i])
    assert axes is not None
    assert _dims(axes) == [3, 2]
    assert _dims(s[B].leaf_iter_vars) == [3, 2]
    f = pytvm.build(s, [A, B], target="llvm")
    a = np.arange(6, dtype="int32").reshape(2, 3)
    b = pytvm.nd.empty((3, 2), "int32")
    f(pytvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a.T + 1)


def test_input_layout_split_reads_the_packed_buffer() -> None:
    A, B, s = _copy((8,))
    assert s[A].transform_layout(lambda i: [i // 4, i % 4]) is None
    s[B].split(B.op.axis[0], factor=2)
    f = pytvm.build(s, [A, B], target="llvm")
    a = np.arange(8, dtype="int32")
    b = pytvm.nd.empty((8,), "int32")
    f(pytvm.nd.array(a.reshape(2, 4)), b)
    np.testing.assert_array_equal(b.numpy(), a + 1)


def test_flatten_and_factor_maps_invert() -> None:
    shape = [const(4), const(6), const(8)]
    flat = LayoutMap.from_func(lambda i, j, k: [i * 48 + j * 8 + k], 3)
    new_shape, _, _ = flat.inverse(shape, "t")
    assert _ints(new_shape) == [192]
    factor = LayoutMap.from_func(lambda *idx, n: [*idx, n // 4, n % 4], 3)
    new_shape, _, logical = factor.inverse(shape, "t")
    assert _ints(new_shape) == [4, 6, 2, 4]
    assert len(logical) == 3


def test_padding_transform_raises() -> None:
    A = te.placeholder((1, 3, 8, 8))
    B = te.compute(A.shape, lambda *i: A[i])
    s = te.create_schedule(B.op)
    with pytest.raises(TVMError, match="pad"):
        s[B].transform_layout(lambda n, c, h, w: [n, c // 4, h, w, c % 4])


def test_axis_separators_are_refused_when_lowering() -> None:
    A, B, s = _copy((2, 3, 4))
    s[A].transform_layout(lambda i, j, k: [i, j, te.AXIS_SEPARATOR, k])
    with pytest.raises(TVMValueError, match="AXIS_SEPARATOR"):
        pytvm.lower(s, [A, B])
