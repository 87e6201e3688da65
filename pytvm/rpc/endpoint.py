"""The RPC endpoint: reads and writes packets on a channel, as a client or as a server.

As a server (:meth:`Endpoint.serve_forever`) it answers every code of spec section 4 with its
*serving session*, set by kInitServer: ``rpc.LocalSession`` by default, or whatever session the
named constructor returns -- a client session of another endpoint makes this a forwarding hop.
A bad packet is answered with kException and the endpoint keeps serving; only a length field it
cannot trust (or a vanished peer) ends the session.

As a client it issues requests one at a time (a lock spans send and reply) and streams copy
payloads straight between the channel and memory, split to the peer's maximum packet size,
which is looked up once per endpoint.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections.abc import Sequence
from typing import Any

from ..ffi.errors import TVMError, format_error, parse_error
from ..ffi.registry import get_global_func
from .base import PROTOCOL_VERSION, ProtocolError, RPCError, remote_error_class
from .channel import Channel
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

_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")
_CODES = {int(code): code for code in RPCCode}
_CHUNK = 1 << 16
_STAGE_STEP = 1 << 20
MAX_PACKET_FUNC = "tvm.rpc.server.GetCRTMaxPacketSize"


class _PeerClosed(Exception):
    """The peer closed the stream at a packet boundary (a clean end)."""


class Endpoint:
    """One side of an RPC connection over ``channel``."""

    def __init__(
        self,
        channel: Channel,
        name: str = "endpoint",
        remote_key: str = "",
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.channel = channel
        self.name = name
        self.remote_key = remote_key
        self.limits = limits
        self.serving_session: Session | None = None
        self._rbuf = bytearray()
        self._rpos = 0
        self._lock = threading.RLock()
        self._max_transfer: int | None = None  # bytes of data per copy packet, once asked
        self.closed = False

    # ------------------------------------------------------------------ reading

    def _fill(self, n: int) -> None:
        """Make at least ``n`` unread bytes available in the read buffer."""
        if self._rpos and self._rpos == len(self._rbuf):
            self._rbuf.clear()
            self._rpos = 0
        while len(self._rbuf) - self._rpos < n:
            chunk = self.channel.recv(max(_CHUNK, n - (len(self._rbuf) - self._rpos)))
            if not chunk:
                raise ConnectionError(
                    f"{self.channel.peer} closed the channel in the middle of a packet"
                )
            self._rbuf += chunk

    def _read(self, n: int) -> bytes:
        """Exactly ``n`` bytes (small reads come from the buffer)."""
        if len(self._rbuf) - self._rpos < n:
            if n > _STAGE_STEP:
                return bytes(self._read_staged(n))
            self._fill(n)
        start = self._rpos
        self._rpos = start + n
        return bytes(self._rbuf[start : self._rpos])

    def _read_into(self, view: memoryview) -> None:
        """Fill ``view`` exactly: buffered bytes first, then straight from the channel."""
        have = min(len(self._rbuf) - self._rpos, len(view))
        if have:
            view[:have] = self._rbuf[self._rpos : self._rpos + have]
            self._rpos += have
        got = have
        while got < len(view):
            n = self.channel.recv_into(view[got:])
            if n == 0:
                raise ConnectionError(
                    f"{self.channel.peer} closed the channel after {got} of {len(view)} data bytes"
                )
            got += n

    def _read_staged(self, n: int) -> bytearray:
        """``n`` bytes into a buffer that grows as they arrive (a length field alone never
        allocates more than what was actually received plus one step)."""
        out = bytearray()
        while len(out) < n:
            step = min(_STAGE_STEP, n - len(out))
            start = len(out)
            out.extend(bytes(step))
            self._read_into(memoryview(out)[start:])
        return out

    def _skip(self, n: int) -> None:
        while n > 0:
            step = min(n, _STAGE_STEP)
            self._read(step)
            n -= step

    def _packet_length(self) -> int:
        """The next non-empty packet's body length; ``_PeerClosed`` at a clean end of stream."""
        while True:
            if len(self._rbuf) - self._rpos < 8:
                if self._rpos == len(self._rbuf):
                    self._rbuf.clear()
                    self._rpos = 0
                    chunk = self.channel.recv(_CHUNK)
                    if not chunk:
                        raise _PeerClosed()
                    self._rbuf += chunk
                self._fill(8)
            size: int = _U64.unpack_from(self._rbuf, self._rpos)[0]
            self._rpos += 8
            if size == 0:
                continue  # an empty packet is padding
            if size < 4 or size > self.limits.max_packet:
                raise ProtocolError(
                    f"packet length {size} outside 4..{self.limits.max_packet}; the stream "
                    "cannot be trusted any more"
                )
            return size

    def _next_packet(self) -> tuple[int, int]:
        """``(code, body bytes after the code)`` of the next packet (code not validated)."""
        size = self._packet_length()
        if len(self._rbuf) - self._rpos < 4:
            self._fill(4)
        (code,) = _I32.unpack_from(self._rbuf, self._rpos)
        self._rpos += 4
        return code, size - 4

    # ------------------------------------------------------------------ client side

    def _send(self, *parts: bytes | memoryview) -> None:
        if self.closed:
            raise RPCError(f"{self.name}: the RPC session to {self.channel.peer} is closed")
        self.channel.send_parts(parts)

    def _raise_remote(self, text: str) -> None:
        err = parse_error(text, context=f"error from RPC peer {self.channel.peer}")
        cls = remote_error_class(type(err))
        remote = cls(*err.args)
        remote.traceback = err.traceback
        for note in getattr(err, "__notes__", ()):
            remote.add_note(note)
        raise remote

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

    def init_server(self, args: Sequence[Any] = (), version: str = PROTOCOL_VERSION) -> None:
        """Send kInitServer (session constructor ``args``) and wait for the reply."""
        with self._lock:
            self._send(encode_init_server(args, version))
            self._return_values()

    def call(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """kCallFunc; returns the kReturn values (the result's type index first)."""
        with self._lock:
            if self.closed:
                self._send()  # raises the "closed" error
            self.channel.send(encode_call(handle, args))
            return self._return_values()

    def syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """A syscall; returns its one result value."""
        with self._lock:
            self._send(encode_syscall(code, args))
            values = self._return_values()
        if len(values) != 1:
            raise ProtocolError(f"{code.name} reply has {len(values)} values, expected 1")
        return values[0]

    def syscalls_pipelined(self, code: RPCCode, arg_lists: Sequence[Sequence[Any]]) -> None:
        """Send several syscalls back to back, then read all replies (used to free handles)."""
        with self._lock:
            self._send(b"".join(encode_syscall(code, args) for args in arg_lists))
            errors = []
            for _ in arg_lists:
                try:
                    self._return_values()
                except RPCError as err:
                    errors.append(err)
            if errors:
                raise errors[0]

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
            for start in range(0, max(len(data), 1), step):
                chunk = data[start : start + step]
                part = _at_offset(desc, desc.byte_offset + start)
                self._send(encode_copy_to_remote(part, len(chunk)), chunk)
                self._return_values()

    def copy_from_remote(self, desc: TensorDesc, out: memoryview) -> None:
        """kCopyFromRemote into ``out`` (its length is the byte count), split as above."""
        out = out.cast("B")
        step = self.max_transfer(len(desc.shape))
        with self._lock:
            for start in range(0, max(len(out), 1), step):
                chunk = out[start : start + step]
                part = _at_offset(desc, desc.byte_offset + start)
                self._send(encode_copy_from_remote(part, len(chunk)))
                code, left = self._reply()
                if code != RPCCode.COPY_ACK or left != len(chunk):
                    self._skip(left)
                    raise ProtocolError(
                        f"expected kCopyAck of {len(chunk)} bytes, got code {code} of {left}"
                    )
                self._read_into(chunk)

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
                    code_number, left = self._next_packet()
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
        if code == RPCCode.COPY_TO_REMOTE:
            reply = self._serve_copy_to_remote(left)
            self._send(reply)
            return
        body = self._read(left)
        try:
            reply_parts = self._dispatch(code, Reader(body, self.limits))
        except Exception as err:  # noqa: BLE001 - every failure goes back to the caller
            if not isinstance(err, (TVMError, ValueError, TypeError, KeyError, OSError)):
                log.debug("%s: %s", self.name, err, exc_info=True)
            reply_parts = (encode_exception(format_error(err)),)
        self._send(*reply_parts)

    def _session(self) -> Session:
        if self.serving_session is None:
            raise RPCError("the server is not initialized: send kInitServer first")
        return self.serving_session

    def _dispatch(self, code: RPCCode, r: Reader) -> tuple[bytes | memoryview, ...]:
        if code == RPCCode.CALL_FUNC:
            handle = r.u64("function handle")
            args = decode_pseq(r)
            r.expect_end("kCallFunc")
            values = self._session().call_func(handle, args)
            return (encode_call_return(values[0], values[1:]),)
        if code >= SYSCALL_CODE_START:
            args = decode_pseq(r, f"{code.name} args")
            r.expect_end(code.name)
            return (encode_return([self._session().syscall(code, args)]),)
        if code == RPCCode.COPY_FROM_REMOTE:
            desc, nbytes = decode_copy_head(r, "kCopyFromRemote")
            r.expect_end("kCopyFromRemote")
            data = self._session().copy_from_remote(desc, nbytes)
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
            target = session.copy_target(desc, nbytes)
        except Exception as err:  # noqa: BLE001 - answer after draining the payload
            self._skip(nbytes_left)
            return encode_exception(format_error(err, with_traceback=False))
        if target is not None:
            self._read_into(target)
            return encode_return([None])
        data = self._read_staged(nbytes)
        try:
            session.copy_to_remote(desc, memoryview(data))
        except Exception as err:  # noqa: BLE001
            return encode_exception(format_error(err))
        return encode_return([None])


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
