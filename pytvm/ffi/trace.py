"""The trace recorder: timed spans of every layer a call crosses, in this process.

Call sites test the module flag before doing anything, so tracing off costs one global lookup::

    from ..ffi import trace as _trace

    span = _trace.begin("endpoint", "kCopyToRemote", request_bytes=n) if _trace.ON else None
    try:
        ...                                   # the work being traced
    finally:
        if span is not None:
            _trace.end(span, reply_bytes=m)   # attributes known only at the end

or, where a ``with`` block reads better, ``with _trace.span(layer, name, **attrs):`` under an
``if _trace.ON:``. A decision point with no duration is an :func:`instant`.

Timestamps are ``time.monotonic_ns()`` (:func:`now`) -- CLOCK_MONOTONIC, which every process of
one machine shares (the C device reads the same clock), so events recorded by the host, a board
server and a device process merge into one timeline. A hop on another machine has its own clock:
``pytvm.rpc.hop`` measures its offset when it collects the hop's events and shifts them onto the
collector's clock. Each event carries the process id, the process label
("host", "board", "server", "device"), the hop index (0 = the process that started the trace,
1 = the first RPC server, ...), the native thread id and free-form attributes (RPC code name,
byte counts, device).

Only spans that begin *and* end while recording is on are kept: the control traffic that turns
tracing on and off (``pytvm.hop.trace_start``/``trace_stop``, see ``pytvm.rpc.hop``) therefore
never shows up in a trace.

Layers (the ``layer`` of an event, lowest hop first): ``Python API``, ``DeviceAPI.get``,
``client session``, ``endpoint``, ``wire``, ``server``, ``serving session``,
``transport channel``, ``MinRPC``, ``device API``.

Transport channel hook point (one line in a channel's ``send``/``recv``; pytvm.contrib.hexagon's
``HexagonTransportChannel`` is the intended user)::

    sp = _trace.begin("transport channel", "send", bytes=len(data)) if _trace.ON else None

closed with ``if sp is not None: _trace.end(sp)`` in a ``finally``.

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

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ON",
    "LAYERS",
    "Event",
    "Span",
    "begin",
    "end",
    "span",
    "instant",
    "start",
    "stop",
    "take",
    "process_label",
    "on_switch",
    "hop_index",
    "now",
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
class Span:
    """A span that has begun; :func:`end` records it. ``attrs`` may be added to meanwhile."""

    layer: str
    name: str
    ts: int
    attrs: dict[str, Any]


_events: list[Event] = []
_lock = threading.Lock()
_process = "host"
_hop = 0
_pid = os.getpid()


_switch_hooks: list[Callable[[bool], None]] = []


def on_switch(hook: Callable[[bool], None]) -> None:
    """Call ``hook(ON)`` now and whenever recording starts or stops in this process (for code
    that keeps its own copy of the flag, such as the fast-call extension written in C)."""
    _switch_hooks.append(hook)
    hook(ON)


def _switched() -> None:
    for hook in _switch_hooks:
        hook(ON)


def _after_fork_in_child() -> None:
    global ON, _lock, _pid
    ON = False  # a forked child records only once asked to (it is another process)
    _events.clear()
    _lock = threading.Lock()
    _pid = os.getpid()
    _switched()


os.register_at_fork(after_in_child=_after_fork_in_child)


def start(process: str = "host", hop: int = 0) -> None:
    """Drop what was recorded, label this process and start recording."""
    global ON, _process, _hop, _pid
    with _lock:
        _events.clear()
        _process, _hop, _pid = process, int(hop), os.getpid()
    ON = True
    _switched()


def stop() -> None:
    """Stop recording (spans still open are dropped when they end)."""
    global ON
    ON = False
    _switched()


def take() -> list[Event]:
    """The events recorded so far, in recording order; the buffer is emptied."""
    with _lock:
        out = list(_events)
        _events.clear()
    return out


def process_label() -> str:
    """The label given to this process by :func:`start`."""
    return _process


def hop_index() -> int:
    """The hop index given to this process by :func:`start`."""
    return _hop


def _record(layer: str, name: str, ts: int, dur: int, attrs: dict[str, Any], inst: bool) -> None:
    event = Event(
        layer, name, ts, dur, _pid, _process, _hop, threading.get_native_id(), attrs, inst
    )
    with _lock:
        _events.append(event)


def now() -> int:
    """The trace clock: ``time.monotonic_ns()`` (what event timestamps are read from)."""
    return time.monotonic_ns()


def begin(layer: str, name: str, **attrs: Any) -> Span:
    """Open a span now (call it only when :data:`ON`)."""
    return Span(layer, name, time.monotonic_ns(), attrs)


def end(span: Span, **attrs: Any) -> None:
    """Close ``span`` now, adding ``attrs``; kept only if recording is still on."""
    if not ON:
        return
    now = time.monotonic_ns()
    if attrs:
        span.attrs.update(attrs)
    _record(span.layer, span.name, span.ts, now - span.ts, span.attrs, False)


@contextmanager
def span(layer: str, name: str, **attrs: Any) -> Iterator[Span]:
    """A span around a ``with`` block; the yielded :class:`Span` takes more attributes."""
    opened = begin(layer, name, **attrs)
    try:
        yield opened
    finally:
        end(opened)


def instant(layer: str, name: str, **attrs: Any) -> None:
    """Record a point in time (a decision, such as the device API ``DeviceAPI.get`` chose)."""
    if ON:
        _record(layer, name, time.monotonic_ns(), 0, attrs, True)
