"""The trace recorder: timed spans of every layer a call crosses, in this process.

Every call site uses one helper, :func:`span`, as a ``with`` block::

    from ..ffi import trace as _trace

    with _trace.span("endpoint", "kCopyToRemote", request_bytes=n) as sp:
        ...                                   # the work being traced
        sp.set(reply_bytes=m)                 # attributes known only at the end

Off costs one flag test: the helper tests :data:`ON` and, while recording is off, returns the
shared no-op :data:`NO_SPAN` (its ``set``, ``__enter__`` and ``__exit__`` do nothing) -- no
clock read, no allocation, no recorder function. A call site never tests the flag itself.
Attributes that cost something to compute are asked for lazily: :func:`span_of` takes a
function returning ``(name, attributes)`` and calls it only while recording is on::

    with _trace.span_of("Python API", _describe_array, "NDArray.numpy", self):

Pass a plain function and its arguments (not a bound method, which would be made on every call,
on or off). A decision point with no duration is an :func:`instant` (:func:`instant_of`, lazily).
:func:`begin`/:func:`end` are the two halves of a span, for code that cannot hold a ``with``
block open (the Python -> C call path, whose C half keeps its own copy of the flag).

Timestamps are ``time.monotonic_ns()`` (:func:`now`) -- CLOCK_MONOTONIC, which every process of
one machine shares (the C device reads the same clock), so events recorded by the host, a board
server and a device process merge into one timeline. A hop on another machine has its own clock:
``pytvm.rpc.sessions.hop`` measures its offset when it collects the hop's events and shifts them
onto the collector's clock. Each event carries the process id, the process label
("host", "board", "server", "device"), the hop index (0 = the process that started the trace,
1 = the first RPC server, ...), the native thread id and free-form attributes (RPC code name,
byte counts, device).

Only spans that begin *and* end while recording is on are kept: the control traffic that turns
tracing on and off (``pytvm.hop.trace_start``/``trace_stop``, see ``pytvm.rpc.sessions.hop``)
therefore never shows up in a trace.

Layers (the ``layer`` of an event, lowest hop first): ``Python API``, ``DeviceAPI.get``,
``client session``, ``endpoint``, ``wire``, ``server``, ``serving session``,
``transport channel``, ``MinRPC``, ``device API``.

Transport channel hook point (a ``with`` block in a channel's ``send``/``recv``;
pytvm.contrib.hexagon's ``HexagonTransportChannel`` is the intended user)::

    with _trace.span("transport channel", "send", bytes=len(data)):

Examples
--------
>>> from pytvm.ffi import trace
>>> trace.start("host")
>>> with trace.span("Python API", "demo", nbytes=8):
...     pass
>>> trace.stop()
>>> [(e.layer, e.name, e.attrs["nbytes"]) for e in trace.take()]
[('Python API', 'demo', 8)]
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LAYERS",
    "NO_SPAN",
    "ON",
    "Event",
    "TraceSpan",
    "begin",
    "end",
    "hop_index",
    "instant",
    "instant_of",
    "now",
    "on_switch",
    "process_label",
    "span",
    "span_of",
    "start",
    "stop",
    "take",
]

#: Whether this process records. Read it as ``_trace.ON`` at the call site (one global lookup).
ON: bool = False

#: The layer names, in the order a remote call crosses them.
LAYERS: tuple[str, ...] = (
    "Python API",
    "DeviceAPI.get",
    "client session",
    "endpoint",
    "wire",
    "server",
    "serving session",
    "transport channel",
    "MinRPC",
    "device API",
)


@dataclass(frozen=True, slots=True)
class Event:
    """One recorded span (``dur`` > 0 or a zero-length span) or instant (``instant``)."""

    layer: str
    name: str
    ts: int  # begin, CLOCK_MONOTONIC nanoseconds
    dur: int  # nanoseconds
    pid: int
    process: str
    hop: int
    thread: int
    attrs: Mapping[str, Any] = field(default_factory=dict)
    instant: bool = False

    @property
    def end(self) -> int:
        """End time in nanoseconds."""
        return self.ts + self.dur

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the form events cross RPC hops in)."""
        return {
            "layer": self.layer,
            "name": self.name,
            "ts": self.ts,
            "dur": self.dur,
            "pid": self.pid,
            "process": self.process,
            "hop": self.hop,
            "thread": self.thread,
            "attrs": dict(self.attrs),
            "instant": self.instant,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        """The event a :meth:`to_dict` dict describes."""
        return cls(
            layer=str(d["layer"]),
            name=str(d["name"]),
            ts=int(d["ts"]),
            dur=int(d.get("dur", 0)),
            pid=int(d.get("pid", 0)),
            process=str(d.get("process", "?")),
            hop=int(d.get("hop", 0)),
            thread=int(d.get("thread", 0)),
            attrs=dict(d.get("attrs", {})),
            instant=bool(d.get("instant", False)),
        )


@dataclass(slots=True)
class TraceSpan:
    """A span that has begun; :func:`end` (or leaving its ``with`` block) records it. ``attrs``
    may be added to meanwhile (:meth:`set`).
    """

    layer: str
    name: str
    ts: int
    attrs: dict[str, Any]

    def set(self, **attrs: Any) -> None:
        """Add attributes (known only once the work is done)."""
        self.attrs.update(attrs)

    def __enter__(self) -> TraceSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        end(self)


class _NoSpan:
    """What :func:`span` returns while recording is off: does nothing, records nothing."""

    __slots__ = ()

    @property
    def attrs(self) -> dict[str, Any]:
        """A fresh dict each time (whatever is written to it is dropped)."""
        return {}

    def set(self, **attrs: Any) -> None:
        """Drop ``attrs``."""

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


#: The shared no-op span (one object for every call site while recording is off).
NO_SPAN = _NoSpan()

# While recording is off, the ``with`` statement is most of what a span costs: with its methods
# as C callables (no Python frame) it costs half as much. ``__enter__`` gives back NO_SPAN;
# ``__exit__`` and ``set`` return "" (falsy: an exception raised in the block propagates).
_NoSpan.__enter__ = staticmethod(itertools.repeat(NO_SPAN).__next__)  # type: ignore[assignment,method-assign]
_NoSpan.__exit__ = staticmethod("".format)  # type: ignore[assignment,method-assign]
_NoSpan.set = staticmethod("".format)  # type: ignore[assignment,method-assign]


class _Recorder:
    """The event buffer, its lock and this process's labels (all reset in a forked child)."""

    __slots__ = ("events", "hop", "lock", "pid", "process")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.lock = threading.Lock()
        self.process = "host"
        self.hop = 0
        self.pid = os.getpid()


_rec = _Recorder()


_switch_hooks: list[Callable[[bool], None]] = []


def on_switch(hook: Callable[[bool], None]) -> None:
    """Call ``hook(ON)`` now and whenever recording starts or stops in this process (for code
    that keeps its own copy of the flag, such as the fast-call extension written in C).
    """
    _switch_hooks.append(hook)
    hook(ON)


def _switched() -> None:
    for hook in _switch_hooks:
        hook(ON)


def _set_on(on: bool) -> None:
    """Set :data:`ON` and tell the hooks."""
    global ON  # noqa: PLW0603 - the process-wide trace switch, read as ``_trace.ON`` per call
    ON = on
    _switched()


def _after_fork_in_child() -> None:
    # A forked child records only once asked to (it is another process); it keeps its labels.
    _rec.events.clear()
    _rec.lock = threading.Lock()
    _rec.pid = os.getpid()
    _set_on(False)


os.register_at_fork(after_in_child=_after_fork_in_child)


def start(process: str = "host", hop: int = 0) -> None:
    """Drop what was recorded, label this process and start recording."""
    with _rec.lock:
        _rec.events.clear()
        _rec.process, _rec.hop, _rec.pid = process, int(hop), os.getpid()
    _set_on(True)


def stop() -> None:
    """Stop recording (spans still open are dropped when they end)."""
    _set_on(False)


def take() -> list[Event]:
    """The events recorded so far, in recording order; the buffer is emptied."""
    with _rec.lock:
        out = list(_rec.events)
        _rec.events.clear()
    return out


def process_label() -> str:
    """The label given to this process by :func:`start`."""
    return _rec.process


def hop_index() -> int:
    """The hop index given to this process by :func:`start`."""
    return _rec.hop


def _record(layer: str, name: str, ts: int, dur: int, attrs: dict[str, Any], inst: bool) -> None:
    rec = _rec
    event = Event(
        layer, name, ts, dur, rec.pid, rec.process, rec.hop, threading.get_native_id(), attrs, inst
    )
    with rec.lock:
        rec.events.append(event)


def now() -> int:
    """The trace clock: ``time.monotonic_ns()`` (what event timestamps are read from)."""
    return time.monotonic_ns()


def begin(layer: str, name: str, **attrs: Any) -> TraceSpan:
    """Open a span now (call it only when :data:`ON`)."""
    return TraceSpan(layer, name, time.monotonic_ns(), attrs)


def end(span: TraceSpan, **attrs: Any) -> None:
    """Close ``span`` now, adding ``attrs``; kept only if recording is still on."""
    if not ON:
        return
    now = time.monotonic_ns()
    if attrs:
        span.attrs.update(attrs)
    _record(span.layer, span.name, span.ts, now - span.ts, span.attrs, False)


def span(layer: str, name: str, **attrs: Any) -> TraceSpan | _NoSpan:
    """A span around a ``with`` block: a :class:`TraceSpan` opened now and recorded when the block
    is left, or :data:`NO_SPAN` when recording is off.
    """
    if not ON:
        return NO_SPAN
    return TraceSpan(layer, name, time.monotonic_ns(), attrs)


def span_of(
    layer: str, describe: Callable[..., tuple[str, dict[str, Any]]], *args: Any
) -> TraceSpan | _NoSpan:
    """Like :func:`span`, with the name too computed only when on: ``describe(*args)`` returns
    ``(name, attrs)``.
    """
    if not ON:
        return NO_SPAN
    name, attrs = describe(*args)
    return TraceSpan(layer, name, time.monotonic_ns(), attrs)


def instant(layer: str, name: str, **attrs: Any) -> None:
    """Record a point in time (a decision, such as the device API ``DeviceAPI.get`` chose)."""
    if ON:
        _record(layer, name, time.monotonic_ns(), 0, attrs, True)


def instant_of(layer: str, describe: Callable[..., tuple[str, dict[str, Any]]], *args: Any) -> None:
    """Like :func:`instant`, with name and attributes computed only when on:
    ``describe(*args)`` returns ``(name, attrs)``.
    """
    if ON:
        name, attrs = describe(*args)
        _record(layer, name, time.monotonic_ns(), 0, attrs, True)
