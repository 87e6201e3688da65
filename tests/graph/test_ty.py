"""Tensor types: a shape's element count is exact, and one past what an int64 indexes is refused."""

from __future__ import annotations

import pytest

from pytvm.ffi.errors import TVMValueError
from pytvm.graph import TensorType


def test_size_and_nbytes_are_exact_for_large_shapes() -> None:
    ty = TensorType((2**31, 2**31), "float32")
    assert ty.size == 2**62
    assert ty.nbytes == 2**64


def test_a_shape_of_more_elements_than_int64_indexes_is_refused() -> None:
    with pytest.raises(TVMValueError, match=r"\[4611686018427387904, 4\] has 18446744073709551616"):
        TensorType((2**62, 4), "float32")
