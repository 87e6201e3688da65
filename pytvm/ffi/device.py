"""``Device``: DLPack's (device_type, device_id), with TVM's names and the RPC session mask."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from .errors import TVMTypeError, TVMValueError
from .registry import get_global_func

__all__ = [
    "DEVICE_NAME_TO_TYPE",
    "RPC_SESS_MASK",
    "Device",
    "DeviceType",
    "cpu",
    "cuda",
    "device",
    "ext_dev",
    "hexagon",
]

#: Device types at or above this carry an RPC session: type = base + 128 * (session index + 1).
RPC_SESS_MASK = 128


class DeviceType(IntEnum):
    """DLPack's ``DLDeviceType``."""

    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONEAPI = 14
    WEBGPU = 15
    HEXAGON = 16
    MAIA = 17
    TRN = 18


#: Every name ``device()`` accepts, TVM's aliases included.
DEVICE_NAME_TO_TYPE: dict[str, int] = {
    "cpu": 1,
    "llvm": 1,
    "c": 1,
    "stackvm": 1,
    "cuda": 2,
    "nvptx": 2,
    "gpu": 2,
    "cuda_host": 3,
    "cl": 4,
    "opencl": 4,
    "vulkan": 7,
    "metal": 8,
    "vpi": 9,
    "rocm": 10,
    "rocm_host": 11,
    "sdaccel": 4,  # TVM's name of OpenCL on a Xilinx FPGA
    "ext_dev": 12,
    "cuda_managed": 13,
    "oneapi": 14,
    "webgpu": 15,
    "hexagon": 16,
    "maia": 17,
    "trn": 18,
}
_TYPE_TO_NAME: dict[int, str] = {
    1: "cpu",
    2: "cuda",
    3: "cuda_host",
    4: "opencl",
    7: "vulkan",
    8: "metal",
    9: "vpi",
    10: "rocm",
    11: "rocm_host",
    12: "ext_dev",
    13: "cuda_managed",
    14: "oneapi",
    15: "webgpu",
    16: "hexagon",
    17: "maia",
    18: "trn",
}


@dataclass(frozen=True, slots=True)
class Device:
    """A device: DLPack ``device_type`` (possibly RPC-masked) and ``device_id``.

    Examples
    --------
    >>> str(Device(1, 0)), str(Device(16 + 128, 0))
    ('cpu(0)', 'remote[0]:hexagon(0)')
    """

    device_type: int
    device_id: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.device_type, int) or not isinstance(self.device_id, int):
            raise TVMTypeError(
                f"Device fields must be int, got {self.device_type!r}, {self.device_id!r}"
            )
        if not (0 <= self.device_type < 2**31 and -(2**31) <= self.device_id < 2**31):
            raise TVMValueError(f"Device({self.device_type}, {self.device_id}) is out of range")

    @property
    def base_type(self) -> int:
        """The device type with any RPC session mask removed."""
        return self.device_type % RPC_SESS_MASK

    @property
    def rpc_session_index(self) -> int | None:
        """The RPC session table index this device belongs to, or None for a local device."""
        if self.device_type < RPC_SESS_MASK:
            return None
        return self.device_type // RPC_SESS_MASK - 1

    @property
    def is_remote(self) -> bool:
        """Whether the device sits behind an RPC session."""
        return self.device_type >= RPC_SESS_MASK

    @property
    def device_name(self) -> str:
        """TVM's name of the (unmasked) device type, e.g. ``"cpu"`` or ``"hexagon"``."""
        return _TYPE_TO_NAME.get(self.base_type, f"device_type{self.base_type}")

    def with_session(self, session_index: int) -> Device:
        """The same device as seen through RPC session ``session_index``."""
        return Device(self.base_type + RPC_SESS_MASK * (session_index + 1), self.device_id)

    def without_session(self) -> Device:
        """The same device as the remote side sees it (mask removed)."""
        return Device(self.base_type, self.device_id)

    def sync(self, stream: int | None = None) -> None:
        """Wait until the work queued on ``stream`` (default: the current stream) is done, as
        TVM's ``Device.sync``; a remote device asks its server through the RPC device API.
        """
        get_global_func("runtime.Device_StreamSync")(self, stream)

    def __str__(self) -> str:
        local = f"{self.device_name}({self.device_id})"
        index = self.rpc_session_index
        return local if index is None else f"remote[{index}]:{local}"

    def __repr__(self) -> str:
        return f"Device({str(self)!r})"

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device_type, self.device_id)


def device(dev_type: str | int | Device, dev_id: int = 0) -> Device:
    """Make a device from a name (``"cpu"``, ``"hexagon"``, ``"cuda:1"``) or a DLPack type.

    Examples
    --------
    >>> device("hexagon", 0).device_type, device("cuda:1").device_id
    (16, 1)
    """
    if isinstance(dev_type, Device):
        return dev_type
    if isinstance(dev_type, int):
        return Device(dev_type, dev_id)
    if not isinstance(dev_type, str):
        raise TVMTypeError(f"device type must be str or int, got {type(dev_type).__name__}")
    name = dev_type.split(" ", 1)[0].strip()
    if ":" in name:
        name, _, id_text = name.partition(":")
        if not id_text.isdigit():
            raise TVMValueError(f"bad device string {dev_type!r}: expected 'name' or 'name:id'")
        dev_id = int(id_text)
    if name not in DEVICE_NAME_TO_TYPE:
        raise TVMValueError(
            f"unknown device name {name!r}; known: {', '.join(sorted(DEVICE_NAME_TO_TYPE))}"
        )
    return Device(DEVICE_NAME_TO_TYPE[name], dev_id)


def cpu(dev_id: int = 0) -> Device:
    """The host CPU."""
    return Device(DeviceType.CPU, dev_id)


def cuda(dev_id: int = 0) -> Device:
    """A CUDA GPU."""
    return Device(DeviceType.CUDA, dev_id)


def hexagon(dev_id: int = 0) -> Device:
    """A Hexagon DSP (device type 16)."""
    return Device(DeviceType.HEXAGON, dev_id)


def ext_dev(dev_id: int = 0) -> Device:
    """An external accelerator (device type 12)."""
    return Device(DeviceType.EXT_DEV, dev_id)
