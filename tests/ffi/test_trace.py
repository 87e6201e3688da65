"""The trace recorder (``pytvm.ffi.trace``): spans, instants, labels, threads, on/off."""

from __future__ import annotations

import ast
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytvm.ffi import trace


@pytest.fixture(autouse=True)
def _recorder_off() -> Iterator[None]:
    trace.stop()
    trace.take()
    yield
    trace.stop()
    trace.take()


def test_span_records_layer_name_attrs_duration_and_process() -> None:
    trace.start("board", hop=1)
    before = time.monotonic_ns()
    with trace.span("endpoint", "kCopyToRemote", request_bytes=68) as sp:
        sp.attrs["reply_bytes"] = 20
    trace.stop()
    (event,) = trace.take()
    assert (event.layer, event.name) == ("endpoint", "kCopyToRemote")
    assert dict(event.attrs) == {"request_bytes": 68, "reply_bytes": 20}
    assert before <= event.ts <= event.end <= time.monotonic_ns()
    assert (event.pid, event.process, event.hop) == (os.getpid(), "board", 1)
    assert event.thread == threading.get_native_id() and not event.instant


def test_begin_end_adds_attributes_known_at_the_end() -> None:
    trace.start()
    span = trace.begin("wire", "recv", peer="x")
    trace.end(span, bytes=20)
    trace.instant("DeviceAPI.get", "chose", api="device_api.rpc")
    trace.stop()
    recv, chose = trace.take()
    assert dict(recv.attrs) == {"peer": "x", "bytes": 20}
    assert chose.instant and chose.dur == 0 and chose.attrs["api"] == "device_api.rpc"


def test_spans_still_open_when_recording_stops_are_dropped() -> None:
    trace.start()
    span = trace.begin("server", "kCallFunc")
    trace.stop()
    trace.end(span)
    trace.instant("server", "late")
    assert trace.take() == []


def test_start_relabels_and_drops_earlier_events() -> None:
    trace.start("server", hop=3)
    trace.instant("server", "old")
    trace.start("host", hop=0)
    trace.instant("Python API", "new")
    trace.stop()
    (event,) = trace.take()
    assert (event.name, event.process, event.hop) == ("new", "host", 0)
    assert (trace.process_label(), trace.hop_index()) == ("host", 0)


def test_take_empties_the_buffer() -> None:
    trace.start()
    trace.instant("Python API", "x")
    assert len(trace.take()) == 1
    assert trace.take() == []


def test_events_round_trip_through_dicts() -> None:
    trace.start("device", hop=2)
    with trace.span("MinRPC", "kDevStreamSync", bytes=40):
        pass
    trace.stop()
    (event,) = trace.take()
    assert trace.Event.from_dict(event.to_dict()) == event


def test_every_thread_records_every_span() -> None:
    trace.start()

    def work() -> None:
        for i in range(500):
            with trace.span("Python API", "work", i=i):
                pass

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trace.stop()
    events = trace.take()
    assert len(events) == 8 * 500
    assert len({e.thread for e in events}) == 8


def test_module_example() -> None:
    trace.start("host")
    with trace.span("Python API", "demo", nbytes=8):
        pass
    trace.stop()
    assert [(e.layer, e.name, e.attrs["nbytes"]) for e in trace.take()] == [
        ("Python API", "demo", 8)
    ]


def test_layers_are_in_call_order() -> None:
    assert trace.LAYERS[0] == "Python API" and trace.LAYERS[-1] == "device API"
    assert trace.LAYERS.index("endpoint") < trace.LAYERS.index("server")


def test_now_is_the_clock_events_are_stamped_with() -> None:
    trace.start()
    before = trace.now()
    trace.instant("Python API", "mark")
    after = trace.now()
    trace.stop()
    (event,) = trace.take()
    assert before <= event.ts <= after
    assert abs(trace.now() - time.monotonic_ns()) < 10**9


def test_span_off_is_the_shared_no_op_and_on_records_set_attributes() -> None:
    off = trace.span("Python API", "idle", nbytes=1)
    assert off is trace.NO_SPAN and trace.span_of("wire", lambda: ("x", {})) is trace.NO_SPAN
    with off as sp:
        sp.set(ignored=True)
    assert trace.take() == []
    trace.start()
    with trace.span("endpoint", "kCallFunc", request_bytes=40) as sp:
        sp.set(reply_bytes=24)
    with pytest.raises(ValueError), trace.span_of("server", lambda n: (f"k{n}", {"n": n}), 7):
        raise ValueError("the span is still recorded")
    trace.stop()
    first, second = trace.take()
    assert (first.name, dict(first.attrs)) == (
        "kCallFunc",
        {"request_bytes": 40, "reply_bytes": 24},
    )
    assert (second.layer, second.name, dict(second.attrs)) == ("server", "k7", {"n": 7})


def test_an_error_in_a_block_traced_while_off_propagates() -> None:
    asked: list[bytes] = []

    def describe(data: bytes) -> tuple[str, dict[str, int]]:
        asked.append(data)
        return "send", {"bytes": len(data)}

    with trace.span("Python API", "off") as sp:
        assert sp is trace.NO_SPAN
        sp.set(bytes=1)
    with pytest.raises(KeyError, match="raised inside"), trace.span_of("wire", describe, b"x"):
        raise KeyError("raised inside")
    assert asked == []
    assert trace.take() == []


def test_instant_of_describes_only_while_recording() -> None:
    asked: list[int] = []

    def describe(n: int) -> tuple[str, dict[str, int]]:
        asked.append(n)
        return f"chose {n}", {"n": n}

    trace.instant_of("DeviceAPI.get", describe, 1)
    with trace.span_of("endpoint", describe, 2):
        pass
    assert asked == []
    trace.start()
    trace.instant_of("DeviceAPI.get", describe, 3)
    trace.stop()
    (event,) = trace.take()
    assert asked == [3]
    assert (event.layer, event.name, dict(event.attrs), event.instant) == (
        "DeviceAPI.get",
        "chose 3",
        {"n": 3},
        True,
    )


PACKAGE = Path(__file__).resolve().parents[2] / "pytvm"
#: The recorder's own layer: the Python -> C call path opens its span with begin/end halves
#: shared with the fast-call extension, which keeps its own copy of the flag.
RECORDER_LAYER = PACKAGE / "ffi"


def _flag_tests_choosing_a_span(path: Path) -> list[str]:
    """Lines of ``path`` that test the trace flag to decide whether to record (the helpers'
    job), or name the no-op span themselves.
    """
    tree = ast.parse(path.read_text(), str(path))
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("ffi")
        for alias in node.names
        if alias.name == "trace"
    }

    def is_flag(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "ON"
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        )

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp) and is_flag(node.test):
            found.append(f"{path.name}:{node.lineno}: `... if trace.ON else ...`")
        elif isinstance(node, ast.If) and is_flag(node.test) and not node.orelse:
            if all(isinstance(stmt, ast.Expr) for stmt in node.body):  # a guarded recording
                found.append(f"{path.name}:{node.lineno}: `if trace.ON: <call>`")
        elif isinstance(node, ast.Attribute) and node.attr == "NO_SPAN":
            found.append(f"{path.name}:{node.lineno}: names NO_SPAN")
    return found


def test_call_sites_never_test_the_flag_to_record() -> None:
    """Every span and instant goes through the helpers (``span``, ``span_of``, ``instant``,
    ``instant_of``), which test the flag once; code outside the recorder's layer may read the
    flag only for decisions that are not recordings (say, whether a trace is already running).
    """
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if RECORDER_LAYER not in path.parents
        for hit in _flag_tests_choosing_a_span(path)
    ]
    assert found == [], "\n".join(found)


def test_the_flag_check_finds_the_hand_written_pattern(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from ..ffi import trace as _trace\n"
        "def f(x):\n"
        "    with _trace.span('L', 'n') if _trace.ON else _trace.NO_SPAN:\n"
        "        pass\n"
        "    if _trace.ON:\n"
        "        record(x)\n"
        "    if _trace.ON:\n"
        "        raise RuntimeError('traces do not nest')\n"
    )
    assert sorted(hit.split(": ", 1)[0] for hit in _flag_tests_choosing_a_span(sample)) == [
        "sample.py:3",
        "sample.py:3",
        "sample.py:5",
    ]
