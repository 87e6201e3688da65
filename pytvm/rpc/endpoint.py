"""The RPC endpoint: reads and writes packets on a channel, as a client or as a server.

As a server (:meth:`Endpoint.serve_forever`) it answers every code of spec section 4 with its
*serving session*, set by kInitServer: ``rpc.LocalSession`` by default, or whatever session the
named constructor returns -- a client session of another endpoint makes this a forwarding hop.
A bad packet is answered with kException and the endpoint keeps serving; only a length field it
cannot trust (or a vanished peer) ends the session.

As a client it issues requests one at a time (a lock spans send and reply) and streams copy
payloads straight between the channel and memory, split to the peer's maximum packet size,
which is looked up once per endpoint. A request that ends in anything but a complete reply
(Ctrl-C or another exception halfway through a send or a reply, a malformed reply) breaks the
connection: it is closed and every later request raises ``RPCSessionBrokenError`` at once
(see ``_packet_io``); an error reply (kException) leaves it in step and usable.

Hop-local functions: a kGetGlobalFunc for a ``pytvm.hop.*`` name is answered from this
endpoint's :class:`~pytvm.rpc.hop.HopTable` instead of the serving session, so each hop of a
nested session runs them itself (trace control, see ``pytvm.rpc.hop``).

Requests and replies are decoded by :func:`pytvm.rpc.messages.decode_body` (the decoder the
protocol and fuzz tests exercise) and dispatched on the record it returns; only copy payloads
are streamed straight between the channel and array memory.

Tracing (``pytvm.ffi.trace``, each hook one ``with _trace.span...`` block): a client request is
an ``endpoint`` span (code, request and reply bytes); a served packet is a ``server`` span
(code, bytes) and the serving session's part of it a ``serving session`` span. The ``wire``
spans (channel sends and receives) come from the packet layer underneath (``_packet_io``).
"""

from __future__ import annotations

import logging
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..ffi import trace as _trace
from ..ffi.errors import TVMError, format_error, parse_error
from ..ffi.registry import get_global_func
from ._packet_io import PacketIO, _PeerClosed
from .base import PROTOCOL_VERSION, ProtocolError, RPCError, remote_error_class
from .channel import Channel
from .hop import HOP_PREFIX, HopTable, code_name
from .messages import (
    CallFunc,
    CopyFromRemote,
    InitServer,
    Syscall,
    decode_body,
    decode_copy_to_remote_head,
)
from .protocol import (
    DEFAULT_LIMITS,
    SYSCALL_CODE_START,
    Handle,
    Limits,
    Reader,
    RPCCode,
    ServerStatus,
    TensorDesc,
    encode_call,
    encode_call_return,
    encode_copy_ack,
    encode_copy_from_remote,
    encode_copy_to_remote,
    encode_exception,
    encode_init_server,
    encode_return,
    encode_shutdown,
    encode_syscall,
)
from .session import SessionBase, session_of_module

__all__ = ["Endpoint", "serve"]

log = logging.getLogger("pytvm.rpc.endpoint")

_CODES = {int(code): code for code in RPCCode}
MAX_PACKET_FUNC = "tvm.rpc.server.GetCRTMaxPacketSize"
# Codes a peer may send as a request (kCopyToRemote is streamed apart, kShutdown ends serving).
_REQUEST_CODES = frozenset(
    (RPCCode.CALL_FUNC, RPCCode.INIT_SERVER, RPCCode.COPY_FROM_REMOTE)
) | frozenset(code for code in RPCCode if code >= SYSCALL_CODE_START)
_COPY_WINDOW = 2  # copy packets in flight (see _copy_to_remote_pipelined; more measured slower)
# A kCopyToRemote head: u64 data, i32 device type, i32 device id, i32 ndim, dtype (4 bytes);
# then ndim i64 dims, u64 byte_offset and u64 nbytes.
_COPY_HEAD_FIXED = 24
_COPY_HEAD_NDIM = 16  # offset of ndim in the head
_I32 = struct.Struct("<i")


class Endpoint(PacketIO):
    """One side of an RPC connection over ``channel``."""

    def __init__(
        self,
        channel: Channel,
        name: str = "endpoint",
        remote_key: str = "",
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        super().__init__(channel, name, limits)
        self.remote_key = remote_key
        self.serving_session: SessionBase | None = None
        self._lock = threading.RLock()
        self._max_transfer: int | None = None  # bytes of data per copy packet, once asked
        self._hops: HopTable | None = None  # hop-local functions, made on first lookup
        self._after_reply: Callable[[], None] | None = None
        self._reply_bytes = 0  # of the last reply received (a trace attribute)
        self._error_reply: BaseException | None = None  # raised for a complete kException

    # ------------------------------------------------------------------ client side

    def _raise_remote(self, text: str) -> None:
        err = parse_error(text, context=f"error from RPC peer {self.channel.peer}")
        cls = remote_error_class(type(err))
        remote = cls(*err.args)
        remote.traceback = err.traceback
        for note in getattr(err, "__notes__", ()):
            remote.add_note(note)
        self._error_reply = remote
        raise remote

    def _failed(self, what: str, exc: BaseException) -> None:
        """``exc`` ended a request: unless it is a complete error reply, the stream is out of
        step and the connection breaks (``what`` says which request was cut off).
        """
        if exc is self._error_reply:
            self._error_reply = None
            return
        self._error_reply = None
        self.break_stream(what, exc)

    def _reply(self) -> tuple[int, int]:
        """Wait for the reply to our request: (code, body bytes left). kException raises; a
        request from the peer is served first (the endpoint is symmetric).
        """
        while True:
            try:
                code, left = self._next_packet()
            except _PeerClosed:
                self.closed = True
                raise ConnectionError(
                    f"{self.channel.peer} closed the RPC channel while a reply was awaited"
                ) from None
            if code in (RPCCode.RETURN, RPCCode.COPY_ACK):
                self._reply_bytes = left + 12
                return code, left
            if code == RPCCode.EXCEPTION:
                try:
                    reply = decode_body(RPCCode.EXCEPTION, Reader(self._read(left), self.limits))
                except ProtocolError as err:
                    self._error_reply = err  # the whole packet was read: still in step
                    raise
                self._raise_remote(reply.text)
            known = _CODES.get(code)
            if known is None or self.serving_session is None:
                self._skip(left)
                name = known.name if known is not None else f"unknown code {code}"
                raise ProtocolError(f"{self.channel.peer} sent {name} instead of a reply")
            self._serve_packet(known, left)

    def _return_values(self) -> list[Any]:
        code, left = self._reply()
        if code != RPCCode.RETURN:
            self._skip(left)
            raise ProtocolError(f"expected kReturn, got {_CODES[code].name}")
        return list(decode_body(RPCCode.RETURN, Reader(self._read(left), self.limits)).values)

    def _request(self, code: RPCCode, packet: bytes, **attrs: Any) -> list[Any]:
        """Send one request packet and return its kReturn values (a traced span when on)."""
        with self._lock:
            try:
                with _trace.span_of("endpoint", _describe_request, self, code, packet, attrs) as sp:
                    self._send(packet)
                    values = self._return_values()
                    sp.set(reply_bytes=self._reply_bytes)
                    return values
            except BaseException as exc:
                self._failed(_describe(code, attrs), exc)
                raise

    def init_server(self, args: Sequence[Any] = (), version: str = PROTOCOL_VERSION) -> None:
        """Send kInitServer (session constructor ``args``) and wait for the reply."""
        self._request(RPCCode.INIT_SERVER, encode_init_server(args, version))

    def call(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """kCallFunc; returns the kReturn values (the result's type index first)."""
        return self._request(RPCCode.CALL_FUNC, encode_call(handle, args), handle=hex(handle))

    def syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """A syscall; returns its one result value."""
        values = self._request(code, encode_syscall(code, args))
        if len(values) != 1:
            raise ProtocolError(f"{code.name} reply has {len(values)} values, expected 1")
        return values[0]

    def syscalls_pipelined(self, code: RPCCode, arg_lists: Sequence[Sequence[Any]]) -> None:
        """Send several syscalls back to back, then read all replies (used to free handles)."""
        with self._lock:
            packet = b"".join(encode_syscall(code, args) for args in arg_lists)
            errors: list[BaseException] = []
            try:
                with _trace.span_of(
                    "endpoint", _describe_pipelined, self, code, packet, len(arg_lists)
                ) as sp:
                    self._send(packet)
                    for _ in arg_lists:
                        self._collect_return(errors)
                    sp.set(reply_bytes=self._reply_bytes)
            except BaseException as exc:
                self._failed(f"{len(arg_lists)} pipelined {code_name(code)} requests", exc)
                raise
            if errors:
                raise errors[0]

    def _collect_return(self, errors: list[BaseException]) -> None:
        """Read one kReturn of a pipelined request; an error reply is added to ``errors`` (the
        stream stays in step), anything else propagates.
        """
        try:
            self._return_values()
        except RPCError as err:
            if err is not self._error_reply:
                raise
            self._error_reply = None
            errors.append(err)

    def max_transfer(self, ndim: int) -> int:
        """Data bytes per copy packet: the peer's ``GetCRTMaxPacketSize`` minus the copy header,
        asked once per endpoint (unbounded when the peer has no such function).
        """
        if self._max_transfer is None:
            handle = self.syscall(RPCCode.GET_GLOBAL_FUNC, [MAX_PACKET_FUNC])
            limit = 0
            if isinstance(handle, Handle) and handle.value:
                values = self.call(handle.value, [])
                limit = int(values[1]) if len(values) > 1 else 0
                self.syscall(RPCCode.FREE_HANDLE, [handle])
            self._max_transfer = limit
        if self._max_transfer <= 0:
            return 1 << 62
        room = self._max_transfer - (44 + 8 * ndim)
        if room <= 0:
            raise RPCError(
                f"peer {self.channel.peer} allows {self._max_transfer}-byte packets, too small "
                f"for a copy header of a {ndim}-d tensor"
            )
        return room

    def copy_to_remote(self, desc: TensorDesc, data: memoryview) -> None:
        """kCopyToRemote, split into the peer's packet size."""
        data = data.cast("B")
        step = self.max_transfer(len(desc.shape))
        with self._lock:
            try:
                if len(data) > step and not _trace.ON:
                    self._copy_to_remote_pipelined(desc, data, step)
                else:
                    self._copy_to_remote_serial(desc, data, step)
            except BaseException as exc:
                self._failed(f"a copy of {len(data)} bytes to the remote", exc)
                raise

    def copy_from_remote(self, desc: TensorDesc, out: memoryview) -> None:
        """KCopyFromRemote into ``out`` (its length is the byte count), split as above."""
        out = out.cast("B")
        step = self.max_transfer(len(desc.shape))
        with self._lock:
            try:
                for start in range(0, max(len(out), 1), step):
                    self._copy_from_remote_packet(desc, out[start : start + step], start)
            except BaseException as exc:
                self._failed(f"a copy of {len(out)} bytes from the remote", exc)
                raise

    # The packet loops below run with the lock held; copy_to_remote/copy_from_remote above
    # break the connection if one is cut off.

    def _copy_to_remote_serial(self, desc: TensorDesc, data: memoryview, step: int) -> None:
        """One packet at a time (each a traced request while tracing is on)."""
        for start in range(0, max(len(data), 1), step):
            chunk = data[start : start + step]
            part = _at_offset(desc, desc.byte_offset + start)
            head = encode_copy_to_remote(part, len(chunk))
            with _trace.span_of("endpoint", _describe_copy_to_remote, self, head, chunk) as sp:
                self._send(head, chunk)
                self._return_values()
                sp.set(reply_bytes=self._reply_bytes)

    def _copy_from_remote_packet(self, desc: TensorDesc, chunk: memoryview, start: int) -> None:
        """One kCopyFromRemote of ``len(chunk)`` bytes at ``start`` into ``chunk``."""
        part = _at_offset(desc, desc.byte_offset + start)
        head = encode_copy_from_remote(part, len(chunk))
        with _trace.span_of("endpoint", _describe_copy_from_remote, self, head, chunk) as sp:
            self._send(head)
            code, left = self._reply()
            if code != RPCCode.COPY_ACK or left != len(chunk):
                self._skip(left)
                raise ProtocolError(
                    f"expected kCopyAck of {len(chunk)} bytes, got code {code} of {left}"
                )
            self._read_into(chunk)
            sp.set(reply_bytes=self._reply_bytes)

    # A copy to the peer split into packets keeps _COPY_WINDOW packets in flight: the next one
    # travels while the peer (and the hops behind it) still handle the previous one. Replies
    # come back in order, so the stream stays in step; the first error reply is raised after
    # all outstanding replies are read. (Tracing records the one-at-a-time path instead.)
    # Reads stay one at a time: asking ahead measured slower here (board path, 16 MiB: 290
    # against 630 MiB/s on one core).

    def _copy_to_remote_pipelined(self, desc: TensorDesc, data: memoryview, step: int) -> None:
        errors: list[BaseException] = []
        in_flight = 0
        for start in range(0, len(data), step):
            chunk = data[start : start + step]
            part = _at_offset(desc, desc.byte_offset + start)
            self._send(encode_copy_to_remote(part, len(chunk)), chunk)
            in_flight += 1
            if in_flight == _COPY_WINDOW:
                self._collect_return(errors)
                in_flight -= 1
        for _ in range(in_flight):
            self._collect_return(errors)
        if errors:
            self._error_reply = errors[0]  # every reply was read: the stream is in step
            raise errors[0]

    def shutdown(self) -> None:
        """Send kShutdown (no reply) and close the channel."""
        with self._lock:
            if self.closed:
                return
            try:
                self._send(encode_shutdown())
            except OSError:
                pass
            self.closed = True
            self.channel.close()

    # ------------------------------------------------------------------ server side

    def serve_forever(self) -> None:
        """Answer requests until kShutdown or the peer closes the stream."""
        try:
            while True:
                try:
                    code_number, left = self._next_packet(idle=True)
                except _PeerClosed:
                    return
                except ProtocolError as err:  # an untrusted length: answer, then give up
                    log.warning("%s: %s", self.name, err)
                    self._send(encode_exception(format_error(err, with_traceback=False)))
                    return
                code = _CODES.get(code_number)
                if code is None:
                    self._skip(left)
                    unknown = ProtocolError(
                        f"unknown RPC code {code_number} (status "
                        f"{ServerStatus.UNKNOWN_RPC_CODE.name})"
                    )
                    self._send(encode_exception(format_error(unknown, with_traceback=False)))
                    continue
                if code == RPCCode.SHUTDOWN:
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
            if code == RPCCode.COPY_TO_REMOTE:
                reply_parts: tuple[bytes | memoryview, ...] = (self._serve_copy_to_remote(left),)
            else:
                body = self._read(left)
                try:
                    reply_parts = self._dispatch(code, body)
                except Exception as err:
                    if not isinstance(err, (TVMError, ValueError, TypeError, KeyError, OSError)):
                        log.debug("%s: %s", self.name, err, exc_info=True)
                    reply_parts = (encode_exception(format_error(err)),)
            self._send(*reply_parts)
            sp.set(reply_bytes=self._sent_bytes)
        if self._after_reply is not None:
            action, self._after_reply = self._after_reply, None
            action()

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
            handle, args = msg.handle, msg.args
            if self._hops is not None and self._hops.owns(handle):
                values = self._hops.call(handle, args)
                return (encode_call_return(values[0], values[1:]),)
            session = self._session()
            with _trace.span_of("serving session", _describe_serving, session, "call_func"):
                values = session.call_func(handle, args)
            return (encode_call_return(values[0], values[1:]),)
        if type(msg) is Syscall:
            return (encode_return([self._serve_syscall(code, msg.args)]),)
        if type(msg) is CopyFromRemote:
            desc, nbytes = msg.desc, msg.nbytes
            session = self._session()
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
            data = self._read_staged(nbytes)
            try:
                session.copy_to_remote(desc, memoryview(data))
            except Exception as err:
                return encode_exception(format_error(err))
            return encode_return([None])


# ---------------------------------------------------------------------- tracing (only when on)


def _describe_request(
    endpoint: Endpoint, code: RPCCode, packet: bytes, attrs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Name and attributes of an ``endpoint`` span."""
    return _describe_sent(endpoint, code, len(packet), attrs)


def _describe_sent(
    endpoint: Endpoint, code: RPCCode, nbytes: int, attrs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """An ``endpoint`` span of ``code`` whose request is ``nbytes`` long."""
    name = code_name(code)
    return name, {"code": name, "request_bytes": nbytes, "peer": endpoint.channel.peer, **attrs}


def _describe_pipelined(
    endpoint: Endpoint, code: RPCCode, packet: bytes, count: int
) -> tuple[str, dict[str, Any]]:
    """The ``endpoint`` span of ``count`` requests sent back to back."""
    return _describe_sent(endpoint, code, len(packet), {"pipelined": count})


def _describe_copy_to_remote(
    endpoint: Endpoint, head: bytes, chunk: memoryview
) -> tuple[str, dict[str, Any]]:
    """The ``endpoint`` span of one kCopyToRemote packet (its data is part of the request)."""
    nbytes = len(head) + len(chunk)
    return _describe_sent(endpoint, RPCCode.COPY_TO_REMOTE, nbytes, {"data_bytes": len(chunk)})


def _describe_copy_from_remote(
    endpoint: Endpoint, head: bytes, chunk: memoryview
) -> tuple[str, dict[str, Any]]:
    """The ``endpoint`` span of one kCopyFromRemote packet (its data comes with the reply)."""
    code = RPCCode.COPY_FROM_REMOTE
    return _describe_sent(endpoint, code, len(head), {"data_bytes": len(chunk)})


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


def _describe(code: RPCCode, attrs: dict[str, Any]) -> str:
    """A request, as a broken-session message names it."""
    handle = attrs.get("handle")
    return f"a {code_name(code)} request" + (f" (function {handle})" if handle else "")


def _at_offset(desc: TensorDesc, byte_offset: int) -> TensorDesc:
    return TensorDesc(desc.data, desc.device, desc.dtype, desc.shape, byte_offset)


def _plain(value: Any) -> Any:
    """Object-encoded strings/bytes become plain ``str``/``bytes`` for local functions."""
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    if isinstance(value, bytes) and type(value) is not bytes:
        return bytes(value)
    return value


def serve(channel: Channel, name: str = "server", remote_key: str = "") -> None:
    """Serve RPC requests on an already handshaken ``channel`` until the client is done."""
    endpoint = Endpoint(channel, name, remote_key)
    try:
        endpoint.serve_forever()
    finally:
        channel.close()
