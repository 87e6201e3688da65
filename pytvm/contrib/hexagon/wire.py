"""The request/reply format of IDL calls, shared by the board-side stub and the generated skel.

Wire format (all integers little-endian)::

    request  u32 size | u32 method_id | in-params in declaration order
    reply    u32 size | i32 status    | out-params in declaration order (only if status == 0)

``size`` counts the bytes after itself and never exceeds the skel's buffer (``max_message``).
``int32`` is an i32, ``uint32`` and ``handle`` a u32; ``bytes`` is ``u32 n`` then ``n`` bytes;
``string`` is ``u32 n`` then ``n`` bytes of UTF-8 whose last byte is the only NUL (so the skel
hands the implementation a C string in place). The skel answers requests it cannot take with a
reserved status (:data:`SKEL_STATUSES`) and keeps serving: a request over its buffer is read
and dropped, so the stream stays in step.

The board side is :class:`pytvm.contrib.hexagon.stub.Stub`; the device side is the C99 skel
that :mod:`pytvm.contrib.hexagon.skel_generator` writes.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "DIRECTIONS",
    "SCALAR_TYPES",
    "SKEL_MIN_BUFFER",
    "SKEL_STATUSES",
    "TYPES",
    "skel_status_name",
]

#: Parameter types of the IDL.
TYPES = ("int32", "uint32", "handle", "string", "bytes")
#: The types sent as one 32-bit word.
SCALAR_TYPES = frozenset({"int32", "uint32", "handle"})
#: Parameter directions of the IDL.
DIRECTIONS = ("in", "out")

#: Statuses the skel itself answers with (an implementation must not return them).
SKEL_STATUSES: dict[str, tuple[int, str]] = {
    "EMETHOD": (-1001, "unknown method id"),
    "ETOOBIG": (-1002, "request larger than the skel's buffer"),
    "EBADMSG": (-1003, "malformed request parameters"),
    "EIMPL": (-1004, "the implementation returned more out-bytes than their capacity"),
    "EREAD": (-1005, "read error or truncated request (serve loop result)"),
    "EWRITE": (-1006, "write error (serve loop result)"),
    "EARG": (-1007, "bad serve arguments (serve loop result)"),
}

#: Default largest message ``size`` (the skel buffer the device binary gives its skel).
DEFAULT_MAX_MESSAGE = 1 << 20
#: Smallest buffer the skel accepts.
SKEL_MIN_BUFFER = 64

_NAME_OF_STATUS = {value: name for name, (value, _) in SKEL_STATUSES.items()}


def skel_status_name(status: int) -> str | None:
    """The name (``"ETOOBIG"`` ...) of a status the skel answers itself; None for others."""
    return _NAME_OF_STATUS.get(status)
