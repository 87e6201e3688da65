"""Errors across the C boundary: the thread's last error, and the Python exception behind it.

A Python function called from C that raises records the exception here (:func:`set_pending`) and
returns -1; C passes the text on. When the non-zero return reaches Python again on the same
thread with the text unchanged, :func:`take_error` gives back the original exception object;
otherwise it parses the text into the error class its ``Kind:`` prefix names.

Examples
--------
>>> from pytvm.ffi.errors import TVMValueError
>>> set_pending(TVMValueError("bad shape (2, 3)"))
-1
>>> err = take_error()
>>> type(err).__name__, str(err)
('TVMValueError', 'bad shape (2, 3)')
"""

from __future__ import annotations

import threading

from .errors import format_error, parse_error
from .host_library import runtime_library

__all__ = ["check_call", "raise_last_error", "set_pending", "take_error"]

_tls = threading.local()


def check_call(ret: int) -> None:
    """Raise the pending error of the calling thread if a runtime API call returned non-zero."""
    if ret != 0:
        raise take_error()


def take_error() -> BaseException:
    """The error behind a non-zero return: the original Python exception if a callback raised
    it on this thread and C passed its message through unchanged, else one parsed from text.
    """
    text = (runtime_library().TVMGetLastError() or b"").decode("utf-8", "replace")
    pending: tuple[BaseException, str] | None = getattr(_tls, "pending", None)
    _tls.pending = None
    if pending is not None and pending[1] == text:
        return pending[0]
    return parse_error(text)


def raise_last_error() -> None:
    """Raise :func:`take_error` (the fast-call extension's way to raise after a failed call)."""
    raise take_error()


def set_pending(exc: BaseException) -> int:
    """Record a Python exception as this thread's last error and return C's failure code."""
    text = format_error(exc)
    _tls.pending = (exc, text)
    runtime_library().TVMAPISetLastError(text.encode("utf-8", "replace"))
    return -1
