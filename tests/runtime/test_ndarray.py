from __future__ import annotations

import ctypes
import re
from typing import Any, cast

import numpy as np
import pytest

import pytvm
from pytvm import Device
from pytvm.ffi.c_abi import DLTensor
from pytvm.ffi.errors import TVMValueError
from pytvm.runtime import DeviceAPI
from pytvm.runtime.device_api import nbytes_of

DTYPES = [
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
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_round_trip(dtype: str) -> None:
    host = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    a = pytvm.nd.array(host)
    assert a.shape == (2, 3, 4) and a.dtype == dtype and a.device == pytvm.cpu(0)
    assert a.byte_offset == 0
    np.testing.assert_array_equal(a.numpy(), host)


def test_copyfrom_accepts_ndarray_list_and_array() -> None:
    a = pytvm.nd.empty((3,), "int32")
    a.copyfrom([1, 2, 3])
    assert a.numpy().tolist() == [1, 2, 3]
    b = pytvm.nd.array(np.array([7, 8, 9], "int32"))
    a.copyfrom(b)
    assert a.numpy().tolist() == [7, 8, 9]


def test_copyto_device_and_array() -> None:
    a = pytvm.nd.array(np.arange(4, dtype="float32"))
    b = a.copyto(pytvm.cpu(0))
    assert b is not a and b.numpy().tolist() == [0, 1, 2, 3]
    c = pytvm.nd.empty((4,), "float32")
    assert a.copyto(c) is c and c.numpy().tolist() == [0, 1, 2, 3]


def test_shape_mismatch_shows_both() -> None:
    a = pytvm.nd.empty((2, 3), "float32")
    with pytest.raises(ValueError, match=r"\(2, 3\) float32.*\(3, 2\) float32"):
        a.copyfrom(np.zeros((3, 2), "float32"))


def test_dtype_mismatch_shows_both() -> None:
    a = pytvm.nd.empty((2,), "float32")
    with pytest.raises(ValueError, match=r"float32.*float64"):
        a.copyfrom(np.zeros(2, "float64"))
    with pytest.raises(ValueError, match=r"int32"):
        a.copyto(pytvm.nd.empty((2,), "int32"))


def test_non_contiguous_input_is_copied_correctly() -> None:
    host = np.arange(24, dtype="float32").reshape(4, 6)[:, ::2]
    assert not host.flags.c_contiguous
    np.testing.assert_array_equal(pytvm.nd.array(host).numpy(), host)
    a = pytvm.nd.empty(host.shape, "float32").copyfrom(host.T.T)
    np.testing.assert_array_equal(a.numpy(), host)


def test_zero_size_and_scalar_arrays() -> None:
    assert pytvm.nd.array(np.zeros((0, 3), "float32")).numpy().shape == (0, 3)
    scalar = pytvm.nd.array(np.array(3.5, "float64"))
    assert scalar.shape == () and scalar.numpy() == 3.5


def test_bad_shape_is_rejected() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        pytvm.nd.empty((2, -1))


class DictDeviceAPI(DeviceAPI):
    """A device whose memory is a Python dict: proves copies go through the device API."""

    def __init__(self) -> None:
        self.memory: dict[int, bytearray] = {}
        self.calls: list[str] = []
        self.next_ptr = 0x1000

    def alloc_data(
        self, dev: Device, nbytes: int, alignment: int, dtype: object, mem_scope: object = None
    ) -> int:
        self.calls.append("alloc_data")
        ptr, self.next_ptr = self.next_ptr, self.next_ptr + 0x1000
        self.memory[ptr] = bytearray(nbytes)
        return ptr

    def free_data(self, dev: Device, ptr: int) -> None:
        self.calls.append("free_data")
        del self.memory[ptr]

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: object) -> None:
        self.calls.append("copy_data_from_to")
        n = nbytes_of(src)
        if src.device.device_type == 12:  # device -> host
            ctypes.memmove(dst.data + dst.byte_offset, bytes(self.memory[src.data]), n)
        else:  # host -> device
            self.memory[dst.data][:] = ctypes.string_at(src.data + src.byte_offset, n)

    def stream_sync(self, dev: Device, stream: object) -> None:
        self.calls.append("stream_sync")


def test_device_api_registered_from_python_serves_copies() -> None:
    api = DictDeviceAPI()
    pytvm.register_func("device_api.ext_dev", lambda: api, override=True)
    try:
        a = pytvm.nd.empty((2,), "int32", pytvm.ext_dev(0))
        a.copyfrom(np.array([2, 3], "int32"))
        assert api.calls == ["alloc_data", "copy_data_from_to", "stream_sync"]
        assert bytes(api.memory[a.data_ptr]) == np.array([2, 3], "int32").tobytes()
        assert a.numpy().tolist() == [2, 3]
        assert "ext_dev" in pytvm.runtime.registered_device_apis()
        ptr = a.data_ptr
        del a
        assert ptr not in api.memory and api.calls[-1] == "free_data"
    finally:
        pytvm.remove_global_func("device_api.ext_dev")


def test_rpc_device_without_rpc_api_is_a_clear_error() -> None:
    saved = pytvm.get_global_func("device_api.rpc", allow_missing=True)
    if saved is not None:  # pytvm.rpc registers it when imported; take it away for this test
        pytvm.remove_global_func("device_api.rpc")
    try:
        with pytest.raises(ValueError, match=re.escape("device_api.rpc")):
            DeviceAPI.get(Device(129, 0))
    finally:
        if saved is not None:
            pytvm.ffi.registry.register_packed("device_api.rpc", saved)


def test_non_native_byte_order_is_converted() -> None:
    big_endian = np.array([1, 2, 258], ">i4")
    assert pytvm.nd.array(big_endian).numpy().tolist() == [1, 2, 258]
    a = pytvm.nd.empty((3,), "int32").copyfrom(big_endian)
    assert a.numpy().tolist() == [1, 2, 258]


def test_vector_lanes_are_the_last_numpy_axis() -> None:
    a = pytvm.nd.empty((2,), "float32x4")
    host = np.arange(8, dtype="float32").reshape(2, 4)
    np.testing.assert_array_equal(a.copyfrom(host).numpy(), host)
    with pytest.raises(ValueError, match=r"\(2, 4\) float32.*\(2,\) float32"):
        a.copyfrom(np.zeros(2, "float32"))


def test_read_only_dlpack_memory_refuses_writes() -> None:
    host = np.zeros(3, "float32")
    host.flags.writeable = False
    a = pytvm.nd.from_dlpack(host)
    with pytest.raises(ValueError, match="read-only"):
        a.copyfrom(np.ones(3, "float32"))
    with pytest.raises(ValueError, match="read-only"):
        pytvm.nd.array(np.ones(3, "float32")).copyto(a)
    assert host.tolist() == [0, 0, 0]
    assert a.copyto(pytvm.cpu(0)).copyfrom(np.ones(3, "float32")).numpy().tolist() == [1, 1, 1]


def test_shapes_take_anything_with_index_and_refuse_the_rest() -> None:
    from pytvm import te

    A = te.placeholder((20, 100), name="A")
    assert pytvm.nd.empty(cast(Any, A.shape)).shape == (20, 100)  # te shapes are IntImm
    assert pytvm.nd.empty(np.int64(3)).shape == (3,)
    for bad in [(True, 2), (2.0,), (-1,), ("3",)]:
        with pytest.raises(TVMValueError, match="bad shape"):
            pytvm.nd.empty(cast(Any, bad))
