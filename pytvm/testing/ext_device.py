"""A second device type for tests: ``ext_dev`` memory carved from one pool of host memory."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..ffi import Device
from ..ffi.c_abi import DLTensor
from ..ffi.dtype import DataType
from ..ffi.registry import register_func, remove_global_func
from ..runtime import DeviceAPI
from ..runtime.device_api import nbytes_of

__all__ = ["EXT_DEV", "HostPoolDeviceAPI", "host_pool_ext_dev"]

EXT_DEV = 12


class HostPoolDeviceAPI(DeviceAPI):
    """``ext_dev`` memory: 64-byte blocks carved from one host buffer, so C kernels can run on it
    and a test can tell by address whether an array lives there.
    """

    name = "ext_dev"

    def __init__(self) -> None:
        self.pool = np.zeros(1 << 20, dtype=np.uint8)
        self.base = self.pool.ctypes.data
        self.used = 0
        self.copies: list[tuple[int, int]] = []  # (source device type, destination device type)

    def owns(self, ptr: int) -> bool:
        """Whether ``ptr`` points into the pool."""
        return self.base <= ptr < self.base + self.pool.nbytes

    def alloc_data(
        self,
        dev: Device,
        nbytes: int,
        alignment: int,
        dtype: DataType,
        mem_scope: str | None = None,
    ) -> int:
        """The next 64-byte aligned block of the pool (never reused)."""
        ptr = (self.base + self.used + 63) // 64 * 64
        self.used = ptr - self.base + max(nbytes, 1)
        if self.used > self.pool.nbytes:
            raise MemoryError(f"ext_dev pool of {self.pool.nbytes} bytes is full")
        return ptr

    def free_data(self, dev: Device, ptr: int) -> None:
        """Nothing: the pool is freed with the object."""
        pass

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: int | None) -> None:
        """Copy bytes (host memory on both sides) and record the pair of device types."""
        self.copies.append((src.device.device_type, dst.device.device_type))
        n = nbytes_of(src)
        ctypes.memmove((dst.data or 0) + dst.byte_offset, (src.data or 0) + src.byte_offset, n)


@contextmanager
def host_pool_ext_dev() -> Iterator[HostPoolDeviceAPI]:
    """Register a :class:`HostPoolDeviceAPI` as ``device_api.ext_dev`` for the ``with`` block."""
    api = HostPoolDeviceAPI()
    register_func("device_api.ext_dev", lambda: api, override=True)
    try:
        yield api
    finally:
        remove_global_func("device_api.ext_dev")
