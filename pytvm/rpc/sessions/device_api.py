"""``device_api.rpc``: the device API ``DeviceAPI.get`` picks for every RPC-masked device.

It owns no memory itself: the device type's mask names a slot of the session table (spec
section 7) and every call is handed to that session, which is a device API too (seed 000's
``RPCDeviceAPI`` -> ``RPCClientSession``).
"""

from __future__ import annotations

from typing import Any

from ...ffi.c_abi import DLTensor
from ...ffi.device import Device
from ...ffi.dtype import DataType
from ...ffi.errors import TVMValueError
from ...ffi.registry import register_func
from ...runtime.device_api import DeviceAPI
from ..wire.base import RPC_SESS_MASK
from .session import SessionBase, get_session

__all__ = ["RPCDeviceAPI", "session_of_device"]


def session_of_device(dev: Device) -> SessionBase:
    """The session a masked device belongs to."""
    index = dev.rpc_session_index
    if index is None:
        raise TVMValueError(f"{dev} is a local device, not an RPC device")
    return get_session(index)


def _session_of_tensor(t: DLTensor) -> SessionBase:
    return get_session(t.device.device_type // RPC_SESS_MASK - 1)


class RPCDeviceAPI(DeviceAPI):
    """Routes each call to the session named by the device's mask."""

    name = "rpc"

    def set_device(self, dev: Device) -> None:
        """Make ``dev`` current on its session's server."""
        session_of_device(dev).set_device(dev)

    def get_attr(self, dev: Device, kind: int) -> Any:
        """Attribute ``kind`` of remote ``dev``, asked of its session."""
        return session_of_device(dev).get_attr(dev, kind)

    def alloc_data(
        self,
        dev: Device,
        nbytes: int,
        alignment: int,
        dtype: DataType,
        mem_scope: str | None = None,
    ) -> int:
        """Allocate ``nbytes`` on remote ``dev``; the remote pointer."""
        return session_of_device(dev).alloc_data(dev, nbytes, alignment, dtype, mem_scope)

    def free_data(self, dev: Device, ptr: int) -> None:
        """Free the remote allocation ``ptr`` on ``dev``."""
        session_of_device(dev).free_data(dev, ptr)

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: int | None) -> None:
        """Copy between tensors of one session, or between one and the host."""
        remote = src if src.device.device_type >= RPC_SESS_MASK else dst
        session = _session_of_tensor(remote)
        if (
            src.device.device_type >= RPC_SESS_MASK
            and dst.device.device_type >= RPC_SESS_MASK
            and src.device.device_type // RPC_SESS_MASK != dst.device.device_type // RPC_SESS_MASK
        ):
            raise TVMValueError(
                "cannot copy directly between two RPC sessions; copy through host memory"
            )
        session.copy_data_from_to(src, dst, stream)

    def stream_sync(self, dev: Device, stream: int | None) -> None:
        """Wait for ``stream`` on remote ``dev``."""
        session_of_device(dev).stream_sync(dev, stream)

    def create_stream(self, dev: Device) -> int | None:
        """A new stream on remote ``dev``; ``None`` for the default stream."""
        return session_of_device(dev).create_stream(dev)

    def free_stream(self, dev: Device, stream: int | None) -> None:
        """Free ``stream`` on remote ``dev``."""
        session_of_device(dev).free_stream(dev, stream)

    def set_stream(self, dev: Device, stream: int | None) -> None:
        """Make ``stream`` current on remote ``dev``."""
        session_of_device(dev).set_stream(dev, stream)

    def get_current_stream(self, dev: Device) -> int | None:
        """The current stream on remote ``dev``; ``None`` for the default stream."""
        return session_of_device(dev).get_current_stream(dev)


_RPC_API = RPCDeviceAPI()
register_func("device_api.rpc", lambda: _RPC_API, override=True)
