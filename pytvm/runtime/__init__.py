"""pytvm's runtime: device APIs, NDArray (DLPack in and out), modules, time_evaluator."""

from __future__ import annotations

from .device_api import CPUDeviceAPI, DeviceAPI, DeviceAttrKind, registered_device_apis
from .dlpack import from_dlpack
from .module import LibraryModule, Module, load_module
from .ndarray import NDArray, array, empty
from .system_lib import SystemLibModule, register_system_lib_function, system_lib
from .time_evaluator import BenchmarkResult

__all__ = [
    "BenchmarkResult",
    "LibraryModule",
    "Module",
    "load_module",
    "CPUDeviceAPI",
    "DeviceAPI",
    "DeviceAttrKind",
    "NDArray",
    "array",
    "empty",
    "from_dlpack",
    "registered_device_apis",
    "SystemLibModule",
    "register_system_lib_function",
    "system_lib",
]
