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

Tracing (``pytvm.ffi.trace``, each hook behind one ``if _trace.ON`` test): a client request is
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
from .protocol import (
    DEFAULT_LIMITS,
    SYSCALL_CODE_START,
    Handle,
    Limits,
    Reader,
    RPCCode,
    ServerStatus,
    TensorDesc,
    decode_copy_head,
    decode_pseq,
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
from .session import Session, session_of_module

__all__ = ["Endpoint", "serve"]

log = logging.getLogger("pytvm.rpc.endpoint")

_CODES = {int(code): code for code in RPCCode}
MAX_PACKET_FUNC = "tvm.rpc.server.GetCRTMaxPacketSize"
_COPY_WINDOW = 2  # copy packets in flight (see _copy_to_remote_pipelined; more measured slower)


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
        self.serving_session: Session | None = None
        self._lock = threading.RLock()
        self._max_transfer: int | None = None  # bytes of data per copy packet, once asked
        self._hops: HopTable | None = None  # hop-local functions, made on first lookup
        self._after_reply: Callable[[], None] | None = None
        self._reply_bytes = 0  # of the last reply received (only kept while tracing)
        self._error_reply: BaseException | None = None  # raised for a complete kException

    # ------------------------------------------------------------------ client side

    def _request_span(self, code: RPCCode, nbytes: int, **attrs: Any) -> _trace.Span:
        name = code_name(code)
        return _trace.begin(
            "endpoint", name, code=name, request_bytes=nbytes, peer=self.channel.peer, **attrs
        )

    def _end_request(self, span: _trace.Span) -> None:
        _trace.end(span, reply_bytes=self._reply_bytes)

    def _serving_span(self, session: Session, method: str, **attrs: Any) -> _trace.Span:
        name = f"{type(session).__name__}.{method}"
        return _trace.begin("serving session", name, session=session.name, **attrs)

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
        step and the connection breaks (``what`` says which request was cut off)."""
        if exc is self._error_reply:
            self._error_reply = None
            return
        self._error_reply = None
        self.break_stream(what, exc)

    def _reply(self) -> tuple[int, int]:
        """Wait for the reply to our request: (code, body bytes left). kException raises; a
        request from the peer is served first (the endpoint is symmetric)."""
        while True:
            try:
                code, left = self._next_packet()
            except _PeerClosed:
                self.closed = True
                raise ConnectionError(
                    f"{self.channel.peer} closed the RPC channel while a reply was awaited"
                ) from None
            if code == RPCCode.RETURN or code == RPCCode.COPY_ACK:
                if _trace.ON:
                    self._reply_bytes = left + 12
                return code, left
            if code == RPCCode.EXCEPTION:
                values = decode_pseq(Reader(self._read(left), self.limits), "exception")
                self._raise_remote(str(values[0]) if values else "RPCError: empty exception")
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
        r = Reader(self._read(left), self.limits)
        values = decode_pseq(r, "return values")
        r.expect_end("kReturn")
        return values

    def _request(self, code: RPCCode, packet: bytes, **attrs: Any) -> list[Any]:
        """Send one request packet and return its kReturn values (a traced span when on)."""
        with self._lock:
            try:
                if not _trace.ON:
                    self._send(packet)
                    return self._return_values()
                span = self._request_span(code, len(packet), **attrs)
                try:
                    self._send(packet)
                    return self._return_values()
                finally:
                    self._end_request(span)
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
            span = (
                self._request_span(code, len(packet), pipelined=len(arg_lists))
                if _trace.ON
                else None
            )
            errors: list[BaseException] = []
            try:
                self._send(packet)
                for _ in arg_lists:
                    self._collect_return(errors)
            except BaseException as exc:
                self._failed(f"{len(arg_lists)} pipelined {code_name(code)} requests", exc)
                raise
            if span is not None:
                self._end_request(span)
            if errors:
                raise errors[0]

    def _collect_return(self, errors: list[BaseException]) -> None:
        """Read one kReturn of a pipelined request; an error reply is added to ``errors`` (the
        stream stays in step), anything else propagates."""
        try:
            self._return_values()
        except RPCError as err:
            if err is not self._error_reply:
                raise
            self._error_reply = None
            errors.append(err)

    def max_transfer(self, ndim: int) -> int:
        """Data bytes per copy packet: the peer's ``GetCRTMaxPacketSize`` minus the copy header,
        asked once per endpoint (unbounded when the peer has no such function)."""
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
        """kCopyFromRemote into ``out`` (its length is the byte count), split as above."""
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
            span = (
                self._request_span(
                    RPCCode.COPY_TO_REMOTE, len(head) + len(chunk), data_bytes=len(chunk)
                )
                if _trace.ON
                else None
            )
            try:
                self._send(head, chunk)
                self._return_values()
            finally:
                if span is not None:
                    self._end_request(span)

    def _copy_from_remote_packet(self, desc: TensorDesc, chunk: memoryview, start: int) -> None:
        """One kCopyFromRemote of ``len(chunk)`` bytes at ``start`` into ``chunk``."""
        part = _at_offset(desc, desc.byte_offset + start)
        head = encode_copy_from_remote(part, len(chunk))
        span = (
            self._request_span(RPCCode.COPY_FROM_REMOTE, len(head), data_bytes=len(chunk))
            if _trace.ON
            else None
        )
        try:
            self._send(head)
            code, left = self._reply()
            if code != RPCCode.COPY_ACK or left != len(chunk):
                self._skip(left)
                raise ProtocolError(
                    f"expected kCopyAck of {len(chunk)} bytes, got code {code} of {left}"
                )
            self._read_into(chunk)
        finally:
            if span is not None:
                self._end_request(span)

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
                except Exception as err:  # noqa: BLE001 - a hop that is already gone
                    log.info("%s: closing the serving session: %s", self.name, err)

    def _serve_packet(self, code: RPCCode, left: int) -> None:
        """Handle one request whose code is read and ``left`` body bytes follow."""
        span = (
            _trace.begin("server", code_name(code), code=code_name(code), request_bytes=left + 12)
            if _trace.ON
            else None
        )
        try:
            if code == RPCCode.COPY_TO_REMOTE:
                reply_parts: tuple[bytes | memoryview, ...] = (self._serve_copy_to_remote(left),)
            else:
                body = self._read(left)
                try:
                    reply_parts = self._dispatch(code, Reader(body, self.limits))
                except Exception as err:  # noqa: BLE001 - every failure goes back to the caller
                    if not isinstance(err, (TVMError, ValueError, TypeError, KeyError, OSError)):
                        log.debug("%s: %s", self.name, err, exc_info=True)
                    reply_parts = (encode_exception(format_error(err)),)
            self._send(*reply_parts)
        finally:
            if span is not None:
                _trace.end(span, reply_bytes=self._sent_bytes)
        if self._after_reply is not None:
            action, self._after_reply = self._after_reply, None
            action()

    def _hop_table(self) -> HopTable:
        if self._hops is None:
            self._hops = HopTable(lambda: self.serving_session, self._queue_after_reply)
        return self._hops

    def _queue_after_reply(self, action: Callable[[], None]) -> None:
        self._after_reply = action

    def _session(self) -> Session:
        if self.serving_session is None:
            raise RPCError("the server is not initialized: send kInitServer first")
        return self.serving_session

    def _dispatch(self, code: RPCCode, r: Reader) -> tuple[bytes | memoryview, ...]:
        if code == RPCCode.CALL_FUNC:
            handle = r.u64("function handle")
            args = decode_pseq(r)
            r.expect_end("kCallFunc")
            if self._hops is not None and self._hops.owns(handle):
                values = self._hops.call(handle, args)
                return (encode_call_return(values[0], values[1:]),)
            session = self._session()
            span = self._serving_span(session, "call_func") if _trace.ON else None
            try:
                values = session.call_func(handle, args)
            finally:
                if span is not None:
                    _trace.end(span)
            return (encode_call_return(values[0], values[1:]),)
        if code >= SYSCALL_CODE_START:
            args = decode_pseq(r, f"{code.name} args")
            r.expect_end(code.name)
            if code == RPCCode.GET_GLOBAL_FUNC and _is_hop_name(args):
                return (encode_return([self._hop_table().lookup(str(args[0]))]),)
            if (
                code == RPCCode.FREE_HANDLE
                and self._hops is not None
                and _is_hop_handle(self._hops, args)
            ):
                self._hops.free(args[0].value)
                return (encode_return([None]),)
            session = self._session()
            span = self._serving_span(session, f"syscall({code_name(code)})") if _trace.ON else None
            try:
                result = session.syscall(code, args)
            finally:
                if span is not None:
                    _trace.end(span)
            return (encode_return([result]),)
        if code == RPCCode.COPY_FROM_REMOTE:
            desc, nbytes = decode_copy_head(r, "kCopyFromRemote")
            r.expect_end("kCopyFromRemote")
            session = self._session()
            span = (
                self._serving_span(session, "copy_from_remote", bytes=nbytes) if _trace.ON else None
            )
            try:
                data = session.copy_from_remote(desc, nbytes)
            finally:
                if span is not None:
                    _trace.end(span)
            return (encode_copy_ack(nbytes), data)
        if code == RPCCode.INIT_SERVER:
            version = r.text("protocol version")
            args = decode_pseq(r, "constructor args")
            r.expect_end("kInitServer")
            self._init_server(version, args)
            return (encode_return([None]),)
        raise RPCError(f"{code.name} is a reply code, not a request (status UnknownRPCCode)")

    def _init_server(self, version: str, args: list[Any]) -> None:
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
        """Receive a kCopyToRemote whose payload may be large; returns the reply packet."""
        head_fixed = 24  # u64 data, i32 device type, i32 device id, i32 ndim, dtype
        if left < head_fixed:
            self._skip(left)
            return encode_exception("ProtocolError: kCopyToRemote shorter than its descriptor")
        fixed = self._read(head_fixed)
        ndim = struct.unpack_from("<i", fixed, 16)[0]
        if ndim < 0 or ndim > self.limits.max_ndim or left < head_fixed + 8 * ndim + 16:
            self._skip(left - head_fixed)
            return encode_exception(f"ProtocolError: kCopyToRemote descriptor ndim {ndim} invalid")
        head = fixed + self._read(8 * ndim + 16)
        nbytes_left = left - len(head)
        try:
            r = Reader(head, self.limits)
            desc, nbytes = decode_copy_head(r, "kCopyToRemote")
            if nbytes != nbytes_left:
                raise ProtocolError(
                    f"kCopyToRemote nbytes {nbytes} disagrees with the {nbytes_left} bytes left "
                    "in the packet"
                )
            session = self._session()
            span = (
                self._serving_span(session, "copy_to_remote", bytes=nbytes) if _trace.ON else None
            )
            target = session.copy_target(desc, nbytes)
        except Exception as err:  # noqa: BLE001 - answer after draining the payload
            self._skip(nbytes_left)
            return encode_exception(format_error(err, with_traceback=False))
        try:
            if target is not None:
                self._read_into(target)
                return encode_return([None])
            data = self._read_staged(nbytes)
            try:
                session.copy_to_remote(desc, memoryview(data))
            except Exception as err:  # noqa: BLE001
                return encode_exception(format_error(err))
            return encode_return([None])
        finally:
            if span is not None:
                _trace.end(span)


def _is_hop_name(args: list[Any]) -> bool:
    """kGetGlobalFunc of a hop-local function (``pytvm.hop.*``)."""
    return len(args) == 1 and isinstance(args[0], str) and args[0].startswith(HOP_PREFIX)


def _is_hop_handle(hops: HopTable, args: list[Any]) -> bool:
    """kFreeHandle of a handle the hop table gave out."""
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
