"""Whole RPC messages as records: decode a packet body into one, encode one into a packet.

Built on :mod:`pytvm.rpc.wire.protocol` (codes, values, descriptors), which does not import this
module; the endpoint streams large copies itself, everything else can go through
:func:`decode_message` / :func:`encode_message`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import ProtocolError
from .protocol import (
    DEFAULT_LIMITS,
    SYSCALL_CODE_START,
    Limits,
    Reader,
    RPCCode,
    TensorDesc,
    decode_code,
    decode_copy_head,
    decode_pseq,
    encode_call,
    encode_copy_ack,
    encode_copy_from_remote,
    encode_copy_to_remote,
    encode_exception,
    encode_init_server,
    encode_return,
    encode_shutdown,
    encode_syscall,
)

__all__: list[str] = [
    "CallFunc",
    "CopyAck",
    "CopyFromRemote",
    "CopyToRemote",
    "ExceptionMsg",
    "InitServer",
    "Message",
    "Return",
    "Shutdown",
    "Syscall",
    "decode_body",
    "decode_copy_to_remote_head",
    "decode_message",
    "encode_message",
]


@dataclass(frozen=True, slots=True)
class InitServer:
    """kInitServer: protocol version and session-constructor arguments."""

    version: str
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class CallFunc:
    """kCallFunc: function handle and arguments."""

    handle: int
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Return:
    """kReturn: the reply values (a kCallFunc reply starts with the result's type index)."""

    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ExceptionMsg:
    """kException: the error text of the peer."""

    text: str


@dataclass(frozen=True, slots=True)
class CopyToRemote:
    """kCopyToRemote: destination descriptor and the bytes to write."""

    desc: TensorDesc
    data: bytes


@dataclass(frozen=True, slots=True)
class CopyFromRemote:
    """kCopyFromRemote: source descriptor and how many bytes to read."""

    desc: TensorDesc
    nbytes: int


@dataclass(frozen=True, slots=True)
class CopyAck:
    """kCopyAck: the bytes read by a kCopyFromRemote."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Syscall:
    """A syscall (codes 9-21) and its arguments."""

    code: RPCCode
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Shutdown:
    """kShutdown."""


Message = (
    InitServer
    | CallFunc
    | Return
    | ExceptionMsg
    | CopyToRemote
    | CopyFromRemote
    | CopyAck
    | Syscall
    | Shutdown
)


def decode_message(body: bytes | bytearray | memoryview, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Decode one whole packet body (without its u64 length) into a message record."""
    r = Reader(body, limits)
    return decode_body(decode_code(r), r)


def decode_body(code: RPCCode, r: Reader) -> Any:
    """The message record of a packet whose ``code`` is read; ``r`` holds the rest of its body
    (the decoder the endpoint serves and reads replies with).
    """
    decode = _DECODERS.get(code)
    if decode is None:
        if code >= SYSCALL_CODE_START:
            msg = Syscall(code, tuple(decode_pseq(r, f"{code.name} args")))
            r.expect_end(code.name)
            return msg
        raise ProtocolError(f"RPC code {code.name} is internal and never sent")
    return decode(r)


# One decoder per message code (syscalls are decoded above): each reads the whole rest of the
# body and names the message in a trailing-bytes error.


def _decode_call_func(r: Reader) -> CallFunc:
    handle = r.u64("function handle")
    msg = CallFunc(handle, tuple(decode_pseq(r)))
    if r.pos != len(r.buf):
        r.expect_end("kCallFunc")
    return msg


def _decode_return(r: Reader) -> Return:
    msg = Return(tuple(decode_pseq(r, "return values")))
    if r.pos != len(r.buf):
        r.expect_end("kReturn")
    return msg


def _decode_exception(r: Reader) -> ExceptionMsg:
    values = decode_pseq(r, "exception")
    if len(values) != 1 or not isinstance(values[0], str):
        raise ProtocolError(f"kException must carry one string, got {values!r}")
    r.expect_end("kException")
    return ExceptionMsg(str(values[0]))


def _decode_copy_to_remote(r: Reader) -> CopyToRemote:
    desc, nbytes = decode_copy_to_remote_head(r)
    msg = CopyToRemote(desc, bytes(r.take(nbytes, "kCopyToRemote data")))
    r.expect_end("kCopyToRemote")
    return msg


def _decode_copy_from_remote(r: Reader) -> CopyFromRemote:
    msg = CopyFromRemote(*decode_copy_head(r, "kCopyFromRemote"))
    r.expect_end("kCopyFromRemote")
    return msg


def _decode_copy_ack(r: Reader) -> CopyAck:
    msg = CopyAck(bytes(r.take(r.remaining, "kCopyAck data")))
    r.expect_end("kCopyAck")
    return msg


def _decode_init_server(r: Reader) -> InitServer:
    version = r.text("protocol version")
    msg = InitServer(version, tuple(decode_pseq(r, "constructor args")))
    r.expect_end("kInitServer")
    return msg


def _decode_shutdown(r: Reader) -> Shutdown:
    r.expect_end("kShutdown")
    return Shutdown()


#: The decoder of each non-syscall message code, keyed by the plain code number.
_DECODERS: dict[int, Callable[[Reader], Any]] = {
    int(RPCCode.CALL_FUNC): _decode_call_func,
    int(RPCCode.RETURN): _decode_return,
    int(RPCCode.EXCEPTION): _decode_exception,
    int(RPCCode.COPY_TO_REMOTE): _decode_copy_to_remote,
    int(RPCCode.COPY_FROM_REMOTE): _decode_copy_from_remote,
    int(RPCCode.COPY_ACK): _decode_copy_ack,
    int(RPCCode.INIT_SERVER): _decode_init_server,
    int(RPCCode.SHUTDOWN): _decode_shutdown,
}


def decode_copy_to_remote_head(r: Reader, streamed: int = 0) -> tuple[TensorDesc, int]:
    """Descriptor and data byte count of a kCopyToRemote, checked against the data that follows
    the head: what is left in ``r`` plus ``streamed`` bytes not in it (the endpoint reads only
    the head into ``r`` and streams the data straight into array memory).
    """
    desc, nbytes = decode_copy_head(r, "kCopyToRemote")
    data = r.remaining + streamed
    if nbytes > data:
        raise ProtocolError(
            f"kCopyToRemote data: needs {nbytes} bytes but the packet has {data} left"
        )
    if nbytes < data:
        raise ProtocolError(f"kCopyToRemote: {data - nbytes} unexpected trailing bytes")
    return desc, nbytes


def encode_message(msg: Any) -> bytes:
    """The framed packet of a message record (inverse of :func:`decode_message`)."""
    for kind, encode in _ENCODERS:
        if isinstance(msg, kind):
            return encode(msg)
    raise ProtocolError(f"not an RPC message: {msg!r}")


#: Each message record's encoder.
_ENCODERS: tuple[tuple[type, Callable[[Any], bytes]], ...] = (
    (CallFunc, lambda m: encode_call(m.handle, m.args)),
    (Return, lambda m: encode_return(m.values)),
    (Syscall, lambda m: encode_syscall(m.code, m.args)),
    (ExceptionMsg, lambda m: encode_exception(m.text)),
    (CopyToRemote, lambda m: encode_copy_to_remote(m.desc, len(m.data)) + m.data),
    (CopyFromRemote, lambda m: encode_copy_from_remote(m.desc, m.nbytes)),
    (CopyAck, lambda m: encode_copy_ack(len(m.data)) + m.data),
    (InitServer, lambda m: encode_init_server(m.args, m.version)),
    (Shutdown, lambda m: encode_shutdown()),
)
