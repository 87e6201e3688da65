"""Hop-local functions (``pytvm.rpc.sessions.hop``): answered by each hop itself, and the
device's ring.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator

import pytest

from pytvm import rpc
from pytvm.ffi import trace
from pytvm.rpc.sessions.hop import HOP_TAG, HopLink, code_name, decode_collected
from pytvm.testing.rpc import service_process

SERVER = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1", "--silent")


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    with service_process(*SERVER) as (_, port):
        yield port


def _device_blob(pid: int, hop: int, records: list[tuple[int, int, int, int, int]]) -> bytes:
    head = struct.pack("<4sIIIII", b"PTVT", 1, pid, hop, len(records), 0)
    return head + b"".join(struct.pack("<QHHIQ", *r) for r in records)


def test_code_names_are_tvms() -> None:
    assert code_name(7) == "kCopyToRemote"
    assert code_name(17) == "kDevAllocDataWithScope"
    assert code_name(99) == "code 99"


def test_device_ring_pairs_begins_and_ends() -> None:
    records = [
        (90, 1, 1, 3, 24),  # the end of trace_start's own packet: no begin, dropped
        (100, 1, 0, 7, 68),  # kCopyToRemote begins
        (110, 2, 0, 16, 8),  # copy on hexagon
        (120, 2, 1, 16, 8),
        (130, 3, 0, 16, 64),  # an alloc that failed: no end
        (150, 1, 1, 7, 68),
        (200, 1, 0, 3, 24),  # trace_stop's own packet: no end, dropped
    ]
    events, notes = decode_collected(_device_blob(4242, 2, records))
    assert notes == []
    packet, copy = sorted(events, key=lambda e: e.ts)
    assert (packet.layer, packet.name, packet.ts, packet.dur) == (
        "MinRPC",
        "kCopyToRemote",
        100,
        50,
    )
    assert (copy.layer, copy.name, copy.dur) == ("device API", "TVMDeviceCopyDataFromTo", 10)
    assert copy.attrs == {"device": "hexagon", "bytes": 8}
    assert {(e.pid, e.process, e.hop) for e in events} == {(4242, "device", 2)}


def test_python_hop_answers_json() -> None:
    blob = json.dumps({"events": [], "notes": ["hop 2 (x) is not traceable"]}).encode()
    assert decode_collected(blob) == ([], ["hop 2 (x) is not traceable"])


def test_a_pytvm_server_answers_hop_functions_itself(server_port: int) -> None:
    with rpc.connect("127.0.0.1", server_port) as sess:
        collect = sess.get_function("pytvm.hop.trace_collect")
        assert collect.remote_handle & HOP_TAG
        assert json.loads(bytes(collect())) == {"events": [], "notes": []}
        with pytest.raises(AttributeError):
            sess.get_function("pytvm.hop.no_such_function")
        del collect  # kFreeHandle of a hop handle is answered by the hop table
        assert sess.get_function("rpc.test.addone")(1) == 2


def test_a_last_python_hop_records_as_server(server_port: int) -> None:
    with rpc.connect("127.0.0.1", server_port) as sess:
        link = HopLink.open(sess.session)
        assert link is not None
        link.start(1)
        assert sess.get_function("rpc.test.addone")(41) == 42
        link.stop()
        events, notes = link.collect()
        link.close()
    assert notes == [] and {(e.process, e.hop) for e in events} == {("server", 1)}
    assert {"server", "serving session", "wire"} <= {e.layer for e in events}
    served = [e.name for e in events if e.layer == "server"]
    assert served.count("kCallFunc") == 1 and "kGetGlobalFunc" in served
    assert not trace.ON


@pytest.mark.needs_cc
def test_device_ring_keeps_the_newest_events() -> None:
    from pytvm.crt import device_binary

    with rpc.PopenSession(str(device_binary())) as sess:
        echo = sess.get_function("pytvm.device.echo")
        link = HopLink.open(sess.session)
        assert link is not None
        link.start(1)
        for i in range(200):
            assert echo(i) == i
        link.stop()
        raw = sess.get_function("pytvm.hop.trace_collect")()
        link.close()
    _, _, pid, hop, count, dropped = struct.unpack_from("<4sIIIII", bytes(raw))
    assert (hop, count) == (1, 256) and dropped > 0 and pid != 0
    events, _ = decode_collected(bytes(raw))
    assert 100 <= len(events) <= 128
    assert {e.name for e in events} == {"kCallFunc"}
