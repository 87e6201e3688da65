from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

import pytvm
from pytvm.ffi import CFunction, Object, register_object
from pytvm.ffi.object import (
    object_from_handle,
    type_index_to_class,
    type_index_to_key,
    type_key_to_index,
)
from pytvm.testing import compile_c


@register_object("testing.Point")
class Point(Object):
    x: int
    y: int

    def __init__(self, x: int, y: int) -> None:
        self.__init_handle_by_constructor__(pytvm.get_global_func("testing.MakePoint"), x, y)


@pytvm.register_func("testing.MakePoint", override=True)
def _make_point(x: int, y: int) -> Object:
    made = Object.__new__(Point)
    made.x, made.y = x, y
    return made


def test_static_type_indices_follow_tvm_ffi() -> None:
    assert type_key_to_index("ffi.Module") == 73
    assert type_key_to_index("ffi.Tensor") == 70
    assert type_key_to_index("ffi.Function") == 68
    assert type_index_to_key(115) == "runtime.RPCObjectRef"


def test_register_object_assigns_dynamic_index() -> None:
    index = type_key_to_index("testing.Point")
    assert index >= 128 and Point._type_index == index
    assert type_index_to_class(index) is Point and type_index_to_key(index) == "testing.Point"
    assert Point(1, 2).type_key == "testing.Point"


def test_reregistering_key_to_another_class_fails() -> None:
    with pytest.raises(ValueError, match=re.escape("testing.Point")):

        @register_object("testing.Point")
        class Other(Object):
            pass


def test_constructor_pattern_fills_object() -> None:
    p = Point(3, 4)
    assert (p.x, p.y) == (3, 4) and isinstance(p, Point)


ECHO = r"""
#include "pytvm/c_runtime_api.h"
TVM_DLL int echo(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* r) {
  (void)n; (void)r;
  if (codes[0] == kTVMPackedFuncHandle) TVMFuncRetain(args[0].v_handle); /* ret is owned */
  *ret = args[0];
  *ret_code = codes[0];
  return 0;
}
"""


@pytest.mark.needs_cc
def test_object_through_c_keeps_identity_and_class(tmp_path: Path) -> None:
    pytvm.ffi.runtime_library()
    lib = ctypes.CDLL(str(compile_c(ECHO, tmp_path, "echo")))
    address = ctypes.cast(lib.echo, ctypes.c_void_p).value
    assert address is not None
    echo = CFunction(address, owner=lib, name="echo")
    p = Point(5, 6)
    back = echo(p)
    assert back is p and type(back) is Point
    f = pytvm.ffi.as_packed_func(lambda: 7)
    assert echo(f) is f  # a Python function handed to C comes back as itself


def test_handle_with_wrong_type_index_is_refused() -> None:
    p = Point(1, 1)
    assert object_from_handle(p.handle, Point._type_index) is p
    assert object_from_handle(p.handle, type_key_to_index("ffi.Object")) is p  # a base is fine
    with pytest.raises(ValueError, match="type index 68"):
        object_from_handle(p.handle, type_key_to_index("ffi.Function"))
