"""Error kinds that keep their Python class when they cross the C boundary or the RPC wire.

An error travels as text: an optional Python-style traceback block, then ``Kind: message``.
:func:`format_error` writes that text for an exception and :func:`parse_error` turns it back
into an exception whose class is the one registered for ``Kind`` (a subclass of both
:class:`TVMError` and the matching built-in), so ``except ValueError`` still works after a hop.
"""

from __future__ import annotations

import builtins
import re
import traceback
from collections.abc import Callable
from typing import Any, TypeVar, overload

__all__ = [
    "DiagnosticError",
    "InternalError",
    "OpAttributeInvalid",
    "OpAttributeRequired",
    "OpAttributeUnImplemented",
    "OpError",
    "OpNotImplemented",
    "RPCError",
    "RPCSessionBrokenError",
    "RPCSessionTimeoutError",
    "SharedObjectError",
    "TVMAttributeError",
    "TVMError",
    "TVMIndexError",
    "TVMKeyError",
    "TVMMemoryError",
    "TVMOSError",
    "TVMPermissionError",
    "TVMTypeError",
    "TVMValueError",
    "error_class",
    "format_error",
    "parse_error",
    "register_error",
]


class TVMError(RuntimeError):
    """Base class of every pytvm error; its kind name on the wire is ``RuntimeError``.

    ``traceback`` holds the traceback text of the side that raised it, when it came from
    another language or process (empty otherwise).
    """

    traceback: str = ""

    def __str__(self) -> str:
        # KeyError quotes its argument; keep the message readable for every kind.
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class TVMValueError(TVMError, ValueError):
    """A bad value (wrong shape, dtype string, size ...)."""


class TVMTypeError(TVMError, TypeError):
    """A value of the wrong type."""


class TVMAttributeError(TVMError, AttributeError):
    """A missing attribute or function."""


class TVMIndexError(TVMError, IndexError):
    """An index out of range."""


class TVMKeyError(TVMError, KeyError):
    """A missing key."""


class TVMMemoryError(TVMError, MemoryError):
    """An allocation that failed."""


class TVMOSError(TVMError, OSError):
    """An operating-system level failure (file, socket, process)."""


class TVMPermissionError(TVMOSError, PermissionError):
    """A file or folder pytvm refuses to use: another user could have changed it."""


class SharedObjectError(TVMValueError, OSError):
    """A file that cannot be loaded as a shared object on this host: damaged (truncated,
    zeroed), not a shared object at all, or built for another machine. A bad value, and an
    ``OSError`` as the loader's own refusals are (as ``io.UnsupportedOperation`` is both).
    """


# TVM 0.27's ``tvm.error`` kinds; ``pytvm.error`` exports them under TVM's names.


class InternalError(TVMError):
    """A broken internal invariant (a bug in pytvm or in the peer), not a bad input."""


class RPCError(TVMError):
    """A failure reported by (or while talking to) an RPC peer."""


class RPCSessionTimeoutError(RPCError, TimeoutError):
    """The server ended the session because its ``session_timeout`` ran out."""


class RPCSessionBrokenError(RPCError, ConnectionError):
    """A request was interrupted halfway (Ctrl-C, a timeout, a failing channel), so the byte
    stream of the session is out of step; every later request raises this at once.
    """


class OpError(TVMError):
    """Base of the errors a frontend raises for an operator of the model it imports."""


class OpNotImplemented(OpError, NotImplementedError):
    """An operator the frontend does not support."""


class OpAttributeRequired(OpError, AttributeError):
    """A required attribute of an operator is missing."""


class OpAttributeInvalid(OpError, AttributeError):
    """An attribute of an operator has a value the frontend cannot take."""


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An attribute of an operator that the frontend does not support."""


class DiagnosticError(TVMError):
    """A pass reported error diagnostics."""


_KIND_TO_CLASS: dict[str, type[TVMError]] = {}
_CLASS_TO_KIND: dict[type, str] = {}


_E = TypeVar("_E", bound=type[TVMError])


@overload
def register_error(kind: _E) -> _E: ...
@overload
def register_error(kind: str | None = None) -> Callable[[_E], _E]: ...


def register_error(kind: str | type[TVMError] | None = None) -> Any:
    """Register an error class under a kind name (default: the class name).

    Used as ``@register_error("Kind")``, ``@register_error()`` or, as TVM's, ``@register_error``.

    Examples
    --------
    >>> @register_error("MyDeviceError")
    ... class MyDeviceError(TVMError):
    ...     pass
    >>> type(parse_error("MyDeviceError: bad")).__name__
    'MyDeviceError'
    >>> @register_error
    ... class MyLinkError(TVMError):
    ...     pass
    >>> type(parse_error("MyLinkError: down")).__name__
    'MyLinkError'
    """

    def register(cls: _E) -> _E:
        name = kind if isinstance(kind, str) else cls.__name__
        _KIND_TO_CLASS[name] = cls
        _CLASS_TO_KIND[cls] = name
        return cls

    if isinstance(kind, type):
        return register(kind)
    return register


for _kind, _cls in (
    ("RuntimeError", TVMError),
    ("TVMError", TVMError),
    ("ValueError", TVMValueError),
    ("TypeError", TVMTypeError),
    ("AttributeError", TVMAttributeError),
    ("IndexError", TVMIndexError),
    ("KeyError", TVMKeyError),
    ("MemoryError", TVMMemoryError),
    ("OSError", TVMOSError),
    ("InternalError", InternalError),
    ("RPCError", RPCError),
    ("RPCSessionTimeoutError", RPCSessionTimeoutError),
    ("RPCSessionBrokenError", RPCSessionBrokenError),
    ("OpError", OpError),
    ("OpNotImplemented", OpNotImplemented),
    ("OpAttributeRequired", OpAttributeRequired),
    ("OpAttributeInvalid", OpAttributeInvalid),
    ("OpAttributeUnImplemented", OpAttributeUnImplemented),
    ("DiagnosticError", DiagnosticError),
):
    _KIND_TO_CLASS[_kind] = _cls
    _KIND_TO_CLASS[_cls.__name__] = _cls
    _CLASS_TO_KIND.setdefault(_cls, _kind)


def error_class(kind: str) -> type[TVMError]:
    """The class registered for ``kind``; :class:`TVMError` for unknown kinds."""
    return _KIND_TO_CLASS.get(kind, TVMError)


def _kind_of(exc: BaseException) -> str:
    """The wire kind of an exception: the first registered or built-in class name in its MRO."""
    for klass in type(exc).__mro__:
        kind = _CLASS_TO_KIND.get(klass)
        if kind is not None:
            return kind
        if klass.__module__ == "builtins" and klass not in (Exception, BaseException):
            return klass.__name__
    return "RuntimeError"


def _message_of(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return str(exc.args[0])
    return str(exc)


def format_error(exc: BaseException, with_traceback: bool = True) -> str:
    """The text an exception travels as: traceback block (optional) then ``Kind: message``."""
    head = ""
    if with_traceback:
        if exc.__traceback__ is not None:
            frames = "".join(traceback.format_tb(exc.__traceback__))
            head = "Traceback (most recent call last):\n" + frames
        inherited = getattr(exc, "traceback", "")
        if inherited:
            head = inherited + ("" if inherited.endswith("\n") else "\n") + head
    return f"{head}{_kind_of(exc)}: {_message_of(exc)}"


_KIND_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*): ", re.ASCII)


def _registered_base_of_builtin(kind: str) -> type[TVMError]:
    """For an unregistered built-in kind (``FileNotFoundError``), the class registered for its
    nearest base (``OSError``), so ``except OSError`` still catches it after a hop.
    """
    builtin = getattr(builtins, kind, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        for klass in builtin.__mro__[1:]:
            if klass.__name__ in _KIND_TO_CLASS:
                return _KIND_TO_CLASS[klass.__name__]
    return TVMError


def parse_error(text: str, context: str = "") -> TVMError:
    """Rebuild an exception from text written by :func:`format_error` (or a C caller).

    ``context`` (e.g. ``"in remote[0]"``) is prefixed to the message so the user sees where the
    error happened. Text with no ``Kind:`` prefix becomes a plain :class:`TVMError`.
    """
    lines = text.split("\n")
    start = 0
    # Skip any number of stacked traceback blocks: a header line, then indented frame lines.
    while start < len(lines) and lines[start].startswith("Traceback (most recent call last)"):
        start += 1
        while start < len(lines) and (lines[start].startswith(" ") or not lines[start]):
            start += 1
    trace = "\n".join(lines[:start])
    body = "\n".join(lines[start:])
    match = _KIND_LINE.match(body)
    cls: type[TVMError] = TVMError
    if match and match.group(1).rsplit(".", 1)[-1] in _KIND_TO_CLASS:
        cls = _KIND_TO_CLASS[match.group(1).rsplit(".", 1)[-1]]
        body = body[match.end() :]
    elif match:  # keep the whole text, so the exact kind name still shows
        cls = _registered_base_of_builtin(match.group(1))
    message = f"{context}: {body}" if context else body
    err = cls(message)
    err.traceback = trace
    if trace and hasattr(err, "add_note"):
        err.add_note(trace.rstrip("\n"))
    return err
