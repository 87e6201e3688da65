"""pytvm's FFI: type indices, DataType, Device, PackedFunc, the global registry, objects, errors."""

from __future__ import annotations

# callback and runtime_hooks install, on import, how functions cross and what C calls back.
from . import callback, core, runtime_hooks  # noqa: F401
from .c_function import CFunction
from .container import Shape, String
from .device import (
    DEVICE_NAME_TO_TYPE,
    RPC_SESS_MASK,
    Device,
    DeviceType,
    cpu,
    cuda,
    device,
    ext_dev,
    hexagon,
)
from .dtype import DataType, DataTypeCode, dtype
from .errors import (
    DiagnosticError,
    InternalError,
    OpAttributeInvalid,
    OpAttributeRequired,
    OpAttributeUnImplemented,
    OpError,
    OpNotImplemented,
    RPCError,
    RPCSessionBrokenError,
    RPCSessionTimeoutError,
    TVMAttributeError,
    TVMError,
    TVMIndexError,
    TVMKeyError,
    TVMMemoryError,
    TVMOSError,
    TVMTypeError,
    TVMValueError,
    format_error,
    parse_error,
    register_error,
)
from .function import PackedFunc, PyFunction, as_packed_func
from .host_library import runtime_library
from .object import (
    Object,
    register_object,
    type_index_to_class,
    type_index_to_key,
    type_key_to_index,
)
from .registry import (
    get_global_func,
    init_api,
    list_global_func_names,
    register_func,
    register_global_func,
    remove_global_func,
)
from .type_index import TypeIndex

__all__ = [
    "DEVICE_NAME_TO_TYPE",
    "RPC_SESS_MASK",
    "CFunction",
    "DataType",
    "DataTypeCode",
    "Device",
    "DeviceType",
    "DiagnosticError",
    "InternalError",
    "Object",
    "OpAttributeInvalid",
    "OpAttributeRequired",
    "OpAttributeUnImplemented",
    "OpError",
    "OpNotImplemented",
    "PackedFunc",
    "PyFunction",
    "RPCError",
    "RPCSessionBrokenError",
    "RPCSessionTimeoutError",
    "Shape",
    "String",
    "TVMAttributeError",
    "TVMError",
    "TVMIndexError",
    "TVMKeyError",
    "TVMMemoryError",
    "TVMOSError",
    "TVMTypeError",
    "TVMValueError",
    "TypeIndex",
    "as_packed_func",
    "core",
    "cpu",
    "cuda",
    "device",
    "dtype",
    "ext_dev",
    "format_error",
    "get_global_func",
    "hexagon",
    "init_api",
    "list_global_func_names",
    "parse_error",
    "register_error",
    "register_func",
    "register_global_func",
    "register_object",
    "remove_global_func",
    "runtime_library",
    "type_index_to_class",
    "type_index_to_key",
    "type_key_to_index",
]
