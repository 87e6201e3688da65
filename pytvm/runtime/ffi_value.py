"""``convert``: a Python value as the FFI value a packed function would receive (TVM's
``tvm.runtime.convert``).
"""

from __future__ import annotations

import ctypes
from numbers import Number
from typing import Any

import numpy as np

from ..ffi import DataType, Device, Object
from ..ffi.container import Shape, String
from ..ffi.errors import TVMTypeError
from ..ffi.function import as_packed_func
from .dlpack import from_dlpack

__all__ = ["convert"]


def convert(value: Any) -> Any:  # noqa: PLR0911 - one return per kind of value
    """Convert a Python value to an FFI value, as TVM 0.27's ``tvm.runtime.convert``.

    FFI values (objects, numbers, bools, ``DataType``, ``Device``, ``String``, ``Shape``,
    pointers) come back as they are; ``str`` becomes :class:`~pytvm.ffi.String`, ``bytearray``
    ``bytes``, a callable a :class:`~pytvm.ffi.PackedFunc`, a DLPack producer (a numpy array) an
    :class:`~pytvm.runtime.NDArray` sharing its memory, a numpy dtype a ``DataType``. pytvm has
    no ``ffi.Array``/``ffi.Map`` objects: a list or tuple becomes a tuple of converted items and
    a dict a dict of converted items.

    Examples
    --------
    >>> import numpy as np
    >>> type(convert("abc")).__name__, convert(3), type(convert(lambda x: x)).__name__
    ('String', 3, 'PyFunction')
    >>> convert(np.arange(3, dtype="int32")).shape
    (3,)
    """
    if value is None or isinstance(
        value, (Object, bool, Number, ctypes.c_void_p, DataType, Device, String, Shape, bytes)
    ):
        return value
    if isinstance(value, str):
        return String(value)
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, (tuple, list)):
        return tuple(convert(item) for item in value)
    if isinstance(value, dict):
        return {convert(key): convert(item) for key, item in value.items()}
    if isinstance(value, np.dtype):
        return DataType.from_numpy(value)
    if hasattr(value, "__dlpack__"):
        return from_dlpack(value)
    if isinstance(value, BaseException):
        return value
    if callable(value):
        return as_packed_func(value)
    raise TVMTypeError(
        f"cannot convert a {type(value).__module__}.{type(value).__qualname__} to an FFI value: "
        "expected None, a number, str, bytes, DataType, Device, a shape, an object, a callable, "
        "a list/tuple/dict of those, or an array with __dlpack__"
    )
