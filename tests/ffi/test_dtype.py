from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi
from hypothesis import given
from hypothesis import strategies as st

from pytvm import DataType

NAMES = [
    "float32",
    "int8",
    "uint8",
    "bool",
    "float16",
    "bfloat16",
    "float32x4",
    "handle",
    "int64",
    "uint1",
    "float8_e4m3fn",
    "float64",
    "int32x8",
    "boolx4",
    "float8_e4m3fnx4",
]


@pytest.mark.parametrize("name", NAMES)
def test_dtype_parse_print_round_trip(name: str) -> None:
    assert str(DataType.parse(name)) == name


@pytest.mark.parametrize("name", NAMES)
def test_dtype_fields_match_tvm_ffi(name: str) -> None:
    ours, theirs = DataType.parse(name), tvm_ffi.dtype(name)
    assert (ours.code, ours.bits, ours.lanes) == (theirs.type_code, theirs.bits, theirs.lanes)


@pytest.mark.parametrize(
    "np_name",
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
    ],
)
def test_dtype_numpy_round_trip(np_name: str) -> None:
    dt = DataType.from_numpy(np_name)
    assert str(dt) == np_name
    assert dt.numpy_dtype() == np.dtype(np_name)


@pytest.mark.parametrize(
    "bad",
    ["floaty", "float32x", "int0", "", "x86", "float32x0", "float8_e4m3fnx", "boolx0", "boolean"],
)
def test_dtype_bad_string_names_it(bad: str) -> None:
    with pytest.raises(ValueError, match=repr(bad).replace("[", r"\[")):
        DataType.parse(bad)


def test_dtype_parse_rejects_non_str_with_type_error() -> None:
    with pytest.raises(TypeError, match="expects a str, got list"):
        DataType.parse(["float32"])  # type: ignore[arg-type]


def test_dtype_without_numpy_equivalent_raises_type_error() -> None:
    with pytest.raises(TypeError, match="handle"):
        DataType.parse("handle").numpy_dtype()


@given(st.sampled_from([0, 1, 2]), st.sampled_from([8, 16, 32, 64]), st.integers(1, 16))
def test_dtype_string_round_trip_property(code: int, bits: int, lanes: int) -> None:
    dt = DataType(code, bits, lanes)
    assert DataType.parse(str(dt)) == dt
