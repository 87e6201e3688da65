"""``pytvm.trace()`` across three processes (host -> pytvm server -> C device) and its renderings:
text tree, Mermaid sequence diagram, Chrome trace JSON.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.ffi import trace as ffi_trace
from pytvm.ffi.trace import LAYERS, Event
from pytvm.rpc.sessions.hop import HopLink, clock_offset
from pytvm.rpc.wire.channel import reap
from pytvm.testing.rpc import service_process
from pytvm.viz.trace import Node, Trace, build_tree, chrome_json, mermaid, text

SERVER = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1", "--silent")
X = np.array([2, 3], "int32")


@pytest.fixture(scope="module")
def nested() -> Iterator[rpc.RPCSession]:
    """Host -> pytvm server (subprocess) -> pytvm-device --hexagon (MinRPC in C)."""
    from pytvm.crt import device_binary

    binary = str(device_binary(hexagon=True))
    with service_process(*SERVER, "--popen-executable", binary) as (_, port):
        sess = rpc.connect("127.0.0.1", port, session_constructor_args=["rpc.PopenSession", binary])
        yield sess
        sess.close()


@pytest.fixture(scope="module")
def copy_trace(nested: rpc.RPCSession) -> Trace:
    A = pytvm.nd.empty((2,), "int32", nested.hexagon(0))
    with pytvm.trace() as t:
        A.copyfrom(X)
    assert A.numpy().tolist() == [2, 3]
    return t


def _one(events: list[Event], process: str, layer: str, name: str) -> Event:
    found = [e for e in events if (e.process, e.layer, e.name) == (process, layer, name)]
    assert found, f"no {process}/{layer}/{name} event"
    return found[-1]


@pytest.mark.needs_cc
def test_copy_records_every_layer_in_three_processes(
    copy_trace: Trace, nested: rpc.RPCSession
) -> None:
    events = copy_trace.events
    pids = {e.process: e.pid for e in events}
    assert set(pids) == {"host", "board", "device"} and len(set(pids.values())) == 3
    assert {e.hop for e in events if e.process == "device"} == {2}
    assert set(LAYERS) - {"transport channel"} <= {e.layer for e in events}
    assert copy_trace.notes == []
    assert [e.ts for e in events] == sorted(e.ts for e in events)
    dev = nested.hexagon(0)  # remote[<slot>]:hexagon(0), the slot this session holds
    get = _one(events, "host", "DeviceAPI.get", f"DeviceAPI.get({dev}) -> device_api.rpc")
    assert get.attrs["cls"] == "RPCDeviceAPI"


@pytest.mark.needs_cc
def test_copy_events_are_in_causal_order(copy_trace: Trace) -> None:
    ev = copy_trace.events
    api = _one(ev, "host", "Python API", "NDArray.copy_from_bytes")
    client = _one(ev, "host", "client session", "ForwardingSession.copy_data_from_to")
    request = _one(ev, "host", "endpoint", "kCopyToRemote")
    served = _one(ev, "board", "server", "kCopyToRemote")
    serving = _one(ev, "board", "serving session", "ForwardingSession.copy_to_remote")
    forwarded = _one(ev, "board", "endpoint", "kCopyToRemote")
    packet = _one(ev, "device", "MinRPC", "kCopyToRemote")
    copy = _one(ev, "device", "device API", "TVMDeviceCopyDataFromTo")
    sync = _one(ev, "device", "MinRPC", "kDevStreamSync")
    chain = [api, client, request, served, serving, forwarded, packet, copy]
    starts = [e.ts for e in chain]
    assert starts == sorted(starts)
    # each packet is handled while its request waits, and the device copies inside the packet
    assert request.ts <= served.ts <= request.end
    assert forwarded.ts <= packet.ts <= forwarded.end
    assert packet.ts <= copy.ts and copy.end <= packet.end
    assert copy.attrs == {"device": "hexagon", "bytes": 8}
    assert packet.end <= sync.ts <= api.end
    assert request.attrs["data_bytes"] == 8 and request.attrs["reply_bytes"] > 0


@pytest.mark.needs_cc
def test_text_tree_nests_each_hop_under_the_request_it_served(copy_trace: Trace) -> None:
    (root,) = copy_trace.tree()
    assert root.event.name == "NDArray.copyfrom"
    depth = {
        (n.event.process, n.event.layer, n.event.name): d
        for d, n in root.walk()
        if n.event.layer != "wire"
    }
    path = [
        ("host", "Python API", "NDArray.copyfrom"),
        ("host", "Python API", "NDArray.copy_from_bytes"),
        ("host", "client session", "ForwardingSession.copy_data_from_to"),
        ("host", "endpoint", "kCopyToRemote"),
        ("board", "server", "kCopyToRemote"),
        ("board", "serving session", "ForwardingSession.copy_to_remote"),
        ("board", "endpoint", "kCopyToRemote"),
        ("device", "MinRPC", "kCopyToRemote"),
        ("device", "device API", "TVMDeviceCopyDataFromTo"),
    ]
    assert [depth[k] for k in path] == list(range(len(path)))
    lines = copy_trace.text().splitlines()
    assert lines[0].startswith(f"trace: {len(copy_trace.events)} events from host pid")
    indent = {line.split()[0]: len(line) - len(line.lstrip()) for line in lines[1:]}
    assert indent["NDArray.copyfrom"] == 0 and indent["NDArray.copy_from_bytes"] == 2
    assert indent["TVMDeviceCopyDataFromTo"] == 2 * 8
    device_line = next(line for line in lines if "TVMDeviceCopyDataFromTo" in line)
    assert "µs" in device_line and "device" in device_line and "8 B" in device_line


def _linked_order(node: Node) -> list[str]:
    return [f"{c.event.layer}:{c.event.name}" for c in node.children]


@pytest.mark.needs_cc
def test_linked_packet_reads_between_send_and_recv(copy_trace: Trace) -> None:
    (root,) = copy_trace.tree()
    request = next(
        n for _, n in root.walk() if (n.event.process, n.event.name) == ("host", "kCopyToRemote")
    )
    assert _linked_order(request) == ["wire:send", "server:kCopyToRemote", "wire:recv"]


@pytest.mark.needs_cc
def test_mermaid_is_a_sequence_diagram_with_a_call_per_event(copy_trace: Trace) -> None:
    diagram = copy_trace.mermaid()
    lines = diagram.splitlines()
    assert lines[0] == "sequenceDiagram"
    participants = [line for line in lines if line.strip().startswith("participant ")]
    assert {p.split(" as ")[1].split()[0] for p in participants} == {"host", "board", "device"}
    calls = [line for line in lines if "->>" in line and "-->>" not in line]
    returns = [line for line in lines if "-->>" in line]
    assert len(calls) == len(copy_trace.events)
    assert len(returns) == sum(not e.instant for e in copy_trace.events)
    assert not any(";" in line or "#" in line for line in lines)


@pytest.mark.needs_cc
def test_chrome_json_has_complete_events_per_process_and_layer(
    copy_trace: Trace, tmp_path: Any
) -> None:
    path = tmp_path / "trace.json"
    copy_trace.save_chrome(path)
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == sum(not e.instant for e in copy_trace.events)
    assert all({"name", "ts", "dur", "pid", "tid", "cat"} <= set(e) for e in complete)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert sorted(n.split()[0] for n in names.values()) == ["board", "device", "host"]
    layers = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert set(LAYERS) - {"transport channel"} <= layers
    starts = {e["id"] for e in events if e["ph"] == "s"}
    finishes = {e["id"] for e in events if e["ph"] == "f"}
    assert starts == finishes and len(starts) >= 10  # every request linked to its packet


@pytest.mark.needs_cc
def test_tracing_off_records_nothing_on_any_hop(nested: rpc.RPCSession) -> None:
    A = pytvm.nd.empty((2,), "int32", nested.hexagon(0))
    with pytvm.trace() as t:
        pass
    assert t.events == [] and not ffi_trace.ON
    A.copyfrom(X)  # off
    assert A.numpy().tolist() == [2, 3]
    assert ffi_trace.take() == []
    link = HopLink.open(nested.session)  # the board: collect without starting
    assert link is not None
    events, notes = link.collect()
    link.close()
    assert events == [] and notes == []


@pytest.mark.needs_cc
def test_off_path_calls_no_recorder_function(
    nested: rpc.RPCSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    A = pytvm.nd.empty((2,), "int32", nested.hexagon(0))
    calls: list[str] = []
    for name in ("begin", "end", "span", "instant", "start", "stop", "take", "_record"):
        original = getattr(ffi_trace, name)

        def counted(*args: Any, _name: str = name, _f: Any = original, **kw: Any) -> Any:
            calls.append(_name)
            return _f(*args, **kw)

        monkeypatch.setattr(ffi_trace, name, counted)
    A.copyfrom(X)
    assert A.numpy().tolist() == [2, 3]
    assert nested.get_function("pytvm.device.echo")(5) == 5
    assert calls == []


def test_a_local_copy_traces_this_process_only() -> None:
    a = pytvm.nd.empty((2,), "int32")
    with pytvm.trace() as t:
        _ = a.copyfrom(np.array([2, 3], "int32"))
    assert sorted({e.layer for e in t.events}) == ["DeviceAPI.get", "Python API"]
    assert t.text().splitlines()[1].split()[0] == "NDArray.copyfrom"
    assert t.mermaid().splitlines()[0] == "sequenceDiagram"
    assert len(t.pids) == 1


def test_traces_do_not_nest() -> None:
    with pytvm.trace():
        with pytest.raises(rpc.RPCError, match="do not nest"):
            with pytvm.trace():
                pass


def test_renderers_take_plain_event_lists() -> None:
    a = Event("Python API", "outer", 1000, 9000, 1, "host", 0, 1)
    b = Event("endpoint", "kCallFunc", 2000, 5000, 1, "host", 0, 1, {"code": "kCallFunc"})
    c = Event("server", "kCallFunc", 3000, 1000, 2, "server", 1, 7, {"code": "kCallFunc"})
    (root,) = build_tree([c, b, a])
    assert [(d, n.event.name, n.linked) for d, n in root.walk()] == [
        (0, "outer", False),
        (1, "kCallFunc", False),
        (2, "kCallFunc", True),
    ]
    assert "\n    kCallFunc" in text([a, b, c])
    assert mermaid([a, b, c]).count("->>") == 6
    assert json.loads(chrome_json([a, b, c]))["traceEvents"]
    assert text([]).startswith("(no events")


def test_a_tvm_server_hop_is_skipped() -> None:
    import tvm.rpc

    server = tvm.rpc.Server(host="127.0.0.1", port=9700, port_end=9800, silent=True)
    try:
        with rpc.connect("127.0.0.1", server.port) as sess:
            A = pytvm.nd.empty((2,), "int32", sess.cpu())
            with pytvm.trace() as t:
                A.copyfrom(X)
            assert A.numpy().tolist() == [2, 3]
    finally:
        server.terminate()
    assert {e.process for e in t.events} == {"host"}
    assert "endpoint" in {e.layer for e in t.events}
    (note,) = t.notes
    assert "not traceable" in note and "pytvm.hop.trace_start" in note
    assert "note:" in t.text()


def _assert_children_within_parents(roots: list[Node]) -> int:
    """Every drawn child range lies in its parent's; returns how many nodes were clamped."""
    clamped = 0
    for root in roots:
        for _, node in root.walk():
            assert node.ts <= node.end
            clamped += node.clamped > 0
            for child in node.children:
                assert node.ts <= child.ts <= child.end <= node.end, (node.event, child.event)
    return clamped


@pytest.mark.needs_cc
def test_no_child_is_drawn_outside_its_parent_across_processes(copy_trace: Trace) -> None:
    roots = copy_trace.tree()
    clamped = _assert_children_within_parents(roots)
    marked = [line for line in copy_trace.text().splitlines() if "[clamped " in line]
    assert len(marked) == clamped
    doc = json.loads(copy_trace.chrome_json())
    assert sum("clamped_us" in e.get("args", {}) for e in doc["traceEvents"]) == clamped


def test_a_packet_outlasting_its_request_is_clamped_and_marked() -> None:
    request = Event("endpoint", "kCallFunc", 1000, 5000, 1, "host", 0, 1, {"code": "kCallFunc"})
    served = Event("server", "kCallFunc", 2000, 7000, 2, "server", 1, 7, {"code": "kCallFunc"})
    reply = Event("wire", "send", 7000, 2000, 2, "server", 1, 7, {"bytes": 20})
    (root,) = build_tree([request, served, reply])
    (packet,) = root.children
    (send,) = packet.children
    assert packet.linked and (packet.ts, packet.end, packet.clamped) == (2000, 6000, 3000)
    assert (send.ts, send.end, send.clamped) == (6000, 6000, 3000)
    assert _assert_children_within_parents([root]) == 2
    lines = text([request, served, reply]).splitlines()
    assert lines[2].split()[:3] == ["kCallFunc", "4.0", "µs"] and "[clamped 3.0 µs]" in lines[2]
    assert "µs (clamped 3.0 µs)" in mermaid([request, served, reply])
    records = json.loads(chrome_json([request, served, reply]))["traceEvents"]
    server = next(r for r in records if r.get("cat") == "server")
    assert (server["ts"], server["dur"], server["args"]["clamped_us"]) == (1.0, 4.0, 3.0)
    assert server["args"]["recorded_dur_us"] == 7.0


def test_clock_offset_is_zero_when_the_remote_read_falls_inside_the_round_trip() -> None:
    assert clock_offset(1_000, 1_000, 3_000) == (0, 1_000)
    assert clock_offset(1_000, 3_000, 3_000) == (0, 1_000)
    assert clock_offset(1_000, 10_002_000, 3_000) == (10_000_000, 1_000)
    assert clock_offset(5_000_000, 1_000, 5_002_000) == (-5_000_000, 1_000)


def test_a_packet_within_the_alignment_error_links_to_its_request() -> None:
    request = Event("endpoint", "kCallFunc", 1000, 5000, 1, "host", 0, 1, {"code": "kCallFunc"})
    early = {"code": "kCallFunc", "clock_error_ns": 400}
    served = Event("server", "kCallFunc", 700, 2000, 2, "server", 1, 7, early)
    (root,) = build_tree([request, served])
    assert [(n.event.process, n.linked, n.ts) for n in root.children] == [("server", True, 1000)]
    unaligned = Event("server", "kCallFunc", 700, 2000, 2, "server", 1, 7, {"code": "kCallFunc"})
    assert len(build_tree([request, unaligned])) == 2  # no error allowed: not linked


def _time_namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--time", "--monotonic", "1", "true"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    return probe.returncode == 0


AHEAD_S = 1000  # the server's CLOCK_MONOTONIC runs this far ahead of the client's


@pytest.fixture(scope="module")
def skewed_server() -> Iterator[int]:
    """A pytvm server in its own time namespace, its monotonic clock ``AHEAD_S`` ahead."""
    if not _time_namespaces_work():
        pytest.skip("needs `unshare --time` (Linux time namespaces, CAP_SYS_ADMIN)")
    argv = ["unshare", "--time", "--monotonic", str(AHEAD_S), sys.executable, "-m", "pytvm.cli"]
    proc = subprocess.Popen([*argv, "rpc", *SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert "listening on" in banner, banner
        yield int(banner.rsplit(":", 1)[1])
    finally:
        reap(proc, timeout=10, terminate=True)


def test_a_hop_with_another_clock_is_shifted_onto_the_client_clock(skewed_server: int) -> None:
    with rpc.connect("127.0.0.1", skewed_server) as sess:
        A = pytvm.nd.empty((2,), "int32", sess.cpu())
        with pytvm.trace() as t:
            A.copyfrom(X)
        assert A.numpy().tolist() == [2, 3]
    remote = [e for e in t.events if e.process == "server"]
    assert remote and {e.layer for e in remote} >= {"server", "serving session"}
    for e in remote:
        shift, error = e.attrs["clock_shift_ns"], e.attrs["clock_error_ns"]
        assert abs(shift + AHEAD_S * 10**9) <= max(error, 1_000_000), (shift, error)
    (note,) = t.notes
    measured = re.search(r"its clock is ([-+0-9.]+) ms from this hop's", note)
    assert measured is not None and "events were shifted" in note, note
    assert abs(float(measured.group(1)) - AHEAD_S * 1000) < 1.0
    host = [e for e in t.events if e.process == "host"]
    assert min(e.ts for e in host) <= min(e.ts for e in remote)
    (root,) = t.tree()  # every served packet is linked under the request it served
    linked = [n for _, n in root.walk() if n.linked]
    assert len(linked) == sum(e.layer == "server" for e in remote) > 0
    _assert_children_within_parents([root])
    assert str(t) == t.text() and f"{len(t.events)} events from 2 processes" in repr(t)
