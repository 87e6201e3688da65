"""Hop-local functions: trace control that every pytvm RPC hop answers itself, not its last hop.

A nested session forwards every request to the last hop, so a function a server should run *on
itself* needs a name the endpoint recognises: a kGetGlobalFunc for a name starting with
``pytvm.hop.`` is answered by the endpoint with a handle from its own :class:`HopTable` (values
carry :data:`HOP_TAG`, which no forwarded handle -- a user-space pointer -- has), and kCallFunc /
kFreeHandle on such a handle are handled there too. Each function acts on this process and then
passes the same call on to the next hop through the serving session when that session forwards
(a :class:`~pytvm.rpc.sessions.forwarding_session.ForwardingSession`):

``pytvm.hop.trace_start(hop_index)``
    Start recording (``pytvm.ffi.trace``) labelled ``board`` (this server forwards) or
    ``server`` (it is the last hop) with ``hop_index``; the next hop gets ``hop_index + 1``.
    The next hop is started first, and this hop only after its reply is sent, so the control
    traffic is not in the trace.
``pytvm.hop.trace_stop()``
    Stop recording here, then on the next hop.
``pytvm.hop.trace_collect() -> bytes``
    JSON ``{"events": [...], "notes": [...]}``: this hop's events followed by the next hop's.
``pytvm.hop.trace_clock() -> int``
    This hop's trace clock (:func:`pytvm.ffi.trace.now`), answered here and never forwarded.

Clock alignment. Each hop collects the events of the hop behind it and puts them on its own
clock before passing them back, so the client ends up with every event on its clock. After
``trace_collect`` the collector calls ``trace_clock`` a few times and keeps the shortest round
trip ``t0 -> remote -> t3`` (:func:`clock_offset`, NTP's midpoint estimate): when
``t0 <= remote <= t3`` the two clocks cannot be told apart (on one machine CLOCK_MONOTONIC is
shared, and this always holds) and nothing is shifted; otherwise the hop's events are shifted by
``remote - (t0 + t3) / 2``, accurate to half the round trip. Shifted events carry the attributes
``clock_shift_ns`` and ``clock_error_ns`` and the trace gets a note. ``trace_clock`` is optional:
a hop without it (the C device) is not aligned, and the renderer clamps what falls outside its
request (``pytvm.viz.trace``).

The C device (``src/crt/minrpc/minrpc_trace.c``) registers the same three names as global
functions; its ``trace_collect`` answers a compact binary ring dump that
:func:`decode_collected` turns into events (layers ``MinRPC`` and ``device API``).

A server without these functions (Apache TVM's own server) answers kGetGlobalFunc with a null
handle: :meth:`HopLink.open` then returns None and the trace notes that hop as not traceable.
The client side (:func:`start_trace` / :func:`stop_trace`) applies the same protocol to every
live forwarding session in the session table.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...ffi import trace as _trace
from ...ffi.errors import TVMError
from ...ffi.type_index import TypeIndex
from ..wire.base import RPCError
from ..wire.protocol import Handle, RPCCode
from .session import SessionBase, live_sessions

__all__ = [
    "HOP_PREFIX",
    "HOP_TAG",
    "TRACE_CLOCK",
    "TRACE_COLLECT",
    "TRACE_START",
    "TRACE_STOP",
    "HopLink",
    "HopTable",
    "clock_offset",
    "code_name",
    "decode_collected",
    "start_trace",
    "stop_trace",
]

HOP_PREFIX = "pytvm.hop."
TRACE_START = HOP_PREFIX + "trace_start"
TRACE_STOP = HOP_PREFIX + "trace_stop"
TRACE_COLLECT = HOP_PREFIX + "trace_collect"
TRACE_CLOCK = HOP_PREFIX + "trace_clock"
_NAMES = (TRACE_START, TRACE_STOP, TRACE_COLLECT)  # every traceable hop has these
_SERVED = (*_NAMES, TRACE_CLOCK)  # what a Python hop answers

#: Round trips :meth:`HopLink.clock_offset` takes; the shortest one is used.
CLOCK_SAMPLES = 5

#: Bit set in every hop-local handle; user-space pointers (forwarded handles) never have it.
HOP_TAG = 1 << 63

_CODE_NAMES = {
    int(code): "k" + "".join(part.capitalize() for part in code.name.split("_")) for code in RPCCode
}


def code_name(code: int) -> str:
    """TVM's name of an RPC code: ``7`` -> ``"kCopyToRemote"``."""
    return _CODE_NAMES.get(int(code), f"code {int(code)}")


# ------------------------------------------------------------------ the next hop, from this one


class HopLink:
    """The trace functions of the hop behind a forwarding ``session``, looked up once.

    The handles are fetched before the next hop records and freed after it stopped, so none of
    this traffic lands in the trace.
    """

    def __init__(self, session: SessionBase, handles: dict[str, int]) -> None:
        self.session = session
        self.handles = handles

    @classmethod
    def open(cls, session: SessionBase) -> HopLink | None:
        """The link, or None when the next hop has no ``pytvm.hop.*`` functions."""
        handles: dict[str, int] = {}
        for name in _SERVED:
            value = _lookup(session, name)
            if value is not None:
                handles[name] = value
            elif name in _NAMES:
                HopLink(session, handles).close()
                return None
        return cls(session, handles)

    def start(self, hop: int) -> None:
        """Start the next hop (and the hops behind it) as hop number ``hop``."""
        self.session.call_func(self.handles[TRACE_START], [int(hop)])

    def stop(self) -> None:
        """Stop the next hop and the hops behind it."""
        self.session.call_func(self.handles[TRACE_STOP], [])

    def collect(self) -> tuple[list[_trace.Event], list[str]]:
        """Events and notes of the next hop and the hops behind it, on this process's clock."""
        values = self.session.call_func(self.handles[TRACE_COLLECT], [])
        blob = values[1] if len(values) > 1 else b""
        if isinstance(blob, str):
            blob = blob.encode()
        events, notes = decode_collected(bytes(blob))
        try:
            measured = self.clock_offset()
        except (RPCError, TVMError, OSError) as err:
            notes.append(f"{self.session.name}: its clock could not be read, not aligned: {err}")
            return events, notes
        if measured is None or measured[0] == 0:
            return events, notes
        offset, error = measured
        notes.append(
            f"{self.session.name}: its clock is {offset / 1e6:+.3f} ms from this hop's "
            f"(measured to +/- {error / 1e3:.1f} us); its {len(events)} events were shifted"
        )
        return [_shifted(e, -offset, error) for e in events], notes

    def clock_offset(self) -> tuple[int, int] | None:
        """``(offset, error)`` in ns of the next hop's trace clock from this one's (see
        :func:`clock_offset`), from the shortest of :data:`CLOCK_SAMPLES` round trips; None
        when the next hop has no ``trace_clock`` (the C device).
        """
        handle = self.handles.get(TRACE_CLOCK)
        if handle is None:
            return None
        best: tuple[int, int, int] | None = None
        for _ in range(CLOCK_SAMPLES):
            t0 = _trace.now()
            values = self.session.call_func(handle, [])
            t3 = _trace.now()
            remote = values[1] if len(values) > 1 else None
            if not isinstance(remote, int) or isinstance(remote, bool):
                raise RPCError(f"{TRACE_CLOCK} answered {remote!r}, expected an int")
            if best is None or t3 - t0 < best[2] - best[0]:
                best = (t0, remote, t3)
        assert best is not None
        return clock_offset(*best)

    def close(self) -> None:
        """Free the handles on the next hop (errors ignored: it may be gone)."""
        for handle in self.handles.values():
            try:
                self.session.syscall(RPCCode.FREE_HANDLE, [Handle(handle)])
            except (RPCError, TVMError, OSError, ValueError):
                pass
        self.handles = {}


def _lookup(session: SessionBase, name: str) -> int | None:
    """The handle of ``name`` on the next hop, or None when it has no such function."""
    try:
        handle = session.syscall(RPCCode.GET_GLOBAL_FUNC, [name])
    except (AttributeError, RPCError, TVMError, OSError):
        return None
    value = handle.value if isinstance(handle, Handle) else handle
    if not isinstance(value, int) or isinstance(value, bool) or not value:
        return None
    return value


def clock_offset(t0: int, remote: int, t3: int) -> tuple[int, int]:
    """``(offset, error)``: how far a hop's clock is ahead of this one's, from one round trip
    that left at ``t0`` and came back at ``t3`` (this clock) while the hop read ``remote``.

    ``offset`` is 0 when ``t0 <= remote <= t3`` (the clocks agree to within the round trip, as a
    clock shared by one machine always does), else NTP's midpoint ``remote - (t0 + t3) / 2``;
    ``error`` bounds its inaccuracy, half the round trip.

    Examples
    --------
    >>> clock_offset(1_000, 1_400, 2_000)  # one clock: the remote read lies inside the trip
    (0, 500)
    >>> clock_offset(1_000, 90_000, 2_000)  # 88.5 us ahead, +/- 0.5 us
    (88500, 500)
    """
    error = (t3 - t0) // 2
    if t0 <= remote <= t3:
        return 0, error
    return remote - (t0 + t3) // 2, error


def _shifted(event: _trace.Event, shift: int, error: int) -> _trace.Event:
    """``event`` moved by ``shift`` ns, with the shift and its error added to its attributes."""
    attrs = dict(event.attrs)
    attrs["clock_shift_ns"] = int(attrs.get("clock_shift_ns", 0)) + shift
    attrs["clock_error_ns"] = int(attrs.get("clock_error_ns", 0)) + error
    return dataclasses.replace(event, ts=event.ts + shift, attrs=attrs)


def _finish(link: HopLink, what: str) -> tuple[list[_trace.Event], list[str]]:
    """Stop (already done by the caller), collect and close ``link``; a failure is a note."""
    try:
        return link.collect()
    except (RPCError, TVMError, OSError, ValueError) as err:
        return [], [f"{what}: collecting its trace failed: {err}"]
    finally:
        link.close()


# ------------------------------------------------------------------ decoding a device's ring

_DEVICE_MAGIC = b"PTVT"
_DEVICE_HEAD = struct.Struct("<4sIIIII")  # magic, version, pid, hop, count, dropped
_DEVICE_EVENT = struct.Struct("<QHHIQ")  # t_ns, kind, phase, code, bytes
_DEVICE_KINDS = {
    1: ("MinRPC", None),
    2: ("device API", "TVMDeviceCopyDataFromTo"),
    3: ("device API", "TVMDeviceAllocDataSpace"),
    4: ("device API", "TVMDeviceFreeDataSpace"),
    5: ("device API", "TVMSynchronize"),
}
_DEVICE_TYPES = {1: "cpu", 2: "cuda", 4: "opencl", 7: "vulkan", 12: "ext_dev", 16: "hexagon"}


def decode_collected(blob: bytes) -> tuple[list[_trace.Event], list[str]]:
    """Events and notes from a ``pytvm.hop.trace_collect`` result (JSON of a Python hop, or the
    binary ring of a C device).
    """
    if blob.startswith(_DEVICE_MAGIC):
        return _decode_device(blob), []
    if not blob:
        return [], []
    data = json.loads(blob)
    events = [_trace.Event.from_dict(d) for d in data.get("events", [])]
    return events, [str(n) for n in data.get("notes", [])]


def _decode_device(blob: bytes) -> list[_trace.Event]:
    """Begin/end records of the device ring paired into spans (unpaired ones are the trace
    control's own packets, or fell out of the ring: dropped).
    """
    _magic, version, pid, hop, count, dropped = _DEVICE_HEAD.unpack_from(blob, 0)
    if version != 1 or len(blob) < _DEVICE_HEAD.size + count * _DEVICE_EVENT.size:
        raise RPCError(f"device trace: version {version} with {count} events, {len(blob)} bytes")
    events: list[_trace.Event] = []
    stack: list[tuple[int, int, int, int]] = []  # kind, code, bytes, t_ns
    for i in range(count):
        t_ns, kind, phase, code, nbytes = _DEVICE_EVENT.unpack_from(
            blob, _DEVICE_HEAD.size + i * _DEVICE_EVENT.size
        )
        if phase == 0:
            stack.append((kind, code, nbytes, t_ns))
            continue
        # an end closes the innermost open span of its kind; anything opened inside is lost
        while stack and stack[-1][0] != kind:
            stack.pop()
        if not stack:
            continue
        _, code0, nbytes0, t0 = stack.pop()
        layer, name = _DEVICE_KINDS.get(kind, ("device", f"kind {kind}"))
        attrs: dict[str, Any]
        if kind == 1:
            name = code_name(code0)
            attrs = {"code": name, "bytes": nbytes0}
        else:
            attrs = {"device": _DEVICE_TYPES.get(code0, f"type {code0}"), "bytes": nbytes0}
        events.append(_trace.Event(layer, str(name), t0, t_ns - t0, pid, "device", hop, 0, attrs))
    if dropped:
        events.sort(key=lambda e: e.ts)
    return events


# ------------------------------------------------------------------ this hop, as a server


class HopTable:
    """An endpoint's hop-local functions and the handles it gave out for them.

    ``serving`` returns the endpoint's serving session (None before kInitServer); ``after_reply``
    queues an action the endpoint runs once the reply to the current request is sent.
    """

    def __init__(
        self,
        serving: Callable[[], SessionBase | None],
        after_reply: Callable[[Callable[[], None]], None],
    ) -> None:
        self._serving = serving
        self._after_reply = after_reply
        self._handles: dict[int, tuple[str, int]] = {}  # tagged handle -> (name, references)
        self._link: HopLink | None = None
        self._notes: list[str] = []

    def lookup(self, name: str) -> Handle:
        """KGetGlobalFunc of a ``pytvm.hop.*`` name: a tagged handle (0 for an unknown name)."""
        if name not in _SERVED:
            return Handle(0)
        handle = HOP_TAG | (_SERVED.index(name) + 1)
        _, refs = self._handles.get(handle, (name, 0))
        self._handles[handle] = (name, refs + 1)
        return Handle(handle)

    def owns(self, handle: int) -> bool:
        """Whether ``handle`` is one of this table's."""
        return handle in self._handles

    def free(self, handle: int) -> None:
        """KFreeHandle of a tagged handle."""
        name, refs = self._handles[handle]
        if refs <= 1:
            del self._handles[handle]
        else:
            self._handles[handle] = (name, refs - 1)

    def call(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """KCallFunc of a tagged handle; returns the kReturn values."""
        name = self._handles[handle][0]
        if name == TRACE_START:
            hop = args[0] if args else 1
            if not isinstance(hop, int) or isinstance(hop, bool):
                raise RPCError(f"{TRACE_START} takes the hop index (an int), got {hop!r}")
            self._start(hop)
            return [TypeIndex.NONE, None]
        if name == TRACE_STOP:
            self._stop()
            return [TypeIndex.NONE, None]
        if name == TRACE_CLOCK:
            return [TypeIndex.INT, _trace.now()]
        return [TypeIndex.BYTES, self._collect()]

    def _start(self, hop: int) -> None:
        if self._link is not None:
            self._link.close()
        session = self._serving()
        forwards = session is not None and session.forwards
        self._link = HopLink.open(session) if session is not None and forwards else None
        self._notes = []
        if forwards and self._link is None:
            assert session is not None
            self._notes.append(f"hop {hop + 1} ({session.name}) is not traceable")
        if self._link is not None:
            self._link.start(hop + 1)
        label = "board" if forwards else "server"
        self._after_reply(lambda: _start_unless_on(label, hop))

    def _stop(self) -> None:
        _trace.stop()
        if self._link is not None:
            try:
                self._link.stop()
            except (RPCError, TVMError, OSError) as err:
                self._notes.append(f"stopping the next hop failed: {err}")

    def _collect(self) -> bytes:
        events = [e.to_dict() for e in _trace.take()]
        notes = list(self._notes)
        if self._link is not None:
            more, more_notes = _finish(self._link, self._link.session.name)
            self._link = None
            events += [e.to_dict() for e in more]
            notes += more_notes
        return json.dumps({"events": events, "notes": notes}).encode()


def _start_unless_on(label: str, hop: int) -> None:
    if not _trace.ON:  # else this server shares its process with the tracer (a test thread)
        _trace.start(label, hop)


# ------------------------------------------------------------------ the client that traces


def start_trace() -> tuple[list[HopLink], list[str]]:
    """Start every hop behind the live forwarding sessions, then this process (hop 0).

    Returns the links :func:`stop_trace` needs, and notes naming the sessions whose next hop
    has no trace functions (a TVM server): those are left out.
    """
    if _trace.ON:
        raise RPCError("a trace is already recording in this process; traces do not nest")
    links, notes = [], []
    for session in live_sessions():
        if not session.forwards or getattr(session, "closed", False):
            continue
        link = HopLink.open(session)
        if link is None:
            notes.append(f"{session.name} is not traceable (it has no {TRACE_START})")
            continue
        link.start(1)
        links.append(link)
    _trace.start("host", 0)
    return links, notes


def stop_trace(links: Sequence[HopLink]) -> tuple[list[_trace.Event], list[str]]:
    """Stop this process, then every hop; returns all events (by time) and notes."""
    _trace.stop()
    events = _trace.take()
    notes: list[str] = []
    for link in links:
        try:
            link.stop()
        except (RPCError, TVMError, OSError) as err:
            notes.append(f"{link.session.name}: stopping its trace failed: {err}")
    for link in links:
        more, more_notes = _finish(link, link.session.name)
        events += more
        notes += more_notes
    events.sort(key=lambda e: (e.ts, -e.dur))
    return events, notes
