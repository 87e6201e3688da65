"""pytvm: Apache TVM's runtime and compiler stack in Python, with a small portable C runtime."""

from __future__ import annotations

from . import ffi, nd, runtime
from .ffi import (
    DataType,
    Device,
    Object,
    PackedFunc,
    TVMError,
    cpu,
    cuda,
    device,
    ext_dev,
    get_global_func,
    hexagon,
    list_global_func_names,
    register_func,
    register_object,
    remove_global_func,
)
from .ffi.errors import (
    TVMAttributeError,
    TVMIndexError,
    TVMKeyError,
    TVMMemoryError,
    TVMTypeError,
    TVMValueError,
)
from .runtime import NDArray

__version__ = "0.1.0"

__all__ = [
    "DataType",
    "Device",
    "NDArray",
    "Object",
    "PackedFunc",
    "TVMAttributeError",
    "TVMError",
    "TVMIndexError",
    "TVMKeyError",
    "TVMMemoryError",
    "TVMTypeError",
    "TVMValueError",
    "__version__",
    "cpu",
    "cuda",
    "device",
    "ext_dev",
    "ffi",
    "get_global_func",
    "hexagon",
    "list_global_func_names",
    "nd",
    "register_func",
    "register_object",
    "remove_global_func",
    "runtime",
]
