"""Trace rendering: the events of every hop merged into one call tree, drawn as indented text, a
Mermaid sequence diagram or Chrome trace JSON (Perfetto), and ``pytvm.trace()`` that records them.

Merging. Events of all processes are on one clock (CLOCK_MONOTONIC, shared on one machine; a hop
on another machine is shifted onto the client's clock when collected, see
``pytvm.rpc.sessions.hop``), so they are simply sorted by time. Within a process (and thread)
spans nest by time containment.
Across processes a request is linked to the packet that served it: a top-level ``server``
(Python hop) or ``MinRPC`` (C device) span on hop ``h`` becomes a child of the innermost
``endpoint`` span of hop ``h - 1`` with the same RPC code whose time range contains the
packet's start (widened by the hop's ``clock_error_ns`` when its clock was aligned). Children
are ordered by start time, a ``wire recv`` by the time its bytes arrived, which puts a linked
packet between the request's ``wire send`` and the ``wire recv`` that waited for its reply.

Clamping. A child is drawn inside its parent: a linked packet can outlast its request (the
server finishes sending its reply after the client has read it, or the hop's clock is off by
up to its alignment error), so every node's drawn range (:attr:`Node.ts`, :attr:`Node.end`) is
its event's range clamped to its parent's, and :attr:`Node.clamped` says by how much. The text
marks such a line ``[clamped X µs]``, the Mermaid return arrow says ``clamped X µs``, and the
Chrome JSON gives the clamped range with the event's own in ``args``.

Examples
--------
>>> import numpy as np, pytvm
>>> a = pytvm.nd.empty((2,), "int32")
>>> with pytvm.trace() as t:
...     _ = a.copyfrom(np.array([2, 3], "int32"))
>>> print(t.text().splitlines()[1].split()[0])
NDArray.copyfrom
>>> t.mermaid().splitlines()[0]
'sequenceDiagram'
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ffi.trace import LAYERS, Event
from ..rpc.sessions import hop as _hop

__all__ = ["Node", "Trace", "build_tree", "chrome_json", "mermaid", "text"]

#: Attributes shown in text and Mermaid labels, in this order (others are in the Chrome JSON).
_SHOWN = ("bytes", "data_bytes", "request_bytes", "reply_bytes", "device", "direction", "api")
_LINK_TARGETS = ("server", "MinRPC")


@dataclass(eq=False)
class Node:
    """An event and the events it caused (nested calls, and linked packets of the next hop)."""

    event: Event
    children: list[Node] = field(default_factory=list)
    linked: bool = False  # reached from the previous hop's request (another process)
    ts: int = field(init=False)  # drawn start: the event's, clamped into the parent's range
    end: int = field(init=False)  # drawn end, likewise

    def __post_init__(self) -> None:
        self.ts, self.end = self.event.ts, self.event.end

    @property
    def dur(self) -> int:
        """Drawn duration in nanoseconds."""
        return self.end - self.ts

    @property
    def clamped(self) -> int:
        """How far (ns) the event reached outside its parent's range (0: drawn as recorded)."""
        return max(abs(self.ts - self.event.ts), abs(self.event.end - self.end))

    def walk(self, depth: int = 0) -> Iterable[tuple[int, Node]]:
        """Yield this node and its descendants, depth first, with their depth."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


def _layer_rank(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def build_tree(events: Sequence[Event]) -> list[Node]:
    """The call tree of ``events`` (any order, any processes): the roots, by start time."""
    ordered = sorted(events, key=lambda e: (e.ts, -e.dur, _layer_rank(e.layer)))
    roots: list[Node] = []
    stacks: dict[tuple[int, int], list[Node]] = {}
    for event in ordered:
        node = Node(event)
        stack = stacks.setdefault((event.pid, event.thread), [])
        while stack and not (event.ts >= stack[-1].event.ts and event.end <= stack[-1].event.end):
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    # link each top-level packet of hop h to the request of hop h - 1 that it served
    requests = sorted(
        (n for root in roots for _, n in root.walk() if n.event.layer == "endpoint"),
        key=lambda n: n.event.ts,
    )
    unlinked: list[Node] = []
    for root in roots:
        parent = _request_for(root.event, requests) if root.event.layer in _LINK_TARGETS else None
        if parent is None:
            unlinked.append(root)
        else:
            root.linked = True
            parent.children.append(root)
            parent.children.sort(key=_reading_order)
    for root in unlinked:
        _clamp(root)
    return unlinked


def _clamp(node: Node) -> None:
    """Clamp the drawn range of each descendant of ``node`` into its parent's."""
    for child in node.children:
        child.ts = min(max(child.event.ts, node.ts), node.end)
        child.end = min(max(child.event.end, child.ts), node.end)
        _clamp(child)


def _reading_order(node: Node) -> int:
    """Children in the order things happen: by start, except that a ``wire recv`` (which starts
    waiting as soon as the request is sent) counts from when the reply arrived, so a linked
    packet of the next hop reads between the request's ``send`` and its ``recv``.
    """
    e = node.event
    return e.end if e.layer == "wire" and e.name == "recv" else e.ts


def _request_for(packet: Event, requests: Sequence[Node]) -> Node | None:
    """The innermost request of the previous hop with the packet's code around its start
    (within the packet's clock alignment error; a request that contains it exactly wins).
    """
    tolerance = int(packet.attrs.get("clock_error_ns", 0))
    found, miss = None, 0
    for node in requests:
        e = node.event
        if e.ts > packet.ts + tolerance:
            break
        if e.hop != packet.hop - 1 or e.pid == packet.pid or e.attrs.get("code") != packet.name:
            continue
        distance = max(0, e.ts - packet.ts, packet.ts - e.end)
        if distance <= tolerance and (found is None or distance <= miss):
            found, miss = node, distance  # a later start is an inner (or more recent) request
    return found


# ------------------------------------------------------------------ text


def _us(ns: int) -> str:
    return f"{ns / 1000:.1f} µs"


def _attrs(event: Event) -> str:
    shown = []
    for key in _SHOWN:
        if key in event.attrs:
            value = event.attrs[key]
            shown.append(f"{value} B" if key == "bytes" else f"{key}={value}")
    if "request_bytes" in event.attrs and "reply_bytes" in event.attrs:
        shown = [s for s in shown if not s.startswith(("request_bytes", "reply_bytes"))]
        shown.append(f"{event.attrs['request_bytes']} B -> {event.attrs['reply_bytes']} B")
    return ", ".join(shown)


def _processes(events: Sequence[Event]) -> list[tuple[int, str, int]]:
    """(pid, label, hop) of each process, by hop."""
    seen: dict[int, tuple[int, str, int]] = {}
    for e in events:
        seen.setdefault(e.pid, (e.pid, e.process, e.hop))
    return sorted(seen.values(), key=lambda p: (p[2], p[0]))


def text(events: Sequence[Event]) -> str:
    """An indented call tree: one line per event with its duration, process and layer."""
    if not events:
        return "(no events: nothing was traced)\n"
    procs = ", ".join(f"{label} pid {pid} (hop {hop})" for pid, label, hop in _processes(events))
    lines = [f"trace: {len(events)} events from {procs}"]
    rows = [(depth, node) for root in build_tree(events) for depth, node in root.walk()]
    width = min(72, max(2 * depth + len(node.event.name) for depth, node in rows))
    for depth, node in rows:
        e = node.event
        label = ("  " * depth + e.name).ljust(width)
        duration = "·" if e.instant else _us(node.dur)
        extra = _attrs(e)
        if e.layer == "DeviceAPI.get" and "why" in e.attrs:
            extra = f"{extra}, {e.attrs['why']}" if extra else str(e.attrs["why"])
        if node.clamped:
            extra = f"{extra} [clamped {_us(node.clamped)}]".lstrip()
        line = f"{label}  {duration:>11}  {e.process:<6} {e.layer:<16} {extra}"
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ Mermaid


def _mermaid_text(s: str) -> str:
    """Text safe in a Mermaid message or alias (no statement separators or entity codes)."""
    return s.replace(";", ",").replace("#", "").replace("\n", " ").replace("->", "→")


def mermaid(events: Sequence[Event]) -> str:
    """A Mermaid ``sequenceDiagram``: one participant per process and layer, a call arrow when
    a span starts and a dashed return arrow with its duration when it ends.
    """
    roots = build_tree(events)
    keys = sorted(
        {(e.hop, e.pid, _layer_rank(e.layer), e.layer, e.process) for e in events},
    )
    ids = {(pid, layer): f"P{i}" for i, (_, pid, _, layer, _) in enumerate(keys)}
    lines = ["sequenceDiagram", "    actor user"]
    for hop, pid, _, layer, process in keys:
        alias = _mermaid_text(f"{process} {pid} / {layer}")
        lines.append(f"    participant {ids[(pid, layer)]} as {alias}")

    def emit(node: Node, caller: str) -> None:
        e = node.event
        me = ids[(e.pid, e.layer)]
        detail = _attrs(e)
        label = _mermaid_text(f"{e.name} ({detail})" if detail else e.name)
        lines.append(f"    {caller}->>{me}: {label}")
        if e.instant:
            return
        for child in node.children:
            emit(child, me)
        took = _us(node.dur) + (f" (clamped {_us(node.clamped)})" if node.clamped else "")
        lines.append(f"    {me}-->>{caller}: {_mermaid_text(took)}")

    for root in roots:
        emit(root, "user")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ Chrome trace JSON


def chrome_json(events: Sequence[Event]) -> str:
    """Trace Event Format JSON (opens in Perfetto and chrome://tracing): an ``X`` event per
    span, ``i`` per instant, a pid per process, a tid per layer, ``M`` events naming them, and
    flow arrows (``s``/``f``) from each request to the packet that served it on the next hop.
    """
    out: list[dict[str, Any]] = []
    t0 = min((e.ts for e in events), default=0)
    for pid, label, hop in _processes(events):
        name = f"{label} (hop {hop}, pid {pid})"
        out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}})
        out.append(
            {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": hop}}
        )
    threads = sorted({(e.pid, e.layer) for e in events})
    for pid, layer in threads:
        tid = _layer_rank(layer) + 1
        out.append(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": layer}}
        )
        out.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": tid,
                "args": {"sort_index": tid},
            }
        )
    roots = build_tree(events)
    for node in (node for root in roots for _, node in root.walk()):
        e = node.event
        args = dict(e.attrs)
        if node.clamped:
            args.update(clamped_us=node.clamped / 1000, recorded_dur_us=e.dur / 1000)
            args["recorded_ts_us"] = (e.ts - t0) / 1000
        record: dict[str, Any] = {
            "name": e.name,
            "cat": e.layer,
            "ph": "i" if e.instant else "X",
            "ts": (node.ts - t0) / 1000,
            "pid": e.pid,
            "tid": _layer_rank(e.layer) + 1,
            "args": args,
        }
        if e.instant:
            record["s"] = "t"
        else:
            record["dur"] = node.dur / 1000
        out.append(record)
    flow = 0
    for root in roots:
        for _, node in root.walk():
            for child in node.children:
                if not child.linked:
                    continue
                flow += 1
                ts = (child.ts - t0) / 1000
                src, dst = node.event, child.event
                common = {"name": child.event.name, "cat": "rpc", "id": flow, "ts": ts}
                out.append({**common, "ph": "s", "pid": src.pid, "tid": _layer_rank(src.layer) + 1})
                out.append(
                    {
                        **common,
                        "ph": "f",
                        "bp": "e",
                        "pid": dst.pid,
                        "tid": _layer_rank(dst.layer) + 1,
                    }
                )
    return json.dumps({"traceEvents": out, "displayTimeUnit": "ns"}, indent=1)


# ------------------------------------------------------------------ recording


class Trace:
    """``with pytvm.trace() as t:`` records every layer and hop a call crosses.

    Entering starts recording on every hop behind each live RPC session
    (``pytvm.rpc.sessions.hop``) and in this process; leaving stops them and collects their
    events into :attr:`events` (sorted by time). :attr:`notes` names hops that could not be
    traced (a TVM server, a hop that went away). Sessions opened inside the block are traced in
    this process only.
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.notes: list[str] = []
        self._links: list[_hop.HopLink] | None = None

    def __enter__(self) -> Trace:
        self._links, self.notes = _hop.start_trace()
        return self

    def __exit__(self, *exc: object) -> None:
        links, self._links = self._links or [], None
        events, notes = _hop.stop_trace(links)
        self.events = events
        self.notes += notes

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        if self._links is not None:
            return "<Trace: recording>"
        notes = f", {len(self.notes)} notes" if self.notes else ""
        procs = f"{len(self.pids)} process" + ("" if len(self.pids) == 1 else "es")
        return f"<Trace: {len(self.events)} events from {procs}{notes}>"

    @property
    def pids(self) -> list[int]:
        """The processes that recorded events, by hop."""
        return [pid for pid, _, _ in _processes(self.events)]

    def tree(self) -> list[Node]:
        """The call tree (see :func:`build_tree`)."""
        return build_tree(self.events)

    def text(self) -> str:
        """The indented call tree (see :func:`text`), followed by the notes."""
        notes = "".join(f"note: {n}\n" for n in self.notes)
        return text(self.events) + notes

    def mermaid(self) -> str:
        """A Mermaid sequence diagram (see :func:`mermaid`)."""
        return mermaid(self.events)

    def chrome_json(self) -> str:
        """Chrome trace JSON (see :func:`chrome_json`)."""
        return chrome_json(self.events)

    def save_chrome(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`chrome_json` to ``path`` (open it at https://ui.perfetto.dev)."""
        with Path(path).open("w", encoding="utf-8") as f:
            f.write(self.chrome_json())
