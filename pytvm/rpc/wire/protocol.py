"""The RPC wire format: the code tables and the framed packets of every request and reply.

Nothing here touches a socket. Layouts are TVM 0.27's (``spec/rpc-protocol.md`` sections 2-5):
a packet is ``u64 body_len`` + body; the body starts with ``i32 code`` (:class:`RPCCode`) and
goes on with a packed sequence or a DLTensor descriptor. The values those carry, their encoding
and their bounds-checked decoding live in :mod:`pytvm.rpc.wire.values`; every public name of that
module is importable from here too.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Any

from ._c_codec import CODEC as _CODEC
from .base import PROTOCOL_VERSION, ProtocolError
from .error_paths import relative_paths
from .values import (
    _I32,
    _U64,
    DEFAULT_LIMITS,
    BytesObject,
    Handle,
    Limits,
    ObjectRef,
    Reader,
    StrObject,
    TensorDesc,
    _enc_int,
    _enc_str,
    decode_pseq,
    decode_tensor_desc,
    decode_value,
    encode_pseq,
    encode_tensor_desc,
    encode_value,
)

__all__ = [
    "DEFAULT_LIMITS",
    "SYSCALL_CODE_START",
    "BytesObject",
    "Handle",
    "Limits",
    "ObjectRef",
    "RPCCode",
    "Reader",
    "ServerStatus",
    "StrObject",
    "TensorDesc",
    "copy_overhead",
    "decode_code",
    "decode_copy_head",
    "decode_pseq",
    "decode_tensor_desc",
    "decode_value",
    "encode_call",
    "encode_call_return",
    "encode_copy_ack",
    "encode_copy_from_remote",
    "encode_copy_to_remote",
    "encode_exception",
    "encode_init_server",
    "encode_pseq",
    "encode_return",
    "encode_shutdown",
    "encode_syscall",
    "encode_tensor_desc",
    "encode_value",
    "packet",
]


class RPCCode(IntEnum):
    """The ``i32`` after a packet's length (spec section 4); codes >= 9 are syscalls."""

    NONE = 0
    SHUTDOWN = 1
    INIT_SERVER = 2
    CALL_FUNC = 3
    RETURN = 4
    EXCEPTION = 5
    COPY_FROM_REMOTE = 6
    COPY_TO_REMOTE = 7
    COPY_ACK = 8
    GET_GLOBAL_FUNC = 9
    FREE_HANDLE = 10
    DEV_SET_DEVICE = 11
    DEV_GET_ATTR = 12
    DEV_ALLOC_DATA = 13
    DEV_FREE_DATA = 14
    DEV_STREAM_SYNC = 15
    COPY_AMONG_REMOTE = 16
    DEV_ALLOC_DATA_WITH_SCOPE = 17
    DEV_CREATE_STREAM = 18
    DEV_FREE_STREAM = 19
    DEV_SET_STREAM = 20
    DEV_GET_CURRENT_STREAM = 21


SYSCALL_CODE_START = RPCCode.GET_GLOBAL_FUNC


class ServerStatus(IntEnum):
    """``RPCServerStatus``: why a server refused a request (spec section 4.1)."""

    SUCCESS = 0
    INVALID_TYPE_CODE_OBJECT = 1
    INVALID_TYPE_CODE_TENSOR = 2
    INVALID_DLTENSOR_FIELD_STRIDE = 3
    INVALID_DLTENSOR_FIELD_BYTE_OFFSET = 4
    UNKNOWN_TYPE_INDEX = 5
    UNKNOWN_RPC_CODE = 6
    RPC_CODE_NOT_SUPPORTED = 7
    UNKNOWN_RPC_SYSCALL = 8
    CHECK_ERROR = 9
    READ_ERROR = 10
    WRITE_ERROR = 11
    ALLOC_ERROR = 12


_LEN_CODE = struct.Struct("<Qi")
# Plain-int copies of the codes the per-call paths use (see values.py's _INT).
_CALL_FUNC = int(RPCCode.CALL_FUNC)
_RETURN = int(RPCCode.RETURN)


def packet(code: int, *parts: bytes) -> bytes:
    """A whole framed packet: ``u64 body_len``, ``i32 code``, then ``parts``."""
    body = b"".join(parts)
    return _LEN_CODE.pack(4 + len(body), code) + body


def encode_init_server(args: Any = (), version: str = PROTOCOL_VERSION) -> bytes:
    """kInitServer: protocol version + session-constructor arguments."""
    raw = version.encode()
    return packet(RPCCode.INIT_SERVER, _U64.pack(len(raw)), raw, encode_pseq(args))


def encode_call(handle: int, args: Any) -> bytes:
    """kCallFunc: function handle + arguments."""
    c = _CODEC.module
    if c is not None:
        out: bytes = c.encode_call(handle, args)
        return out
    return packet(_CALL_FUNC, _U64.pack(handle), encode_pseq(args))


def encode_return(values: Any) -> bytes:
    """KReturn with ``values`` as they are (syscall and init replies carry one value)."""
    c = _CODEC.module
    if c is not None:
        out: bytes = c.encode_return(values)
        return out
    return packet(_RETURN, encode_pseq(values))


def encode_call_return(type_tag: int, values: Any) -> bytes:
    """KReturn of a kCallFunc: the result's type index as an Int, then its wire values."""
    c = _CODEC.module
    if c is not None:
        out: bytes = c.encode_call_return(type_tag, values)
        return out
    return packet(
        _RETURN, _I32.pack(1 + len(values)), _enc_int(type_tag), *map(encode_value, values)
    )


def encode_exception(text: str) -> bytes:
    """kException: one RawStr holding the error text, this machine's paths made relative
    (see :mod:`pytvm.rpc.wire.error_paths`).
    """
    return packet(RPCCode.EXCEPTION, _I32.pack(1), _enc_str(relative_paths(text)))


def encode_syscall(code: int, args: Any) -> bytes:
    """A syscall (codes 9-21) with its argument sequence."""
    return packet(code, encode_pseq(args))


def copy_overhead(ndim: int) -> int:
    """Bytes of a copy packet besides its data (the client's chunking formula): 44 + 8*ndim."""
    return 44 + 8 * ndim


def encode_copy_to_remote(desc: TensorDesc, nbytes: int) -> bytes:
    """The framed head of a kCopyToRemote packet; ``nbytes`` raw data bytes must follow."""
    head = encode_tensor_desc(desc) + _U64.pack(nbytes)
    return _U64.pack(4 + len(head) + nbytes) + _I32.pack(RPCCode.COPY_TO_REMOTE) + head


def encode_copy_from_remote(desc: TensorDesc, nbytes: int) -> bytes:
    """kCopyFromRemote: which bytes to read (``desc.byte_offset`` onwards, ``nbytes`` long)."""
    return packet(RPCCode.COPY_FROM_REMOTE, encode_tensor_desc(desc), _U64.pack(nbytes))


def encode_copy_ack(nbytes: int) -> bytes:
    """The framed head of a kCopyAck reply; ``nbytes`` raw data bytes must follow."""
    return _U64.pack(4 + nbytes) + _I32.pack(RPCCode.COPY_ACK)


def encode_shutdown() -> bytes:
    """KShutdown (no reply)."""
    return packet(RPCCode.SHUTDOWN)


def decode_code(r: Reader) -> RPCCode:
    """The packet's code; ``ProtocolError`` for a number that is not an RPCCode."""
    code = r.i32("code")
    try:
        return RPCCode(code)
    except ValueError:
        raise ProtocolError(
            f"unknown RPC code {code} (status {ServerStatus.UNKNOWN_RPC_CODE.name})"
        ) from None


def decode_copy_head(r: Reader, what: str) -> tuple[TensorDesc, int]:
    """Descriptor and ``u64 nbytes`` of a copy request, checked against the descriptor."""
    desc = decode_tensor_desc(r, f"{what} descriptor")
    nbytes = r.u64(f"{what} nbytes")
    if nbytes > desc.nbytes:
        raise ProtocolError(
            f"{what} nbytes {nbytes} exceeds the {desc.nbytes} bytes of its tensor "
            f"{desc.shape} {desc.dtype}"
        )
    return desc, nbytes
