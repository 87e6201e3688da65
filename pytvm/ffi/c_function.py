"""``CFunction``: a packed C function called from Python, through the fast-call extension or ctypes.

When the fast-call extension (``src/runtime/fastcall.c``) builds here, a call is
``attrgetter -> partial -> C`` with no Python frame; it converts common values itself and the
rest through ``arg_convert``, so behaviour is identical to the ctypes path (``_fast_call`` None).

Every call path refuses a tensor whose memory lives in another process (``local_args``), and a
call is a ``C function`` span of ``pytvm.trace()`` while tracing is on (one flag test when off:
``_trace.ON`` here, a C copy of it kept in step by ``trace.on_switch`` in the extension).
"""

from __future__ import annotations

import ctypes
import functools
import operator
from collections.abc import Callable
from typing import Any

from . import libinfo
from . import trace as _trace
from .arg_convert import convert_one, decode, decode_owned, on_tensor_type, pack_args, tensor_type
from .c_abi import TVMPackedCFunc
from .elf_check import check_shared_object
from .function import PackedFunc
from .host_library import runtime_library, when_loaded
from .last_error import check_call, raise_last_error, take_error
from .local_args import raise_foreign_tensor
from .type_index import TypeIndex

__all__ = ["CALL_LAYER", "CFunction"]

_I64 = ctypes.c_int64
_INT = ctypes.c_int

#: The trace layer of a Python -> C packed call.
CALL_LAYER = "C function"

# The extension's ``invoke((faddr, resource, name), *args)``, or None: calls go through ctypes.
_fast_call: Callable[..., Any] | None = None


class _CallState:
    """What :func:`_library_loaded` keeps."""

    #: The fast-call extension module, or None.
    fast_module: Any = None
    #: The library's TVMFuncFree (a dying CFunction calls it with no Python frame).
    func_free: Callable[[int], int] | None = None


def _library_loaded(lib: ctypes.CDLL) -> None:
    """Keep the library's ``TVMFuncFree``; use the fast-call extension for Python -> C calls
    when it can be built here.
    """
    global _fast_call  # noqa: PLW0603 - set once; read per CFunction, and patched by tests
    _CallState.func_free = lib.TVMFuncFree
    path = libinfo.fastcall_extension_path()
    if path is None:
        return
    import importlib.machinery
    import importlib.util

    check_shared_object(path)
    loader = importlib.machinery.ExtensionFileLoader("_pytvm_fastcall", str(path))
    spec = importlib.util.spec_from_file_location("_pytvm_fastcall", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    module.configure(convert_one, decode_owned, raise_last_error, tensor_type())
    module.configure_call(raise_foreign_tensor, _begin_call, _end_call)
    _trace.on_switch(module.set_tracing)
    _CallState.fast_module = module
    _fast_call = module.invoke


def _tensor_type_changed() -> None:
    if _CallState.fast_module is not None:
        _CallState.fast_module.configure(convert_one, decode_owned, raise_last_error, tensor_type())


when_loaded(_library_loaded)
on_tensor_type(_tensor_type_changed)


def _begin_call(name: str | None, nargs: int) -> _trace.TraceSpan:
    """Open the span of a traced Python -> C call (only called while tracing is on)."""
    return _trace.begin(CALL_LAYER, name or "<anonymous>", args=nargs)


def _end_call(span: _trace.TraceSpan, rc: int) -> None:
    if rc == 0:
        _trace.end(span)
    else:
        _trace.end(span, failed=True)


class CFunction(PackedFunc):
    """A packed function implemented in C: a ``TVMPackedCFunc`` plus its resource handle.

    ``node`` is a function handle this object owns a reference to (released when it dies);
    ``owner`` is anything that must outlive the function (the loaded library).
    """

    __slots__ = ("_faddr", "_fptr", "_invoke", "_node", "_owner", "_resource")

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
        values, codes, _keep = pack_args(args, self.name) if args else (None, None, [])
        span = _begin_call(self.name, len(args)) if _trace.ON else None
        rc = self._fptr(
            values, codes, len(args), ctypes.byref(ret), ctypes.byref(ret_code), self._resource
        )
        if span is not None:
            _end_call(span, rc)
        if rc != 0:
            raise take_error()
        code = ret_code.value
        return ret.value if code == TypeIndex.INT else decode(ret.value, code, owned=True)

    def time_call(self, args: tuple[Any, ...], number: int) -> float:
        """Seconds for ``number`` back-to-back calls timed inside C (no Python per call)."""
        lib = runtime_library()
        values, codes, _keep = pack_args(args, self.name) if args else (None, None, [])
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
        func_free = _CallState.func_free
        if self._node and func_free is not None:
            func_free(self._node)
