"""tvm-ffi's ``core`` names (``tvm_ffi.core.String``, ``.Function``, ...), for code written
against tvm-ffi: each is the pytvm class that plays the same part.
"""

from __future__ import annotations

from .container import String
from .device import Device
from .dtype import DataType
from .errors import TVMError as Error
from .function import PackedFunc as Function
from .object import Object

__all__ = ["DataType", "Device", "Error", "Function", "Object", "String"]
