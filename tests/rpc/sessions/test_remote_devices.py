"""Remote devices other than the CPU, a shared object loaded on a real server, and the pytvm
server reached through the tracker and through the proxy.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.ffi import DataType, Device
from pytvm.ffi.c_abi import DLTensor
from pytvm.runtime import DeviceAPI
from pytvm.runtime.device_api import nbytes_of
from pytvm.testing import compile_c
from pytvm.testing.rpc import service_process, thread_server


class PoolDeviceAPI(DeviceAPI):
    """A stand-in accelerator: its memory is one private pool, addressed by offsets + 1."""

    name = "ext_dev"

    def __init__(self) -> None:
        self.pool = bytearray(1 << 20)
        self.next = 0
        self.syncs = 0

    def alloc_data(
        self,
        dev: Device,
        nbytes: int,
        alignment: int,
        dtype: DataType,
        mem_scope: str | None = None,
    ) -> int:
        ptr = self.next + 1
        self.next += (nbytes + 63) // 64 * 64
        return ptr

    def free_data(self, dev: Device, ptr: int) -> None:
        pass

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: int | None) -> None:
        n = nbytes_of(src)
        on_pool = (src.device.device_type == 12, dst.device.device_type == 12)
        if on_pool == (True, True):
            a, b = (src.data or 0) - 1 + src.byte_offset, (dst.data or 0) - 1 + dst.byte_offset
            self.pool[b : b + n] = self.pool[a : a + n]
        elif on_pool[1]:
            start = (dst.data or 0) - 1 + dst.byte_offset
            self.pool[start : start + n] = ctypes.string_at((src.data or 0) + src.byte_offset, n)
        else:
            start = (src.data or 0) - 1 + src.byte_offset
            ctypes.memmove(
                (dst.data or 0) + dst.byte_offset, bytes(self.pool[start : start + n]), n
            )

    def stream_sync(self, dev: Device, stream: int | None) -> None:
        self.syncs += 1


def test_arrays_on_a_remote_accelerator_live_in_its_memory() -> None:
    api = PoolDeviceAPI()
    pytvm.register_func("device_api.ext_dev", lambda: api, override=True)
    try:
        with thread_server() as port, rpc.connect("127.0.0.1", port) as sess:
            a = pytvm.nd.empty((2,), "int32", sess.ext_dev(0))
            a.copyfrom(np.array([2, 3], "int32"))
            assert a.numpy().tolist() == [2, 3]
            assert bytes(api.pool[:8]) == np.array([2, 3], "int32").tobytes()
            assert api.syncs >= 2  # copies to a non-CPU device are synchronised remotely
            b = pytvm.nd.empty((2,), "int32", sess.ext_dev(0))
            a.copyto(b)
            assert b.numpy().tolist() == [2, 3]
    finally:
        pytvm.remove_global_func("device_api.ext_dev")


def test_remote_device_without_a_device_api_is_a_clear_error() -> None:
    with thread_server() as port, rpc.connect("127.0.0.1", port) as sess:
        with pytest.raises(ValueError, match=re.escape("device_api.hexagon")):
            pytvm.nd.empty((2,), "int32", sess.hexagon(0))
        assert sess.cpu().device_type == (sess._tbl_index + 1) * 128 + 1


KERNEL = r"""
#include "pytvm/c_backend_api.h"
TVM_DLL int scale2(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* res) {
  DLTensor* t = (DLTensor*)args[0].v_handle;
  int64_t i;
  (void)codes; (void)n; (void)ret; (void)res;
  for (i = 0; i < t->shape[0]; ++i) ((float*)t->data)[i] *= 2.0f;
  *ret_code = kTVMNullptr;
  return 0;
}
"""


@pytest.mark.needs_cc
def test_uploaded_shared_object_runs_on_the_server(tmp_path: Path) -> None:
    lib = compile_c(KERNEL, tmp_path, "scale2")
    server_args = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1", "--silent")
    with service_process(*server_args) as (_, port), rpc.connect("127.0.0.1", port) as sess:
        sess.upload(str(lib), "scale2.so")
        assert "scale2.so" in sess.listdir(".")
        mod = sess.load_module("scale2.so")
        a = pytvm.nd.array(np.arange(4, dtype="float32"), sess.cpu())
        mod["scale2"](a)
        assert a.numpy().tolist() == [0.0, 2.0, 4.0, 6.0]
        timer = mod.time_evaluator("scale2", sess.cpu(), number=3, repeat=2)
        assert len(timer(a).results) == 2


def test_pytvm_server_requested_through_the_pytvm_tracker() -> None:
    from pytvm.rpc.services.tracker import Tracker

    with Tracker(host="127.0.0.1", port=0, port_end=1, silent=True) as tracker:
        args = ("--tracker", f"127.0.0.1:{tracker.port}", "--key", "board")
        server_args = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1")
        with service_process(*server_args, *args, "--silent"):
            with rpc.connect_tracker("127.0.0.1", tracker.port) as client:
                for _ in range(2):  # the server registers again after each session
                    sess = client.request("board", session_timeout=30)
                    assert sess.get_function("rpc.test.addone")(1) == 2
                    sess.close()


def test_pytvm_server_through_the_pytvm_proxy() -> None:
    proxy_args = ("proxy", "--host", "127.0.0.1", "--port", "0", "--port-end", "1")
    with service_process(*proxy_args) as (_, proxy_port):
        server_args = ("server", "--host", "127.0.0.1", "--port", str(proxy_port))
        with service_process(*server_args, "--key", "dev", "--through-proxy", "--silent"):
            with rpc.connect("127.0.0.1", proxy_port, key="dev") as sess:
                x = np.arange(1000, dtype="float32")
                np.testing.assert_array_equal(pytvm.nd.array(x, sess.cpu()).numpy(), x)
