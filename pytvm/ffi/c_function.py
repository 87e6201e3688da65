"""The C boundary: packed C functions called from Python, Python functions called from C.

Values cross as ``(TVMValue, type index)`` pairs with tvm-ffi's numbering. Conversion is a
lookup on the exact Python type (``_ARG_SETTERS``), filled for subclasses on first sight.
The host runtime library (built from the package's C sources) implements the C runtime API;
registry and module lookups from C come back here through hooks.

Every call path refuses a tensor whose memory lives in another process (``local_args``), and a
call is a ``C function`` span of ``pytvm.trace()`` while tracing is on (one flag test when off:
``_trace.ON`` here, a C copy of it kept in step by ``trace.on_switch`` in the extension).
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import operator
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from . import libinfo, registry
from . import trace as _trace
from .c_abi import TVMByteArray, TVMPackedCFunc, TVMPackedCFuncFinalizer
from .device import Device
from .dtype import DataType
from .errors import TVMError, TVMTypeError, format_error, parse_error
from .function import PackedFunc
from .local_args import check_dltensor, raise_foreign_tensor
from .object import Object, object_from_handle
from .type_index import TypeIndex

__all__ = [
    "CFunction",
    "runtime_library",
    "register_arg_setter",
    "set_dltensor_wrapper",
    "set_workspace_allocator",
    "check_call",
]

_I64 = ctypes.c_int64
_INT = ctypes.c_int

# ----------------------------------------------------------------------------- the library

_lib: ctypes.CDLL | None = None
_lib_lock = threading.Lock()
# The extension's ``invoke((faddr, resource, name), *args)``, or None: calls go through ctypes.
_fast_call: Callable[..., Any] | None = None
_fast_module: Any = None

#: The trace layer of a Python -> C packed call.
CALL_LAYER = "C function"


def runtime_library() -> ctypes.CDLL:
    """The host runtime library, loaded globally (so kernels resolve its symbols) with hooks set."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is None:
            lib = ctypes.CDLL(str(libinfo.runtime_library_path()), mode=ctypes.RTLD_GLOBAL)
            _declare(lib)
            lib.PyTVMSetHooks(ctypes.byref(_hooks))
            _lib = lib
            _load_fastcall()
    return _lib


def _load_fastcall() -> None:
    """Use the fast-call extension for Python -> C calls when it can be built here."""
    global _fast_call, _fast_module
    path = libinfo.fastcall_extension_path()
    if path is None:
        return
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("_pytvm_fastcall", str(path))
    spec = importlib.util.spec_from_file_location("_pytvm_fastcall", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    module.configure(_fast_convert, _fast_decode, _raise_pending, _tensor_type)
    module.configure_call(raise_foreign_tensor, _begin_call, _end_call)
    _trace.on_switch(module.set_tracing)
    _fast_module = module
    _fast_call = module.invoke


def _begin_call(name: str | None, nargs: int) -> _trace.Span:
    """Open the span of a traced Python -> C call (only called while tracing is on)."""
    return _trace.begin(CALL_LAYER, name or "<anonymous>", args=nargs)


def _end_call(span: _trace.Span, rc: int) -> None:
    if rc == 0:
        _trace.end(span)
    else:
        _trace.end(span, failed=True)


def _fast_convert(arg: Any) -> tuple[int, int, Any]:
    values = (_I64 * 1)()
    keep: list[Any] = []
    setter = _ARG_SETTERS.get(type(arg)) or _find_setter(type(arg))
    try:
        code = setter(values, 0, arg, keep)
    except (OverflowError, UnicodeError) as err:  # same error as _pack_args
        raise TVMTypeError(f"argument {arg!r} cannot be passed to C: {err}") from None
    return code, values[0], keep


def _fast_decode(raw: int, code: int) -> Any:
    return _decode(raw, code, owned=True)


def _raise_pending() -> None:
    raise _take_error()


# Runtime API functions the host library exports under private names (see c_runtime_api.h).
_PRIVATE_API = (
    "TVMAPISetLastError",
    "TVMGetLastError",
    "TVMFuncCreateFromCFunc",
    "TVMFuncFree",
    "TVMFuncRetain",
    "TVMFuncCall",
    "TVMFuncGetGlobal",
)


def _declare(lib: ctypes.CDLL) -> None:
    vp, i = ctypes.c_void_p, ctypes.c_int
    for name in _PRIVATE_API:
        setattr(lib, name, lib[f"pytvm_{name}"])
    lib.TVMGetLastError.restype = ctypes.c_char_p
    lib.TVMAPISetLastError.argtypes = [ctypes.c_char_p]
    lib.TVMFuncCreateFromCFunc.argtypes = [vp, vp, vp, ctypes.POINTER(vp)]
    lib.TVMFuncFree.argtypes = [vp]
    lib.TVMFuncRetain.argtypes = [vp]
    lib.TVMFuncCall.argtypes = [vp, vp, vp, i, vp, vp]
    lib.PyTVMFuncGetCFunc.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
    lib.PyTVMTimeCall.argtypes = [vp, vp, vp, vp, i, i, ctypes.POINTER(ctypes.c_double)]
    lib.PyTVMSetNumThreads.argtypes = [i]


def check_call(ret: int) -> None:
    """Raise the pending error of the calling thread if a runtime API call returned non-zero."""
    if ret != 0:
        raise _take_error()


_tls = threading.local()


def _take_error() -> BaseException:
    """The error behind a non-zero return: the original Python exception if a callback raised
    it on this thread and C passed its message through unchanged, else one parsed from text."""
    assert _lib is not None
    text = (_lib.TVMGetLastError() or b"").decode("utf-8", "replace")
    pending: tuple[BaseException, str] | None = getattr(_tls, "pending", None)
    _tls.pending = None
    if pending is not None and pending[1] == text:
        return pending[0]
    return parse_error(text)


# ----------------------------------------------------------------------------- Python -> C

# setter(values: c_int64 array, index, value, keep: list[Any]) -> type index
Setter = Callable[[Any, int, Any, list[Any]], int]


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
    node = _new_node(v)
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


_tensor_type: Any = None


def register_arg_setter(cls: type, setter: Setter, is_tensor: bool = False) -> None:
    """Teach the C boundary a new argument type (used by the runtime for ``NDArray``).

    ``is_tensor`` marks the array class whose instances carry ``_dl_address`` (the address of
    their DLTensor), which the fast-call path then passes as type index 7 directly.
    """
    global _tensor_type
    _ARG_SETTERS[cls] = setter
    _BASE_SETTERS.insert(0, (cls, setter))
    if is_tensor:
        _tensor_type = cls
        if _fast_module is not None:
            _fast_module.configure(_fast_convert, _fast_decode, _raise_pending, cls)


def _find_setter(cls: type) -> Setter:
    for base, setter in _BASE_SETTERS:
        if issubclass(cls, base):
            _ARG_SETTERS[cls] = setter
            return setter
    raise TVMTypeError(
        f"cannot pass a {cls.__module__}.{cls.__qualname__} to a packed function: supported "
        "are None, bool, int, float, str, bytes, DataType, Device, NDArray, PackedFunc, Module "
        "and registered objects"
    )


def _pack_args(args: tuple[Any, ...], func: str = "") -> tuple[Any, Any, list[Any]]:
    """Arguments as C arrays (values, type indices) plus what must live through the call;
    a tensor of another process is refused, naming ``func`` and the argument."""
    n = len(args)
    values = (_I64 * n)()
    codes = (_INT * n)()
    keep: list[Any] = []
    setters = _ARG_SETTERS
    for i, arg in enumerate(args):
        setter = setters.get(type(arg)) or _find_setter(type(arg))
        try:
            code = codes[i] = setter(values, i, arg, keep)
        except (OverflowError, UnicodeError) as err:
            raise TVMTypeError(f"argument {i} ({arg!r}) cannot be passed to C: {err}") from None
        if code == TypeIndex.DL_TENSOR_PTR:
            check_dltensor(func, i, arg, values[i])
    return values, codes, keep


class _NodeRef:
    """Releases a temporary function handle when the call that needed it is over."""

    __slots__ = ("node",)

    def __init__(self, node: int) -> None:
        self.node = node

    def __del__(self) -> None:
        if _lib is not None:
            _lib.TVMFuncFree(self.node)


# ----------------------------------------------------------------------------- C -> Python

_dltensor_wrapper: Callable[[int], Any] | None = None


def set_dltensor_wrapper(wrap: Callable[[int], Any]) -> None:
    """Install how a ``DLTensor*`` coming from C becomes a Python value (the runtime's NDArray)."""
    global _dltensor_wrapper
    _dltensor_wrapper = wrap


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
    if _dltensor_wrapper is None:
        raise TVMError("a DLTensor came back from C but pytvm.runtime is not loaded")
    return _dltensor_wrapper(raw)


def _get_function_owned(raw: int) -> PackedFunc | None:
    """A function handle whose reference now belongs to Python."""
    if not raw:
        return None
    assert _lib is not None
    func, resource = ctypes.c_void_p(), ctypes.c_void_p()
    check_call(_lib.PyTVMFuncGetCFunc(raw, ctypes.byref(func), ctypes.byref(resource)))
    if func.value == _TRAMPOLINE_ADDR:
        python_func = _CALLBACKS[resource.value or 0]  # the Python function we handed out
        _lib.TVMFuncFree(raw)
        return python_func
    return CFunction(func.value or 0, resource.value or 0, node=raw)


def _get_function_borrowed(raw: int) -> PackedFunc | None:
    if raw:
        assert _lib is not None
        _lib.TVMFuncRetain(raw)
    return _get_function_owned(raw)


def _decode(raw: int, code: int, owned: bool) -> Any:
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
        return _get_function_owned(raw) if owned else _get_function_borrowed(raw)
    if code >= TypeIndex.STATIC_OBJECT_BEGIN:
        return object_from_handle(raw, code)
    raise TVMTypeError(f"a value of type index {code} cannot come back from C")


# ----------------------------------------------------------------------------- C-backed functions


class CFunction(PackedFunc):
    """A packed function implemented in C: a ``TVMPackedCFunc`` plus its resource handle.

    ``node`` is a function handle this object owns a reference to (released when it dies);
    ``owner`` is anything that must outlive the function (the loaded library).
    """

    __slots__ = ("_fptr", "_faddr", "_resource", "_node", "_owner", "_invoke")

    def __init__(
        self, faddr: int, resource: int = 0, node: int = 0, owner: Any = None, name: str = ""
    ) -> None:
        runtime_library()
        self.name = name
        self._faddr = faddr
        self._fptr = TVMPackedCFunc(faddr)
        self._resource = resource
        self._node = node
        self._owner = owner
        # With the extension, a call is attrgetter -> partial -> C: no Python frame per call.
        self._invoke = (
            functools.partial(_fast_call, (faddr, resource, name))
            if _fast_call is not None
            else self._call_ctypes
        )

    __call__ = property(operator.attrgetter("_invoke"))

    def _call_ctypes(self, *args: Any) -> Any:
        ret = _I64()
        ret_code = _INT()
        values, codes, keep = _pack_args(args, self.name) if args else (None, None, [])
        span = _begin_call(self.name, len(args)) if _trace.ON else None
        rc = self._fptr(
            values, codes, len(args), ctypes.byref(ret), ctypes.byref(ret_code), self._resource
        )
        if span is not None:
            _end_call(span, rc)
        if rc != 0:
            raise _take_error()
        code = ret_code.value
        return ret.value if code == TypeIndex.INT else _decode(ret.value, code, owned=True)

    def time_call(self, args: tuple[Any, ...], number: int) -> float:
        """Seconds for ``number`` back-to-back calls timed inside C (no Python per call)."""
        lib = runtime_library()
        values, codes, keep = _pack_args(args, self.name) if args else (None, None, [])
        seconds = ctypes.c_double()
        check_call(
            lib.PyTVMTimeCall(
                self._faddr, self._resource, values, codes, len(args), number, ctypes.byref(seconds)
            )
        )
        return seconds.value

    def c_handle(self) -> int:
        """A new function handle for this function (one reference owned by the caller)."""
        if self._node:
            runtime_library().TVMFuncRetain(self._node)
            return self._node
        out = ctypes.c_void_p()
        check_call(
            runtime_library().TVMFuncCreateFromCFunc(
                self._faddr, self._resource, None, ctypes.byref(out)
            )
        )
        return out.value or 0

    def __del__(self) -> None:
        if self._node and _lib is not None:
            _lib.TVMFuncFree(self._node)


# ----------------------------------------------------------------------------- Python -> handles

_CALLBACKS: dict[int, PackedFunc] = {}
_callback_keys = itertools.count(1)


def _new_node(func: PackedFunc) -> int:
    """A function handle (one reference) for any PackedFunc."""
    if isinstance(func, CFunction):
        return func.c_handle()
    lib = runtime_library()
    key = next(_callback_keys)
    _CALLBACKS[key] = func
    out = ctypes.c_void_p()
    check_call(
        lib.TVMFuncCreateFromCFunc(_TRAMPOLINE_ADDR, key, _FINALIZER_ADDR, ctypes.byref(out))
    )
    return out.value or 0


def _release_callback(resource: int | None) -> None:
    _CALLBACKS.pop(resource or 0, None)


def _store_return(ret: int, ret_code: int, value: Any, func: str = "") -> None:
    """Write a Python return value for C; what it points to stays alive until the next return.
    A tensor of another process is refused (``func`` names the Python function)."""
    values = (_I64 * 1).from_address(ret)
    keep: list[Any] = []
    code: int
    if isinstance(value, PackedFunc):
        values[0] = _new_node(value)  # C owns this reference
        code = TypeIndex.FUNCTION
    else:
        setter = _ARG_SETTERS.get(type(value))
        if setter is None:
            try:
                setter = _find_setter(type(value))
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


def _set_pending(exc: BaseException) -> int:
    """Record a Python exception as this thread's last error and return C's failure code."""
    text = format_error(exc)
    _tls.pending = (exc, text)
    runtime_library().TVMAPISetLastError(text.encode("utf-8", "replace"))
    return -1


def _trampoline(
    args: int, codes: int, num_args: int, ret: int, ret_code: int, resource: int
) -> int:
    """Entry point of every Python function called from C."""
    try:
        func = _CALLBACKS[resource or 0]
        if num_args:
            raw = (_I64 * num_args).from_address(args)
            tcodes = (_INT * num_args).from_address(codes)
            py_args = [_decode(raw[i], tcodes[i], owned=False) for i in range(num_args)]
        else:
            py_args = []
        _store_return(ret, ret_code, func(*py_args), func.name)
        return 0
    except BaseException as exc:  # noqa: BLE001 - every error must reach C as a return code
        return _set_pending(exc)


_TRAMPOLINE = TVMPackedCFunc(_trampoline)
_TRAMPOLINE_ADDR = ctypes.cast(_TRAMPOLINE, ctypes.c_void_p).value
_FINALIZER = TVMPackedCFuncFinalizer(_release_callback)
_FINALIZER_ADDR = ctypes.cast(_FINALIZER, ctypes.c_void_p).value


# ----------------------------------------------------------------------------- hooks from C


def _guard(func: Callable[..., int]) -> Callable[..., int]:
    def guarded(*args: Any) -> int:
        try:
            return func(*args)
        except BaseException as exc:  # noqa: BLE001
            return _set_pending(exc)

    return guarded


def _hook_get_global(name: bytes, out: Any) -> int:
    func = registry.get_global_func(name.decode("utf-8"), allow_missing=True)
    out[0] = _new_node(func) if func is not None else None
    return 0


def _hook_register_global(name: bytes, handle: int, override: int) -> int:
    func = _get_function_borrowed(handle)
    assert func is not None
    registry.register_packed(name.decode("utf-8"), func, override=bool(override))
    return 0


def _hook_mod_get_function(mod: int, name: bytes, query_imports: int, out: Any) -> int:
    if not mod:  # a kernel built without a module context: only globals are visible
        out[0] = None
        return 0
    module: Any = object_from_handle(mod, TypeIndex.MODULE)  # a runtime Module (a higher layer)
    func = module.get_function(
        name.decode("utf-8"), query_imports=bool(query_imports), allow_missing=True
    )
    out[0] = _new_node(func) if func is not None else None
    return 0


_workspace_alloc: Callable[[Device, int, DataType], int] | None = None
_workspace_free: Callable[[Device, int], None] | None = None


def set_workspace_allocator(
    alloc: Callable[[Device, int, DataType], int], free: Callable[[Device, int], None]
) -> None:
    """Install how C kernels get workspace on non-CPU devices (the runtime's device APIs)."""
    global _workspace_alloc, _workspace_free
    _workspace_alloc, _workspace_free = alloc, free


def _hook_alloc_workspace(dev_type: int, dev_id: int, nbytes: int, code: int, bits: int) -> int:
    try:
        if _workspace_alloc is None:
            raise TVMError("no workspace allocator: pytvm.runtime is not loaded")
        return _workspace_alloc(Device(dev_type, dev_id), nbytes, DataType(code, bits, 1))
    except BaseException as exc:  # noqa: BLE001
        _set_pending(exc)
        return 0


def _hook_free_workspace(dev_type: int, dev_id: int, ptr: int) -> int:
    if _workspace_free is None:
        raise TVMError("no workspace allocator: pytvm.runtime is not loaded")
    _workspace_free(Device(dev_type, dev_id), ptr or 0)
    return 0


_VP = ctypes.c_void_p
_GET_GLOBAL = ctypes.CFUNCTYPE(_INT, ctypes.c_char_p, ctypes.POINTER(_VP))
_REGISTER_GLOBAL = ctypes.CFUNCTYPE(_INT, ctypes.c_char_p, _VP, _INT)
_MOD_GET_FUNCTION = ctypes.CFUNCTYPE(_INT, _VP, ctypes.c_char_p, _INT, ctypes.POINTER(_VP))
_ALLOC_WORKSPACE = ctypes.CFUNCTYPE(_VP, _INT, _INT, ctypes.c_uint64, _INT, _INT)
_FREE_WORKSPACE = ctypes.CFUNCTYPE(_INT, _INT, _INT, _VP)


class _Hooks(ctypes.Structure):
    _fields_ = [
        ("get_global", _GET_GLOBAL),
        ("register_global", _REGISTER_GLOBAL),
        ("mod_get_function", _MOD_GET_FUNCTION),
        ("alloc_workspace", _ALLOC_WORKSPACE),
        ("free_workspace", _FREE_WORKSPACE),
    ]


_hooks = _Hooks(
    _GET_GLOBAL(_guard(_hook_get_global)),
    _REGISTER_GLOBAL(_guard(_hook_register_global)),
    _MOD_GET_FUNCTION(_guard(_hook_mod_get_function)),
    _ALLOC_WORKSPACE(_hook_alloc_workspace),
    _FREE_WORKSPACE(_guard(_hook_free_workspace)),
)
