"""The RPC endpoint: reads and writes packets on a channel, as a client or as a server.

As a client it issues requests one at a time (a lock spans send and reply) and streams copy
payloads straight between the channel and memory, split to the peer's maximum packet size,
which is looked up once per endpoint; a hop forwards an incoming copy piece by piece as it
arrives (:meth:`Endpoint.copy_to_remote_streamed`). While tracing is off and the C codec is on
(:mod:`pytvm.rpc.wire._c_codec`), a call is one C encode and, when its kReturn is whole in the
read buffer, one C decode. A request that ends in anything but a complete reply
(Ctrl-C or another exception halfway through a send or a reply, a malformed reply) breaks the
connection: it is closed and every later request raises ``RPCSessionBrokenError`` at once
(see ``pytvm.rpc.wire._packet_io``); an error reply (kException) leaves it in step and usable.
Replies are decoded by :func:`pytvm.rpc.wire.messages.decode_body`, the decoder requests are
dispatched with too.

As a server (:meth:`Endpoint.serve_forever`) it answers requests as its base class
:class:`~pytvm.rpc.sessions.request_dispatch.RequestDispatch` describes; a request that arrives
while a reply is awaited is served first (the endpoint is symmetric).

Tracing (``pytvm.ffi.trace``, each hook one ``with _trace.span...`` block): a client request is
an ``endpoint`` span (code, request and reply bytes); the ``wire`` spans (channel sends and
receives) come from the packet layer underneath (``_packet_io``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ...ffi import trace as _trace
from ...ffi.errors import parse_error
from ..wire._c_codec import CODEC as _CODEC
from ..wire._packet_io import _PeerClosed
from ..wire.base import PROTOCOL_VERSION, ProtocolError, RPCError, remote_error_class
from ..wire.channel import Channel
from ..wire.messages import decode_body
from ..wire.protocol import (
    DEFAULT_LIMITS,
    Handle,
    Limits,
    Reader,
    RPCCode,
    TensorDesc,
    encode_call,
    encode_copy_from_remote,
    encode_copy_to_remote,
    encode_init_server,
    encode_shutdown,
    encode_syscall,
)
from .hop import code_name
from .request_dispatch import CODES, RequestDispatch

__all__ = ["Endpoint", "serve"]

MAX_PACKET_FUNC = "tvm.rpc.server.GetCRTMaxPacketSize"
# The codes a reply loop tests, as module globals (reading them off the enum class is slower).
_RETURN = RPCCode.RETURN
_COPY_ACK = RPCCode.COPY_ACK
_EXCEPTION = RPCCode.EXCEPTION
_CALL_FUNC = RPCCode.CALL_FUNC
_REPLY_CODES = frozenset((RPCCode.RETURN, RPCCode.COPY_ACK))
_COPY_WINDOW = 2  # copy packets in flight (see _copy_to_remote_pipelined; more measured slower)
_FORWARD_PIECE = 256 << 10  # bytes a streamed copy forwards at a time (copy_to_remote_streamed)
_FORWARD_READ_PIECE = 256 << 10  # the most copy_from_remote_streamed receives at a time


class Endpoint(RequestDispatch):
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
        self._lock = threading.RLock()
        self._max_transfer: int | None = None  # bytes of data per copy packet, once asked
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
            if code in _REPLY_CODES:
                self._reply_bytes = left + 12
                return code, left
            if code == _EXCEPTION:
                try:
                    reply = decode_body(_EXCEPTION, Reader(self._read(left), self.limits))
                except ProtocolError as err:
                    self._error_reply = err  # the whole packet was read: still in step
                    raise
                self._raise_remote(reply.text)
            known = CODES.get(code)
            if known is None or self.serving_session is None:
                self._skip(left)
                name = known.name if known is not None else f"unknown code {code}"
                raise ProtocolError(f"{self.channel.peer} sent {name} instead of a reply")
            self._serve_packet(known, left)

    def _return_values(self) -> list[Any]:
        code, left = self._reply()
        if code != _RETURN:
            self._skip(left)
            raise ProtocolError(f"expected kReturn, got {CODES[code].name}")
        return list(decode_body(_RETURN, Reader(self._read(left), self.limits)).values)

    def _request(self, code: RPCCode, packet: bytes, handle: int | None = None) -> list[Any]:
        """Send one request packet and return its kReturn values (a traced span when on);
        ``handle``: the function a kCallFunc calls.
        """
        with self._lock:
            try:
                with _trace.span_of(
                    "endpoint", _describe_request, self, code, packet, handle
                ) as sp:
                    self._send(packet)
                    values = self._return_values()
                    sp.set(reply_bytes=self._reply_bytes)
                    return values
            except BaseException as exc:
                self._failed(_describe(code, handle), exc)
                raise

    def init_server(self, args: Sequence[Any] = (), version: str = PROTOCOL_VERSION) -> None:
        """Send kInitServer (session constructor ``args``) and wait for the reply."""
        self._request(RPCCode.INIT_SERVER, encode_init_server(args, version))

    def call(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """kCallFunc; returns the kReturn values (the result's type index first)."""
        c = _CODEC.module
        if c is None or _trace.ON:
            return self._request(_CALL_FUNC, encode_call(handle, args), handle)
        # The C codec's path: the packet encoded, the reply parsed from the read buffer in one
        # call each; anything but a whole kReturn goes through the general reply loop.
        packet = c.encode_call(handle, args)
        with self._lock:
            try:
                if self.closed:
                    raise self.closed_error()
                self.channel.send(packet)
                values = self._take_return(c)
                return values if values is not None else self._return_values()
            except BaseException as exc:
                self._failed(_describe(_CALL_FUNC, handle), exc)
                raise

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

    def copy_to_remote_streamed(
        self, desc: TensorDesc, nbytes: int, fill: Callable[[memoryview], None]
    ) -> None:
        """KCopyToRemote of ``nbytes`` whose data ``fill(view)`` supplies piece by piece (it fills
        ``view`` exactly): each piece is sent on as soon as it is filled, so a hop forwards a
        copy while its data still arrives (cut-through) instead of storing it all first. Split
        into the peer's packet size with :data:`_COPY_WINDOW` packets in flight, as
        :meth:`copy_to_remote`. An error of ``fill`` breaks this connection (a packet is cut off).
        """
        step = self.max_transfer(len(desc.shape))
        piece = memoryview(bytearray(max(1, min(_FORWARD_PIECE, nbytes))))

        def send_part(head: bytes, start: int, size: int) -> None:
            self.channel.send(head)
            done = 0
            while done < size:
                view = piece[: min(len(piece), size - done)]
                fill(view)
                self.channel.send(view)
                done += len(view)

        with self._lock:
            try:
                if self.closed:
                    raise self.closed_error()
                self._copy_to_remote_windowed(desc, nbytes, step, send_part)
            except BaseException as exc:
                self._failed(f"a streamed copy of {nbytes} bytes to the remote", exc)
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

    def copy_from_remote_streamed(
        self,
        desc: TensorDesc,
        nbytes: int,
        begin: Callable[[], None],
        sink: Callable[[memoryview], None],
    ) -> None:
        """KCopyFromRemote of ``nbytes`` handed on as it arrives: ``begin()`` once the peer has
        accepted the first packet (its kCopyAck head came: an error before it is a plain error
        reply), then ``sink(piece)`` for every piece of data in order. Split into the peer's
        packet size as :meth:`copy_from_remote`. An error of ``sink`` breaks this connection.
        """
        step = self.max_transfer(len(desc.shape))
        piece = memoryview(bytearray(max(1, min(_FORWARD_READ_PIECE, nbytes))))
        with self._lock:
            try:
                if self.closed:
                    raise self.closed_error()
                for start in range(0, max(nbytes, 1), step):
                    size = min(step, nbytes - start)
                    part = _at_offset(desc, desc.byte_offset + start)
                    self._send(encode_copy_from_remote(part, size))
                    code, left = self._reply()
                    if code != RPCCode.COPY_ACK or left != size:
                        self._skip(left)
                        raise ProtocolError(
                            f"expected kCopyAck of {size} bytes, got code {code} of {left}"
                        )
                    if start == 0:
                        begin()
                    done = 0
                    while done < size:  # each receive handed on as it is (no fixed pieces)
                        n = self._read_some(piece[: min(len(piece), size - done)])
                        sink(piece[:n])
                        done += n
            except BaseException as exc:
                self._failed(f"a streamed copy of {nbytes} bytes from the remote", exc)
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
        def send_part(head: bytes, start: int, size: int) -> None:
            self._send(head, data[start : start + size])

        self._copy_to_remote_windowed(desc, len(data), step, send_part)

    def _copy_to_remote_windowed(
        self,
        desc: TensorDesc,
        nbytes: int,
        step: int,
        send_part: Callable[[bytes, int, int], None],
    ) -> None:
        """Send a kCopyToRemote of ``nbytes`` in ``step``-byte packets (one empty packet when
        ``nbytes`` is 0), :data:`_COPY_WINDOW` in flight: ``send_part(head, start, size)`` sends
        each packet's head and its ``size`` bytes from offset ``start``. Every reply is read
        before the first error reply is raised, so the stream stays in step.
        """
        errors: list[BaseException] = []
        in_flight = 0
        for start in range(0, max(nbytes, 1), step):
            size = min(step, nbytes - start)
            part = _at_offset(desc, desc.byte_offset + start)
            send_part(encode_copy_to_remote(part, size), start, size)
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


# ---------------------------------------------------------------------- tracing (only when on)


def _describe_request(
    endpoint: Endpoint, code: RPCCode, packet: bytes, handle: int | None
) -> tuple[str, dict[str, Any]]:
    """Name and attributes of an ``endpoint`` span."""
    attrs = {} if handle is None else {"handle": hex(handle)}
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


def _describe(code: RPCCode, handle: int | None) -> str:
    """A request, as a broken-session message names it."""
    return f"a {code_name(code)} request" + (
        f" (function {hex(handle)})" if handle is not None else ""
    )


def _at_offset(desc: TensorDesc, byte_offset: int) -> TensorDesc:
    return TensorDesc(desc.data, desc.device, desc.dtype, desc.shape, byte_offset)


def serve(channel: Channel, name: str = "server", remote_key: str = "") -> None:
    """Serve RPC requests on an already handshaken ``channel`` until the client is done."""
    endpoint = Endpoint(channel, name, remote_key)
    try:
        endpoint.serve_forever()
    finally:
        channel.close()
