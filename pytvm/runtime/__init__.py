"""pytvm's runtime: device APIs, NDArray (DLPack in and out), modules, time_evaluator, the graph
executor (``pytvm.runtime.graph_executor``).

Also TVM 0.27's ``tvm.runtime`` names: ``tensor``/``empty``, ``Tensor`` (an ``NDArray``),
``convert``, ``enabled``, ``DataType``, ``Device`` and the device constructors, ``ShapeTuple``.
"""

from __future__ import annotations

from ..ffi import DataType, DataTypeCode, Device, Object, cpu, cuda, device, ext_dev, hexagon
from ..ffi.container import Shape, String
from . import graph_executor, linked_library
from .device_api import CPUDeviceAPI, DeviceAPI, DeviceAttrKind, enabled, registered_device_apis
from .dlpack import from_dlpack
from .ffi_value import convert
from .graph_executor.params import (
    load_param_dict,
    load_param_dict_from_file,
    save_param_dict,
    save_param_dict_to_file,
)
from .module import LibraryModule, Module, load_module
from .ndarray import NDArray, array, empty, tensor
from .system_lib import SystemLibModule, register_system_lib_function, system_lib
from .thread_pool import num_threads, set_num_threads
from .time_evaluator import BenchmarkResult

#: TVM 0.27's name of the array class (``tvm.runtime.Tensor``).
Tensor = NDArray
#: TVM 0.27's name of ``ffi.Shape`` in this namespace (``tvm.runtime.ShapeTuple``).
ShapeTuple = Shape

__all__ = [
    "BenchmarkResult",
    "CPUDeviceAPI",
    "DataType",
    "DataTypeCode",
    "Device",
    "DeviceAPI",
    "DeviceAttrKind",
    "LibraryModule",
    "Module",
    "NDArray",
    "Object",
    "Shape",
    "ShapeTuple",
    "String",
    "SystemLibModule",
    "Tensor",
    "array",
    "convert",
    "cpu",
    "cuda",
    "device",
    "empty",
    "enabled",
    "ext_dev",
    "from_dlpack",
    "graph_executor",
    "hexagon",
    "linked_library",
    "load_module",
    "load_param_dict",
    "load_param_dict_from_file",
    "num_threads",
    "register_system_lib_function",
    "registered_device_apis",
    "save_param_dict",
    "save_param_dict_to_file",
    "set_num_threads",
    "system_lib",
    "tensor",
]
