"""``ffi.String`` and ``ffi.Shape``: built-in subclasses as in tvm-ffi, and their makers."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

from pytvm import ffi
from pytvm.ffi import Shape, String, TypeIndex, get_global_func


def test_string_is_a_str_with_the_ffi_type() -> None:
    s = String("héllo")
    assert isinstance(s, str) and s == "héllo" and hash(s) == hash("héllo")
    assert (s.type_key, s.type_index) == ("ffi.String", TypeIndex.STR)
    assert isinstance(tvm_ffi.core.String("x"), str)  # tvm-ffi's is a str too


def test_shape_is_a_tuple_of_ints_like_tvm_ffi() -> None:
    ours = Shape((2, np.int64(3)))
    theirs: object = tvm_ffi.Shape((2, 3))
    assert ours == theirs == (2, 3) and isinstance(ours, tuple)
    assert [type(d) for d in ours] == [int, int]
    assert (ours.type_key, ours.type_index) == ("ffi.Shape", TypeIndex.SHAPE)
    assert repr(ours) == "Shape((2, 3))" and Shape() == ()


@pytest.mark.parametrize("bad", [(2, 1.5), ("a",), 3, "23"])
def test_shape_refuses_what_is_not_ints(bad: object) -> None:
    with pytest.raises(TypeError, match="Shape"):
        Shape(bad)  # type: ignore[arg-type]


def test_global_functions_make_them_as_tvm() -> None:
    shape = get_global_func("ffi.Shape")(4, 5)
    assert type(shape) is Shape and shape == tvm_ffi.get_global_func("ffi.Shape")(4, 5)
    string = get_global_func("ffi.String")("ab")
    assert type(string) is String and string == tvm_ffi.get_global_func("ffi.String")("ab")
    with pytest.raises(TypeError, match="dimension 0 must be an int"):
        get_global_func("ffi.Shape")("x")
    assert ffi.Shape is Shape and ffi.String is String


def test_core_names_follow_tvm_ffi() -> None:
    import tvm_ffi.core

    from pytvm.ffi import core

    for name in core.__all__:
        assert hasattr(tvm_ffi.core, name), name
    assert core.String("abc") + core.String("def") == "abcdef"
    assert isinstance(core.String("x"), str)
