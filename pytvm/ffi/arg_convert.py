"""Values across the C boundary: Python values to ``(TVMValue, type index)`` pairs and back.

Type indices follow tvm-ffi's numbering. Packing is a lookup on the exact Python type
(``_ARG_SETTERS``), filled for subclasses on first sight from an ordered list of base classes.
A Python function's return value reaches C the same way (:func:`store_return`).
Two kinds of value need the layers above: tensors (the runtime's ``NDArray``, installed with
:func:`register_arg_setter` and :func:`set_dltensor_wrapper`) and functions (handles made and
read by ``ffi.callback``, installed with :func:`set_function_handles`).

Examples
--------
>>> from pytvm.ffi import DataType
>>> values, codes, keep = pack_args((7, 2.5, DataType(2, 32, 1)))
>>> [decode(values[i], codes[i], owned=True) for i in range(3)]
[7, 2.5, DataType('float32')]
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .c_abi import TVMByteArray
from .device import Device
from .dtype import DataType
from .errors import TVMError, TVMTypeError
from .function import PackedFunc
from .host_library import when_loaded
from .local_args import check_dltensor
from .object import Object, object_from_handle
from .type_index import TypeIndex

__all__ = [
    "Setter",
    "convert_one",
    "decode",
    "decode_owned",
    "find_setter",
    "on_tensor_type",
    "pack_args",
    "register_arg_setter",
    "set_dltensor_wrapper",
    "set_function_handles",
    "store_return",
    "tensor_type",
]

_I64 = ctypes.c_int64
_INT = ctypes.c_int

# setter(values: c_int64 array, index, value, keep: list[Any]) -> type index
Setter = Callable[[Any, int, Any, list[Any]], int]

# ----------------------------------------------------------------------------- Python -> C


def _set_none(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    values[i] = 0
    return TypeIndex.NONE


def _set_int(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    if not -(1 << 63) <= v < 1 << 63:  # ctypes would silently keep the low 64 bits
        raise OverflowError(f"integer {v} does not fit in int64")
    values[i] = v
    return TypeIndex.INT


def _set_bool(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    values[i] = 1 if v else 0
    return TypeIndex.BOOL


def _set_float(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    ctypes.c_double.from_buffer(values, 8 * i).value = v
    return TypeIndex.FLOAT


def _set_str(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    if "\0" in v:  # C would see only the text before the NUL
        raise UnicodeError(
            f"str with an embedded NUL cannot pass as a C string: {v!r}; pass it as bytes"
        )
    buf = ctypes.create_string_buffer(v.encode("utf-8"))
    keep.append(buf)
    values[i] = ctypes.addressof(buf)
    return TypeIndex.RAW_STR


def _set_bytes(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    data = ctypes.create_string_buffer(bytes(v), len(v))
    arr = TVMByteArray(ctypes.addressof(data), len(v))
    keep.append((data, arr))
    values[i] = ctypes.addressof(arr)
    return TypeIndex.BYTE_ARRAY_PTR


def _set_dtype(values: Any, i: int, v: DataType, keep: list[Any]) -> int:
    values[i] = v.code | (v.bits << 8) | (v.lanes << 16)
    return TypeIndex.DATA_TYPE


def _set_device(values: Any, i: int, v: Device, keep: list[Any]) -> int:
    values[i] = (v.device_type & 0xFFFFFFFF) | (v.device_id << 32)
    return TypeIndex.DEVICE


def _set_function(values: Any, i: int, v: PackedFunc, keep: list[Any]) -> int:
    node = _to_handle(v)
    keep.append(_NodeRef(node))
    values[i] = node
    return TypeIndex.FUNCTION


def _set_object(values: Any, i: int, v: Object, keep: list[Any]) -> int:
    values[i] = v.handle
    return v.type_index


def _set_pointer(values: Any, i: int, v: Any, keep: list[Any]) -> int:
    values[i] = v.value or 0
    return TypeIndex.OPAQUE_PTR


_ARG_SETTERS: dict[type, Setter] = {
    type(None): _set_none,
    int: _set_int,
    bool: _set_bool,
    float: _set_float,
    str: _set_str,
    bytes: _set_bytes,
    bytearray: _set_bytes,
    DataType: _set_dtype,
    Device: _set_device,
    ctypes.c_void_p: _set_pointer,
}
for _np_type in (
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
):  # _set_int refuses values outside int64
    _ARG_SETTERS[_np_type] = lambda values, i, v, keep: _set_int(values, i, int(v), keep)
for _np_float in (np.float16, np.float32, np.float64):
    _ARG_SETTERS[_np_float] = lambda values, i, v, keep: _set_float(values, i, float(v), keep)
_ARG_SETTERS[np.bool_] = lambda values, i, v, keep: _set_bool(values, i, bool(v), keep)

# Base classes tried, in order, for a type met for the first time.
_BASE_SETTERS: list[tuple[type, Setter]] = [
    (bool, _set_bool),
    (int, _set_int),
    (float, _set_float),
    (str, _set_str),
    (bytes, _set_bytes),
    (PackedFunc, _set_function),
    (Object, _set_object),
]


class _Installed:
    """Set from above and by the loaded library: the array class passed as a ``DLTensor*``,
    TVMFuncFree (releases call it with no Python frame) and the ``DLTensor*`` wrapper.
    """

    tensor_type: type | None = None
    func_free: Callable[[int], int] | None = None
    dltensor_wrapper: Callable[[int], Any] | None = None


_tensor_listeners: list[Callable[[], None]] = []


def register_arg_setter(cls: type, setter: Setter, is_tensor: bool = False) -> None:
    """Teach the C boundary a new argument type (used by the runtime for ``NDArray``).

    ``is_tensor`` marks the array class whose instances carry ``_dl_address`` (the address of
    their DLTensor), which the fast-call path then passes as type index 7 directly.
    """
    _ARG_SETTERS[cls] = setter
    _BASE_SETTERS.insert(0, (cls, setter))
    if is_tensor:
        _Installed.tensor_type = cls
        for listener in _tensor_listeners:
            listener()


def tensor_type() -> type | None:
    """The array class registered with ``is_tensor=True``, or None before the runtime loads."""
    return _Installed.tensor_type


def on_tensor_type(listener: Callable[[], None]) -> None:
    """Call ``listener()`` whenever :func:`register_arg_setter` registers a tensor class."""
    _tensor_listeners.append(listener)


def find_setter(cls: type) -> Setter:
    """The setter for ``cls``: its own, else its first registered base class's (remembered);
    raises ``TVMTypeError`` if there is none.
    """
    own = _ARG_SETTERS.get(cls)
    if own is not None:
        return own
    for base, setter in _BASE_SETTERS:
        if issubclass(cls, base):
            _ARG_SETTERS[cls] = setter
            return setter
    raise TVMTypeError(
        f"cannot pass a {cls.__module__}.{cls.__qualname__} to a packed function: supported "
        "are None, bool, int, float, str, bytes, DataType, Device, NDArray, PackedFunc, Module "
        "and registered objects"
    )


def pack_args(args: tuple[Any, ...], func: str = "") -> tuple[Any, Any, list[Any]]:
    """Arguments as C arrays (values, type indices) plus what must live through the call;
    a tensor of another process is refused, naming ``func`` and the argument.
    """
    n = len(args)
    values = (_I64 * n)()
    codes = (_INT * n)()
    keep: list[Any] = []
    setters = _ARG_SETTERS
    for i, arg in enumerate(args):
        setter = setters.get(type(arg)) or find_setter(type(arg))
        try:
            code = codes[i] = setter(values, i, arg, keep)
        except (OverflowError, UnicodeError) as err:
            raise TVMTypeError(f"argument {i} ({arg!r}) cannot be passed to C: {err}") from None
        if code == TypeIndex.DL_TENSOR_PTR:
            check_dltensor(func, i, arg, values[i])
    return values, codes, keep


def convert_one(arg: Any) -> tuple[int, int, Any]:
    """One argument as ``(type index, raw value, what must live through the call)`` (how the
    fast-call extension converts a value it has no direct conversion for).
    """
    values = (_I64 * 1)()
    keep: list[Any] = []
    setter = _ARG_SETTERS.get(type(arg)) or find_setter(type(arg))
    try:
        code = setter(values, 0, arg, keep)
    except (OverflowError, UnicodeError) as err:  # same error as pack_args
        raise TVMTypeError(f"argument {arg!r} cannot be passed to C: {err}") from None
    return code, values[0], keep


_tls = threading.local()


def store_return(ret: int, ret_code: int, value: Any, func: str = "") -> None:
    """Write a Python function's return value where C reads it (``TVMValue*`` ``ret``, type
    index ``ret_code``); what it points to stays alive until the thread's next return. A tensor
    of another process is refused (``func`` names the Python function).
    """
    values = (_I64 * 1).from_address(ret)
    keep: list[Any] = []
    code: int
    if isinstance(value, PackedFunc):
        values[0] = _to_handle(value)  # C owns this reference
        code = TypeIndex.FUNCTION
    else:
        setter = _ARG_SETTERS.get(type(value))
        if setter is None:
            try:
                setter = find_setter(type(value))
            except TVMTypeError as err:
                raise TVMTypeError(
                    f"a Python function returned a value C cannot receive: {err}"
                ) from None
        code = setter(values, 0, value, keep)
        if code == TypeIndex.DL_TENSOR_PTR:
            check_dltensor(func, None, value, values[0])
    keep.append(value)
    _tls.ret_keep = keep
    _INT.from_address(ret_code).value = code


class _NodeRef:
    """Releases a temporary function handle when the call that needed it is over."""

    __slots__ = ("node",)

    def __init__(self, node: int) -> None:
        self.node = node

    def __del__(self) -> None:
        if _Installed.func_free is not None:
            _Installed.func_free(self.node)


def _library_loaded(lib: ctypes.CDLL) -> None:
    _Installed.func_free = lib.TVMFuncFree


when_loaded(_library_loaded)


# ----------------------------------------------------------------------------- C -> Python


def _not_installed(*args: Any) -> Any:
    raise TVMError("function values cannot cross: pytvm.ffi.callback is not imported")


# How function values cross (installed by set_function_handles).
_to_handle: Callable[[PackedFunc], int] = _not_installed
_from_handle: Callable[[int, bool], PackedFunc | None] = _not_installed


def set_dltensor_wrapper(wrap: Callable[[int], Any]) -> None:
    """Install how a ``DLTensor*`` coming from C becomes a Python value (the runtime's NDArray)."""
    _Installed.dltensor_wrapper = wrap


def set_function_handles(
    to_handle: Callable[[PackedFunc], int],
    from_handle: Callable[[int, bool], PackedFunc | None],
) -> None:
    """Install how functions cross (``ffi.callback`` does, on import): ``to_handle(func)`` is a
    new handle for ``func``; ``from_handle(raw, owned)`` the function behind ``raw``, whose
    reference Python takes over if ``owned``.
    """
    global _to_handle, _from_handle
    _to_handle, _from_handle = to_handle, from_handle


def _get_float(raw: int) -> float:
    return ctypes.c_double.from_buffer(_I64(raw)).value


def _get_dtype(raw: int) -> DataType:
    return DataType(raw & 0xFF, (raw >> 8) & 0xFF, (raw >> 16) & 0xFFFF)


def _get_device(raw: int) -> Device:
    raw &= 0xFFFFFFFFFFFFFFFF
    device_id = raw >> 32
    return Device(raw & 0xFFFFFFFF, device_id - (1 << 32) if device_id >= 1 << 31 else device_id)


def _get_str(raw: int) -> str:
    return ctypes.string_at(raw).decode("utf-8") if raw else ""


def _get_bytes(raw: int) -> bytes:
    arr = TVMByteArray.from_address(raw)
    return ctypes.string_at(arr.data, arr.size) if arr.size else b""


def _get_dltensor(raw: int) -> Any:
    if _Installed.dltensor_wrapper is None:
        raise TVMError("a DLTensor came back from C but pytvm.runtime is not loaded")
    return _Installed.dltensor_wrapper(raw)


def decode(raw: int, code: int, owned: bool) -> Any:  # noqa: PLR0911 - one per type index
    """The Python value of a ``(TVMValue, type index)`` pair; a function handle's reference
    passes to Python if ``owned`` (a return value), else Python takes one of its own.
    """
    if code == TypeIndex.INT:
        return raw
    if code == TypeIndex.NONE:
        return None
    if code == TypeIndex.FLOAT:
        return _get_float(raw)
    if code == TypeIndex.BOOL:
        return raw != 0
    if code == TypeIndex.OPAQUE_PTR:
        return ctypes.c_void_p(raw & 0xFFFFFFFFFFFFFFFF) if raw else None
    if code == TypeIndex.DATA_TYPE:
        return _get_dtype(raw)
    if code == TypeIndex.DEVICE:
        return _get_device(raw)
    if code in (TypeIndex.DL_TENSOR_PTR, TypeIndex.TENSOR):
        return _get_dltensor(raw)
    if code == TypeIndex.RAW_STR:
        return _get_str(raw)
    if code == TypeIndex.BYTE_ARRAY_PTR:
        return _get_bytes(raw)
    if code == TypeIndex.FUNCTION:
        return _from_handle(raw, owned)
    if code >= TypeIndex.STATIC_OBJECT_BEGIN:
        return object_from_handle(raw, code)
    raise TVMTypeError(f"a value of type index {code} cannot come back from C")


def decode_owned(raw: int, code: int) -> Any:
    """:func:`decode` of a return value (the fast-call extension's decoder)."""
    return decode(raw, code, owned=True)
