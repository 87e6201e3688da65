"""Request dispatch: how an RPC endpoint answers the requests its peer sends.

:class:`RequestDispatch` is the serving half of :class:`~pytvm.rpc.sessions.endpoint.Endpoint`
(:meth:`RequestDispatch.serve_forever` as a server; a client serves a request that arrives while
it awaits a reply the same way). Every code of spec section 4 is answered with the *serving
session*, set by kInitServer: ``rpc.LocalSession`` by default, or whatever session the named
constructor returns -- a client session of another endpoint makes this a forwarding hop. A bad
packet is answered with kException and the endpoint keeps serving; only a length field it cannot
trust (or a vanished peer) ends the session.

Requests are decoded by :func:`pytvm.rpc.wire.messages.decode_body` (the decoder the protocol
and fuzz tests exercise) and dispatched on the record it returns; only a kCopyToRemote payload
is streamed straight from the channel into array memory (its head goes through the same
decoder), or, when the serving session forwards to a next hop, passed on to that hop piece by
piece as it arrives (cut-through, not stored first). While tracing is off and the C codec is on
(:mod:`pytvm.rpc.wire._c_codec`), a whole kCallFunc in the read buffer is decoded in one C call
(:meth:`RequestDispatch._serve_call`), with the same checks and replies.

Hop-local functions: a kGetGlobalFunc for a ``pytvm.hop.*`` name is answered from this
endpoint's :class:`~pytvm.rpc.sessions.hop.HopTable` instead of the serving session, so each hop
of a nested session runs them itself (trace control, see ``pytvm.rpc.sessions.hop``).

Tracing (``pytvm.ffi.trace``): a served packet is a ``server`` span (code, bytes) and the serving
session's part of it a ``serving session`` span.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...ffi import trace as _trace
from ...ffi.errors import TVMError, format_error
from ...ffi.registry import get_global_func
from ..wire._c_codec import CODEC as _CODEC
from ..wire._packet_io import PacketIO, _PeerClosed
from ..wire.base import PROTOCOL_VERSION, ProtocolError, RPCError
from ..wire.channel import Channel
from ..wire.messages import (
    CallFunc,
    CopyFromRemote,
    InitServer,
    Syscall,
    decode_body,
    decode_copy_to_remote_head,
)
from ..wire.protocol import (
    DEFAULT_LIMITS,
    SYSCALL_CODE_START,
    Handle,
    Limits,
    Reader,
    RPCCode,
    ServerStatus,
    encode_call_return,
    encode_copy_ack,
    encode_exception,
    encode_return,
)
from .hop import HOP_PREFIX, HopTable, code_name
from .session import SessionBase, session_of_module

__all__ = ["RequestDispatch"]

log = logging.getLogger("pytvm.rpc.endpoint")

CODES = {int(code): code for code in RPCCode}
# Codes a peer may send as a request (kCopyToRemote is streamed apart, kShutdown ends serving).
_REQUEST_CODES = frozenset(
    (RPCCode.CALL_FUNC, RPCCode.INIT_SERVER, RPCCode.COPY_FROM_REMOTE)
) | frozenset(code for code in RPCCode if code >= SYSCALL_CODE_START)
# The codes the serving loop tests, as module globals (reading them off the enum class is slower).
_SHUTDOWN = RPCCode.SHUTDOWN
_COPY_TO_REMOTE = RPCCode.COPY_TO_REMOTE
# A kCopyToRemote head: u64 data, i32 device type, i32 device id, i32 ndim, dtype (4 bytes);
# then ndim i64 dims, u64 byte_offset and u64 nbytes.
_COPY_HEAD_FIXED = 24
_COPY_HEAD_NDIM = 16  # offset of ndim in the head
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_CALL_FUNC_CODE = int(RPCCode.CALL_FUNC)


class RequestDispatch(PacketIO):
    """Answers the requests that arrive on ``channel`` with the serving session."""

    def __init__(self, channel: Channel, name: str, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(channel, name, limits)
        self.serving_session: SessionBase | None = None
        self._hops: HopTable | None = None  # hop-local functions, made on first lookup
        self._after_reply: Callable[[], None] | None = None

    def serve_forever(self) -> None:
        """Answer requests until kShutdown or the peer closes the stream."""
        try:
            while True:
                c = _CODEC.module
                if c is not None and not _trace.ON:
                    head = self._packet_ready(c)
                    if head is not None and head[0] == _CALL_FUNC_CODE:
                        self._serve_call(c, head[1], head[2])
                        continue
                try:
                    code_number, left = self._next_packet(idle=True)
                except _PeerClosed:
                    return
                except ProtocolError as err:  # an untrusted length: answer, then give up
                    log.warning("%s: %s", self.name, err)
                    self._send(encode_exception(format_error(err, with_traceback=False)))
                    return
                code = CODES.get(code_number)
                if code is None:
                    self._skip(left)
                    unknown = ProtocolError(
                        f"unknown RPC code {code_number} (status "
                        f"{ServerStatus.UNKNOWN_RPC_CODE.name})"
                    )
                    self._send(encode_exception(format_error(unknown, with_traceback=False)))
                    continue
                if code == _SHUTDOWN:
                    self._skip(left)
                    return
                self._serve_packet(code, left)
        except (ConnectionError, BrokenPipeError) as err:
            log.info("%s: peer %s went away: %s", self.name, self.channel.peer, err)
        finally:
            self.closed = True
            if self.serving_session is not None:
                try:
                    self.serving_session.close()
                except Exception as err:
                    log.info("%s: closing the serving session: %s", self.name, err)

    def _serve_packet(self, code: RPCCode, left: int) -> None:
        """Handle one request whose code is read and ``left`` body bytes follow."""
        with _trace.span_of("server", _describe_served, code, left) as sp:
            if code == _COPY_TO_REMOTE:
                reply_parts: tuple[bytes | memoryview, ...] = (self._serve_copy_to_remote(left),)
            else:
                body = self._read(left)
                try:
                    reply_parts = self._dispatch(code, body)
                except Exception as err:
                    if not isinstance(err, (TVMError, ValueError, TypeError, KeyError, OSError)):
                        log.debug("%s: %s", self.name, err, exc_info=True)
                    reply_parts = (encode_exception(format_error(err)),)
            if reply_parts:  # empty: a forwarded copy answered as its data arrived
                self._send(*reply_parts)
            sp.set(reply_bytes=self._sent_bytes)
        if self._after_reply is not None:
            action, self._after_reply = self._after_reply, None
            action()

    def _serve_call(self, c: Any, start: int, end: int) -> None:
        """Answer the whole kCallFunc whose body is ``_rbuf[start:end]`` (the C codec's path,
        untraced; the same checks, replies and errors as the general one).
        """
        buf = self._rbuf
        self._rpos = end
        try:
            if end - start < _U64.size:
                raise ProtocolError(
                    f"function handle: needs 8 bytes but the packet has {end - start} left"
                )
            (handle,) = _U64.unpack_from(buf, start)
            limits = self.limits
            args, pos = c.decode_pseq(
                buf, start + 8, end, limits.max_args, limits.max_bytes, "args", limits
            )
            if pos != end:
                raise ProtocolError(f"kCallFunc: {end - pos} unexpected trailing bytes")
            reply = self._answer_call(handle, tuple(args))
        except Exception as err:
            if not isinstance(err, (TVMError, ValueError, TypeError, KeyError, OSError)):
                log.debug("%s: %s", self.name, err, exc_info=True)
            reply = encode_exception(format_error(err))
        self._send(reply)
        if self._after_reply is not None:
            action, self._after_reply = self._after_reply, None
            action()

    def _answer_call(self, handle: int, args: tuple[Any, ...]) -> bytes:
        """The kReturn packet of calling ``handle`` with ``args`` (hop-local or the session's)."""
        hops = self._hops
        if hops is not None and hops.owns(handle):
            values = hops.call(handle, args)
            return encode_call_return(values[0], values[1:])
        session = self.serving_session
        if session is None:
            session = self._session()  # raises
        with _trace.span_of("serving session", _describe_serving, session, "call_func"):
            values = session.call_func(handle, args)
        return encode_call_return(values[0], values[1:])

    def _hop_table(self) -> HopTable:
        if self._hops is None:
            self._hops = HopTable(lambda: self.serving_session, self._queue_after_reply)
        return self._hops

    def _queue_after_reply(self, action: Callable[[], None]) -> None:
        self._after_reply = action

    def _session(self) -> SessionBase:
        if self.serving_session is None:
            raise RPCError("the server is not initialized: send kInitServer first")
        return self.serving_session

    def _dispatch(self, code: RPCCode, body: bytes) -> tuple[bytes | memoryview, ...]:
        """Decode the request ``body`` of ``code`` and answer it (the reply packet's parts)."""
        if code not in _REQUEST_CODES:
            raise RPCError(f"{code.name} is a reply code, not a request (status UnknownRPCCode)")
        msg = decode_body(code, Reader(body, self.limits))
        if type(msg) is CallFunc:
            return (self._answer_call(msg.handle, msg.args),)
        if type(msg) is Syscall:
            return (encode_return([self._serve_syscall(code, msg.args)]),)
        if type(msg) is CopyFromRemote:
            desc, nbytes = msg.desc, msg.nbytes
            session = self._session()
            forward = getattr(session, "copy_from_remote_streamed", None)
            if forward is not None and not _trace.ON:
                return self._forward_copy_from_remote(forward, desc, nbytes)
            with _trace.span_of(
                "serving session", _describe_serving, session, "copy_from_remote", nbytes
            ):
                data = session.copy_from_remote(desc, nbytes)
            return (encode_copy_ack(nbytes), data)
        assert type(msg) is InitServer, msg  # _REQUEST_CODES holds no other code
        self._init_server(msg.version, msg.args)
        return (encode_return([None]),)

    def _serve_syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """The result of syscall ``code``: hop lookups and frees here, the rest by the session."""
        if code == RPCCode.GET_GLOBAL_FUNC and _is_hop_name(args):
            return self._hop_table().lookup(str(args[0]))
        if (
            code == RPCCode.FREE_HANDLE
            and self._hops is not None
            and _is_hop_handle(self._hops, args)
        ):
            self._hops.free(args[0].value)
            return None
        session = self._session()
        with _trace.span_of("serving session", _describe_serving_syscall, session, code):
            return session.syscall(code, args)

    def _init_server(self, version: str, args: Sequence[Any]) -> None:
        if self.serving_session is not None:
            raise RPCError("Server has already been initialized")
        if version != PROTOCOL_VERSION:
            raise RPCError(
                f"Client protocol version mismatch with server: client {version!r}, "
                f"server {PROTOCOL_VERSION!r}"
            )
        name = "rpc.LocalSession"
        if args:
            if not isinstance(args[0], str):
                raise RPCError(
                    f"session constructor name must be a string, got {type(args[0]).__name__}"
                )
            name, args = str(args[0]), args[1:]
        ctor = get_global_func(name, allow_missing=True)
        if ctor is None:
            raise RPCError(f"session constructor {name!r} is not a registered global function")
        try:
            result = ctor(*[_plain(a) for a in args])
        except Exception as err:
            raise type(err)(f"session constructor {name!r} failed: {err}") from err
        self.serving_session = session_of_module(result, name)

    def _serve_copy_to_remote(self, left: int) -> bytes:
        """Receive a kCopyToRemote whose payload may be large; returns the reply packet.

        Only the head (descriptor and nbytes) is read and decoded, by the decoder of every other
        message; the data then goes straight into the target memory.
        """
        head = self._read(min(left, _COPY_HEAD_FIXED))
        if len(head) == _COPY_HEAD_FIXED:
            ndim = _I32.unpack_from(head, _COPY_HEAD_NDIM)[0]
            if 0 <= ndim <= self.limits.max_ndim:  # else the decoder names the bad ndim
                head += self._read(min(8 * ndim + 16, left - len(head)))
        streamed = left - len(head)
        try:
            desc, nbytes = decode_copy_to_remote_head(Reader(head, self.limits), streamed)
            session = self._session()
            sp = _trace.span_of(
                "serving session", _describe_serving, session, "copy_to_remote", nbytes
            )  # begins now: the span covers copy_target too
            target = session.copy_target(desc, nbytes)
        except Exception as err:
            self._skip(streamed)
            return encode_exception(format_error(err, with_traceback=False))
        with sp:
            if target is not None:
                self._read_into(target)
                return encode_return([None])
            forward = getattr(session, "copy_to_remote_streamed", None)
            if forward is not None and not _trace.ON:
                return self._forward_copy_to_remote(forward, desc, nbytes)
            data = self._read_staged(nbytes)
            try:
                session.copy_to_remote(desc, memoryview(data))
            except Exception as err:
                return encode_exception(format_error(err))
            return encode_return([None])

    def _forward_copy_to_remote(
        self, forward: Callable[..., None], desc: Any, nbytes: int
    ) -> bytes:
        """Pass an incoming kCopyToRemote's data on to the next hop as it arrives (a forwarding
        session's ``copy_to_remote_streamed``); the reply packet. The next hop's error is
        answered with kException once the rest of the data is skipped; losing this peer
        mid-copy propagates (serving ends).
        """
        got = 0
        lost: list[BaseException] = []

        def fill(view: memoryview) -> None:
            nonlocal got
            try:
                self._read_into(view)
            except BaseException as exc:
                lost.append(exc)
                raise
            got += len(view)

        try:
            forward(desc, nbytes, fill)
        except Exception as err:
            if lost:
                raise lost[0] from None
            self._skip(nbytes - got)
            return encode_exception(format_error(err))
        return encode_return([None])

    def _forward_copy_from_remote(
        self, forward: Callable[..., None], desc: Any, nbytes: int
    ) -> tuple[bytes, ...]:
        """Answer a kCopyFromRemote from the next hop as its data arrives (a forwarding session's
        ``copy_from_remote_streamed``): the kCopyAck head goes out once the next hop has accepted
        the copy, then each piece as it comes. Returns ``()`` (answered), or the kException reply
        of an error before any byte went out; an error after that breaks this connection (the
        peer's reply is cut off), which ends serving.
        """
        started = False

        def begin() -> None:
            nonlocal started
            self._send(encode_copy_ack(nbytes))
            started = True

        try:
            forward(desc, nbytes, begin, self.channel.send)
        except Exception as err:
            if not started:
                return (encode_exception(format_error(err)),)
            self.break_stream(f"a forwarded copy of {nbytes} bytes from the next hop", err)
            raise self.closed_error() from err
        return ()


# ---------------------------------------------------------------------- tracing (only when on)


def _describe_served(code: RPCCode, left: int) -> tuple[str, dict[str, Any]]:
    """Name and attributes of a ``server`` span (asked only while tracing)."""
    name = code_name(code)
    return name, {"code": name, "request_bytes": left + 12}


def _describe_serving(
    session: SessionBase, method: str, nbytes: int | None = None
) -> tuple[str, dict[str, Any]]:
    """Name and attributes of a ``serving session`` span (asked only while tracing)."""
    attrs: dict[str, Any] = {"session": session.name}
    if nbytes is not None:
        attrs["bytes"] = nbytes
    return f"{type(session).__name__}.{method}", attrs


def _describe_serving_syscall(session: SessionBase, code: RPCCode) -> tuple[str, dict[str, Any]]:
    """The ``serving session`` span of a syscall."""
    return _describe_serving(session, f"syscall({code_name(code)})")


def _is_hop_name(args: Sequence[Any]) -> bool:
    """KGetGlobalFunc of a hop-local function (``pytvm.hop.*``)."""
    return len(args) == 1 and isinstance(args[0], str) and args[0].startswith(HOP_PREFIX)


def _is_hop_handle(hops: HopTable, args: Sequence[Any]) -> bool:
    """KFreeHandle of a handle the hop table gave out."""
    return len(args) == 1 and isinstance(args[0], Handle) and hops.owns(args[0].value)


def _plain(value: Any) -> Any:
    """Object-encoded strings/bytes become plain ``str``/``bytes`` for local functions."""
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    if isinstance(value, bytes) and type(value) is not bytes:
        return bytes(value)
    return value
