"""Serial framing and session layer: shared vectors in C and Python, properties, handshakes."""

from __future__ import annotations

import doctest
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytvm.rpc.wire.serial_channel
import pytvm.rpc.wire.serial_framing
import pytvm.rpc.wire.serial_link
from pytvm.rpc.wire.serial_framing import DEFAULT_MAX_PAYLOAD, Framer, Unframer, crc16, encode_frame
from pytvm.rpc.wire.serial_link import (
    EventKind,
    LinkEvent,
    LinkState,
    SerialLink,
    encode_message,
)

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = ROOT / "pytvm" / "src" / "crt" / "serial" / "serial.mk"
VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "vectors" / "serial_framing.json").read_text()
)
STRICT_CFLAGS = "-std=c99 -Wall -Wextra -Werror -pedantic -O2"
# The CRT Makefile's extra warnings for its own sources; the serial layer meets them too.
EXTRA_WARNINGS = (
    "-Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -Wsign-conversion "
    "-Wcast-align -Wundef -Wpointer-arith -Wwrite-strings -Wvla -Wold-style-definition "
    "-Wredundant-decls -Wswitch-default"
)
COMPILERS = [cc for cc in ("cc", "gcc", "clang") if shutil.which(cc)]
NO_FIXTURE_CHECK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def hx(data: bytes) -> str:
    """Hex as the C harness writes it ("-" for nothing)."""
    return data.hex() or "-"


# ---------------------------------------------------------------------- independent references


def reference_crc(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit, straight from its definition."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def reference_frame(payload: bytes) -> bytes:
    """A frame built byte by byte from the format description."""
    body = len(payload).to_bytes(4, "little") + payload
    body += reference_crc(body).to_bytes(2, "little")
    out = bytearray([0x7E])
    for byte in body:
        out += bytes([0x7D, byte ^ 0x20]) if byte in (0x7D, 0x7E) else bytes([byte])
    return bytes(out)


# ---------------------------------------------------------------------- the C harness


def build_harness(out_dir: Path, cc: str, cflags: str = STRICT_CFLAGS) -> Path:
    subprocess.run(
        [
            "make",
            "-s",
            "-f",
            str(MAKEFILE),
            f"BUILD={out_dir}",
            f"CC={cc}",
            f"CFLAGS={cflags}",
            "serial-vectors",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return out_dir / "serial_vectors"


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not COMPILERS or not shutil.which("make"):
        pytest.fail("these tests need make and a C compiler (gcc or clang) on PATH")
    return build_harness(tmp_path_factory.mktemp("serial"), COMPILERS[0])


def batch(harness: Path, commands: list[str]) -> list[list[str]]:
    """Run ``commands`` through a fresh harness; the answer lines of each."""
    proc = subprocess.run(
        [str(harness)],
        input="\n".join(commands) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    answers: list[list[str]] = []
    current: list[str] = []
    for line in proc.stdout.splitlines():
        if line == ".":
            answers.append(current)
            current = []
        else:
            current.append(line)
    assert len(answers) == len(commands)
    return answers


class CSide:
    """A C session in a harness process, driven one command at a time."""

    def __init__(self, harness: Path, spec: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [str(harness)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        nonces = hx(bytes.fromhex(spec["nonces"]))
        assert self.ask(f"session {spec['max_payload']} {spec['tx_max_payload']} {nonces}") == [
            "ok"
        ]

    def ask(self, command: str) -> list[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        lines = []
        while (line := self.proc.stdout.readline().rstrip("\n")) != ".":
            assert line, "harness exited"
            lines.append(line)
        return lines

    def step(self, op: str, data: bytes = b"") -> dict[str, Any]:
        if op == "state":
            words = self.ask("state")[0].split()
            keys = {"state": "state", "id": "session_id", "nonce": "nonce"}
            keys.update(dropped="dropped", errors="errors", limit="tx_limit")
            return {keys[words[i]]: int(words[i + 1]) for i in range(0, len(words), 2)}
        rc, events, tx = 0, [], ""
        for line in self.ask("start" if op == "start" else f"{op} {hx(data)}"):
            tag, _, rest = line.partition(" ")
            if tag == "rc":
                rc = int(rest)
            elif tag == "tx":
                tx = rest
            elif tag == "started":
                events.append(["started", int(rest)])
            else:
                assert tag in ("data", "log"), line
                events.append([tag, "" if rest == "-" else rest])
        out: dict[str, Any] = {"events": events, "tx": tx}
        if op != "rx":
            out["rc"] = rc
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=10) == 0


class PySide:
    """The Python session, answering in the same shape as :class:`CSide`."""

    def __init__(self, spec: dict[str, Any]) -> None:
        nonces = list(bytes.fromhex(spec["nonces"]))
        self.tx: list[bytes] = []
        self.session = SerialLink(
            self.tx.append,
            max_payload=spec["max_payload"],
            tx_max_payload=spec["tx_max_payload"] or None,
            nonce_source=lambda: nonces.pop(0) if nonces else 0,
        )

    def step(self, op: str, data: bytes = b"") -> dict[str, Any]:
        s = self.session
        if op == "state":
            return {
                "state": int(s.state),
                "session_id": s.session_id,
                "nonce": s.local_nonce,
                "dropped": s.dropped,
                "errors": s.unframer.errors,
                "tx_limit": s.tx_max_payload,
            }
        rc, events = 0, []
        try:
            if op == "start":
                s.start()
            elif op == "send":
                s.send(data)
            elif op == "log":
                s.send_log(data)
            else:
                events = [event_record(e) for e in s.receive(data)]
        except ConnectionError:
            rc = -4
        except ValueError:
            rc = -3
        out: dict[str, Any] = {"events": events, "tx": b"".join(self.tx).hex()}
        self.tx.clear()
        if op != "rx":
            out["rc"] = rc
        return out

    def close(self) -> None:
        pass


def python_harness(commands: list[str]) -> list[list[str]]:
    """What the C harness answers to ``commands``, computed with the Python implementation."""
    answers: list[list[str]] = []
    py: PySide | None = None
    for command in commands:
        op, *args = command.split()
        data = bytes.fromhex(args[-1]) if args and args[-1] != "-" else b""
        if op == "crc":
            answers.append([f"crc {crc16(data):04x}"])
        elif op == "encode":
            answers.append([f"frame {encode_frame(data).hex()}"])
        elif op == "message":
            frame = encode_frame(encode_message(int(args[0]), int(args[1]), data))
            answers.append([f"frame {frame.hex()}"])
        elif op == "decode":
            answers.append(python_decode_lines(int(args[0]), data))
        elif op == "session":
            rx_max, tx_max = int(args[0]), int(args[1])
            spec = {"nonces": data.hex(), "max_payload": rx_max, "tx_max_payload": tx_max}
            try:
                py = PySide(spec)
            except ValueError:
                py = None
                answers.append(["error bad session config"])
            else:
                answers.append(["ok"])
        elif py is None:
            answers.append(["error no session"])
        elif op == "state":
            got = py.step("state")
            answers.append(
                [
                    f"state {got['state']} id {got['session_id']} nonce {got['nonce']} "
                    f"dropped {got['dropped']} errors {got['errors']} limit {got['tx_limit']}"
                ]
            )
        else:
            got = py.step(op, data)
            lines = [f"rc {got['rc']}"] if "rc" in got else []
            for kind, value in got["events"]:
                lines.append(f"{kind} {value}" if kind == "started" else f"{kind} {value or '-'}")
            answers.append(lines + ([f"tx {got['tx']}"] if got["tx"] else []))
    return answers


def event_record(event: LinkEvent) -> list[Any]:
    if event.kind == EventKind.STARTED:
        return ["started", event.session_id]
    return ["data" if event.kind == EventKind.DATA else "log", event.body.hex()]


def replay(transcript: dict[str, Any], make_side: Callable[[dict[str, Any]], Any]) -> None:
    sides = {name: make_side(spec) for name, spec in transcript["sides"].items()}
    try:
        for number, step in enumerate(transcript["steps"]):
            got = sides[step["side"]].step(step["op"], bytes.fromhex(step.get("data", "")))
            want = {key: step[key] for key in got}
            assert got == want, f"{transcript['name']}: step {number} ({step['side']} {step['op']})"
    finally:
        for side in sides.values():
            side.close()


# ---------------------------------------------------------------------- vectors in Python


def test_crc_is_ccitt_false() -> None:
    spec = VECTORS["crc"]
    check_input = bytes.fromhex(spec["check_input"])
    assert crc16(check_input) == reference_crc(check_input) == int(spec["check"], 16) == 0x29B1
    data = bytes(range(256)) * 3
    assert crc16(data) == reference_crc(data)
    assert crc16(data[100:], crc16(data[:100])) == crc16(data)


def test_python_encodes_the_frame_vectors() -> None:
    names = {v["name"] for v in VECTORS["frames"]}
    assert {"empty", "start byte only", "escape byte only", "max size (default limit)"} <= names
    for vector in VECTORS["frames"]:
        payload, frame = bytes.fromhex(vector["payload"]), bytes.fromhex(vector["frame"])
        assert encode_frame(payload) == reference_frame(payload) == frame, vector["name"]
        assert 0x7E not in frame[1:], vector["name"]
        written: list[bytes] = []
        Framer(written.append).write_frame([payload[:3], payload[3:]])
        assert written == [frame]


def test_python_decodes_the_frame_vectors_whole_and_byte_by_byte() -> None:
    for vector in VECTORS["frames"]:
        payload, frame = bytes.fromhex(vector["payload"]), bytes.fromhex(vector["frame"])
        assert Unframer().feed(frame) == [payload], vector["name"]
        unframer = Unframer()
        assert [p for byte in frame for p in unframer.feed(bytes([byte]))] == [payload]


def python_decode_lines(max_payload: int, stream: bytes, split: int = 0) -> list[str]:
    unframer = Unframer(max_payload)
    step = split or len(stream) or 1
    out = [p for i in range(0, len(stream), step) for p in unframer.feed(stream[i : i + step])]
    stats = f"stats frames={unframer.frames} errors={unframer.errors} skipped={unframer.skipped}"
    return [f"payload {hx(p)}" for p in out] + [stats]


def decode_vector_lines(vector: dict[str, Any]) -> list[str]:
    lines = [f"payload {hx(bytes.fromhex(p))}" for p in vector["payloads"]]
    stats = f"frames={vector['frames']} errors={vector['errors']} skipped={vector['skipped']}"
    return [*lines, f"stats {stats}"]


def test_python_decode_vectors() -> None:
    for vector in VECTORS["decode"]:
        stream = bytes.fromhex(vector["stream"])
        for split in (0, 1, 7):
            got = python_decode_lines(vector["max_payload"], stream, split)
            assert got == decode_vector_lines(vector), (vector["name"], split)


def test_python_message_vectors() -> None:
    for vector in VECTORS["messages"]:
        payload = encode_message(
            vector["type"], vector["session_id"], bytes.fromhex(vector["body"])
        )
        assert payload.hex() == vector["payload"]
        assert encode_frame(payload).hex() == vector["frame"]


@pytest.mark.parametrize("index", range(len(VECTORS["sessions"])))
def test_python_session_transcripts(index: int) -> None:
    replay(VECTORS["sessions"][index], PySide)


def test_module_examples_run() -> None:
    for module in (
        pytvm.rpc.wire.serial_framing,
        pytvm.rpc.wire.serial_link,
        pytvm.rpc.wire.serial_channel,
    ):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# ---------------------------------------------------------------------- vectors in C

needs_cc = pytest.mark.needs_cc


@needs_cc
@pytest.mark.parametrize("cc", [cc for cc in ("gcc", "clang") if shutil.which(cc)])
def test_c_builds_strict_under_gcc_and_clang(tmp_path: Path, cc: str) -> None:
    path = build_harness(tmp_path, cc, f"{STRICT_CFLAGS} {EXTRA_WARNINGS}")
    vector = VECTORS["frames"][-1]
    assert batch(path, [f"encode {vector['payload']}"]) == [[f"frame {vector['frame']}"]]


@needs_cc
def test_c_frame_and_crc_vectors(harness: Path) -> None:
    crc = VECTORS["crc"]
    commands = [f"crc {crc['check_input']}"]
    expected = [[f"crc {crc['check']}"]]
    for vector in VECTORS["frames"]:
        payload = hx(bytes.fromhex(vector["payload"]))
        commands += [f"encode {payload}", f"decode {DEFAULT_MAX_PAYLOAD} {vector['frame']}"]
        expected += [
            [f"frame {vector['frame']}"],
            [f"payload {payload}", "stats frames=1 errors=0 skipped=0"],
        ]
    assert batch(harness, commands) == expected


@needs_cc
def test_c_decode_vectors(harness: Path) -> None:
    commands = [
        f"decode {v['max_payload']} {hx(bytes.fromhex(v['stream']))}" for v in VECTORS["decode"]
    ]
    assert batch(harness, commands) == [decode_vector_lines(v) for v in VECTORS["decode"]]


@needs_cc
def test_c_message_vectors(harness: Path) -> None:
    commands = [
        f"message {v['type']} {v['session_id']} {hx(bytes.fromhex(v['body']))}"
        for v in VECTORS["messages"]
    ]
    assert batch(harness, commands) == [[f"frame {v['frame']}"] for v in VECTORS["messages"]]


@needs_cc
@pytest.mark.parametrize("index", range(len(VECTORS["sessions"])))
def test_c_session_transcripts(harness: Path, index: int) -> None:
    replay(VECTORS["sessions"][index], lambda spec: CSide(harness, spec))


SMOKE = ROOT / "pytvm" / "src" / "crt" / "serial" / "tests" / "smoke"


def smoke_script() -> tuple[list[str], list[list[str]]]:
    commands = (SMOKE.with_suffix(".in")).read_text().splitlines()
    answers: list[list[str]] = [[]]
    for line in (SMOKE.with_suffix(".out")).read_text().splitlines():
        if line == ".":
            answers.append([])
        else:
            answers[-1].append(line)
    return commands, answers[:-1]


def test_the_c_smoke_script_expects_what_python_does() -> None:
    commands, answers = smoke_script()
    assert python_harness(commands) == answers


@needs_cc
def test_c_smoke_script(harness: Path) -> None:
    commands, answers = smoke_script()
    assert batch(harness, commands) == answers


# ---------------------------------------------------------------------- properties

payloads = st.binary(max_size=300) | st.lists(
    st.sampled_from(b"\x7e\x7d\x5e\x5d\x00"), max_size=40
).map(bytes)
no_sop = st.binary(max_size=30).map(lambda b: b.replace(b"\x7e", b""))


@given(payload_list=st.lists(payloads, max_size=6), split=st.integers(1, 64))
def test_any_payloads_round_trip_however_the_stream_is_split(
    payload_list: list[bytes], split: int
) -> None:
    stream = b"".join(encode_frame(p) for p in payload_list)
    unframer = Unframer(300)
    out = [p for i in range(0, len(stream), split) for p in unframer.feed(stream[i : i + split])]
    assert out == payload_list
    assert unframer.errors == unframer.skipped == 0


@given(payload_list=st.lists(payloads, min_size=1, max_size=5), data=st.data())
def test_garbage_before_and_between_frames_is_skipped(
    payload_list: list[bytes], data: st.DataObject
) -> None:
    garbage = [data.draw(no_sop) for _ in range(len(payload_list) + 1)]
    stream = garbage[0] + b"".join(encode_frame(p) + g for p, g in zip(payload_list, garbage[1:]))
    unframer = Unframer(300)
    assert unframer.feed(stream) == payload_list
    assert unframer.skipped == sum(map(len, garbage)) and unframer.errors == 0
    # Garbage may even hold start bytes: the real frames all still come through, last.
    noisy = data.draw(st.binary(max_size=30)) + stream
    got = Unframer(300).feed(noisy)
    assert got[len(got) - len(payload_list) :] == payload_list


@settings(derandomize=True, max_examples=300)
@given(payload=payloads, data=st.data())
def test_a_flipped_bit_is_detected_and_the_next_frame_still_decodes(
    payload: bytes, data: st.DataObject
) -> None:
    frame = bytearray(encode_frame(payload))
    position = data.draw(st.integers(0, len(frame) * 8 - 1))
    frame[position // 8] ^= 1 << (position % 8)
    unframer = Unframer(300)
    assert unframer.feed(bytes(frame) + encode_frame(b"next")) == [b"next"]
    assert unframer.errors + unframer.skipped >= 1


@needs_cc
@settings(max_examples=40, deadline=None, suppress_health_check=NO_FIXTURE_CHECK)
@given(
    payload_list=st.lists(payloads, max_size=6),
    garbage=st.binary(max_size=20),
    max_payload=st.integers(0, 320),
)
def test_c_and_python_frames_are_byte_identical(
    harness: Path, payload_list: list[bytes], garbage: bytes, max_payload: int
) -> None:
    stream = garbage + garbage.join(encode_frame(p) for p in payload_list)
    commands = [f"encode {hx(p)}" for p in payload_list] + [f"crc {hx(p)}" for p in payload_list]
    commands.append(f"decode {max_payload} {hx(stream)}")
    assert batch(harness, commands) == python_harness(commands)


session_ops = st.one_of(
    st.just(("start", b"")),
    st.just(("state", b"")),
    st.tuples(st.just("send"), st.binary(max_size=40)),
    st.tuples(st.just("log"), st.binary(max_size=40)),
    st.builds(
        lambda kind, low, high, body: (
            "rx",
            encode_frame(encode_message(kind, low | high << 8, body)),
        ),
        st.integers(0, 5),
        st.sampled_from([0, 1, 0x5A, 0x5B]),
        st.sampled_from([0, 1, 0xC3]),
        st.sampled_from([b"", b"\x01", b"\x02", b"data"]),
    ),
    st.tuples(st.just("rx"), st.binary(max_size=12)),
)


@needs_cc
@settings(max_examples=40, deadline=None, suppress_health_check=NO_FIXTURE_CHECK)
@given(
    nonces=st.lists(
        st.sampled_from([0, 1, 0x5A, 0x5B, 0xC3, 0xFF]) | st.integers(0, 255), max_size=6
    ),
    ops=st.lists(session_ops, max_size=25),
)
def test_c_and_python_sessions_agree_on_any_message_sequence(
    harness: Path, nonces: list[int], ops: list[tuple[str, bytes]]
) -> None:
    spec = {"nonces": bytes(nonces).hex(), "max_payload": 48, "tx_max_payload": 20}
    c_side, py_side = CSide(harness, spec), PySide(spec)
    try:
        for op, data in ops:
            assert c_side.step(op, data) == py_side.step(op, data), (op, data.hex())
    finally:
        c_side.close()


# ---------------------------------------------------------------------- session handshake


def pair(**kwargs: Any) -> tuple[SerialLink, list[bytes], SerialLink, list[bytes]]:
    a_out: list[bytes] = []
    b_out: list[bytes] = []
    return (
        SerialLink(a_out.append, **kwargs),
        a_out,
        SerialLink(b_out.append, **kwargs),
        b_out,
    )


def deliver(out: list[bytes], to: SerialLink) -> list[LinkEvent]:
    data = b"".join(out)
    out.clear()
    return to.receive(data)


@pytest.mark.parametrize("repeat", range(20))
def test_handshake_from_either_side_agrees_and_drops_stale_traffic(repeat: int) -> None:
    a, a_out, b, b_out = pair()
    a.start()
    assert [e.kind for e in deliver(a_out, b)] == [EventKind.STARTED]
    assert [e.kind for e in deliver(b_out, a)] == [EventKind.STARTED]
    assert a.established and b.established and a.session_id == b.session_id
    first = a.session_id
    assert first & 0xFF and first >> 8
    a.send(b"to b")
    assert deliver(a_out, b) == [LinkEvent(EventKind.DATA, b"to b", first)]
    b.send(b"old")
    stale = b"".join(b_out)
    b_out.clear()
    starter, starter_out, other, other_out = (
        (a, a_out, b, b_out) if repeat % 2 else (b, b_out, a, a_out)
    )
    starter.start()  # a reset from either side
    assert starter.state == LinkState.STARTING
    with pytest.raises(ConnectionError, match="not ESTABLISHED"):
        starter.send(b"too early")
    deliver(starter_out, other)
    deliver(other_out, starter)
    assert a.session_id == b.session_id != first
    assert a.receive(stale) == [] and a.dropped == 1
    b.send(b"fresh")
    assert deliver(b_out, a) == [LinkEvent(EventKind.DATA, b"fresh", a.session_id)]


@needs_cc
def test_python_host_and_c_board_talk_live(harness: Path) -> None:
    board = CSide(harness, {"nonces": "", "max_payload": 4096, "tx_max_payload": 0})
    host_out: list[bytes] = []
    host = SerialLink(host_out.append)
    try:
        host.start()
        reply = board.step("rx", b"".join(host_out))
        host_out.clear()
        assert [kind for kind, *_ in reply["events"]] == ["started"]
        assert host.receive(bytes.fromhex(reply["tx"])) == [
            LinkEvent(EventKind.STARTED, b"", reply["events"][0][1])
        ]
        message = bytes(range(256)) * 40  # split into several frames by the host
        host.send(message)
        got = board.step("rx", b"".join(host_out))
        host_out.clear()
        assert bytes.fromhex("".join(body for _, body in got["events"])) == message
        board_reset = board.step("start")  # the board reboots its session
        events = host.receive(bytes.fromhex(board_reset["tx"]))
        assert [e.kind for e in events] == [EventKind.STARTED]
        confirm = board.step("rx", b"".join(host_out))
        host_out.clear()
        assert confirm["events"] == [["started", host.session_id]]
        answer = board.step("send", b"answer")
        assert host.receive(bytes.fromhex(answer["tx"])) == [
            LinkEvent(EventKind.DATA, b"answer", host.session_id)
        ]
    finally:
        board.close()
