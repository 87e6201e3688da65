"""The C codec (``pytvm.rpc.wire._c_codec``, ``src/rpc_codec/rpc_codec.c``) against the pure-Python
reference: the same bytes encoded, the same values decoded, the same errors raised on malformed,
truncated, oversized and random input (never a crash), and a real server that keeps serving
after a bad request.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytvm.ffi.device import Device
from pytvm.ffi.dtype import DataType
from pytvm.ffi.type_index import TypeIndex
from pytvm.rpc.wire import _c_codec, protocol, values
from pytvm.rpc.wire.base import ProtocolError
from pytvm.rpc.wire.protocol import Limits, Reader

if _c_codec.c_codec_module() is None:
    pytest.skip(
        "the C codec cannot be built here (no C compiler or no Python.h)", allow_module_level=True
    )

C = _c_codec.c_codec_module()
MIXED: list[Any] = [
    1,
    -5,
    (1 << 63) - 1,
    -(1 << 63),
    2.5,
    float("inf"),
    None,
    True,
    False,
    "",
    "héllo",
    b"",
    b"\x00\xff",
    values.StrObject("s"),
    values.BytesObject(b"b"),
    values.Handle(7),
    values.Handle(9, 68),
    values.ObjectRef(3),
    Device(2, 1),
    DataType(2, 32, 4),
    values.TensorDesc(0x1000, Device(1, 0), DataType(2, 32, 1), (2, 3), 16),
    bytearray(b"ba"),
]


def _both(fn: Callable[[], Any]) -> tuple[Any, Any]:
    """``fn()`` with the Python codec, then with the C codec (outcome or the exception)."""
    out = []
    for use_c in (False, True):
        previous = _c_codec.use_c_codec(use_c)
        try:
            out.append(fn())
        except Exception as err:  # the error itself is what is compared
            out.append((type(err), str(err)))
        finally:
            _c_codec.use_c_codec(previous)
    return out[0], out[1]


@pytest.fixture(autouse=True)
def _c_codec_back_on() -> Iterator[None]:
    yield
    _c_codec.use_c_codec(True)


def test_c_codec_is_on_by_default_where_it_builds() -> None:
    assert _c_codec.CODEC.module is C


def test_encodings_are_byte_identical() -> None:
    py, c = _both(lambda: values.encode_pseq(MIXED))
    assert py == c
    for fn in (
        lambda: protocol.encode_call(0xDEADBEEF, MIXED),
        lambda: protocol.encode_return([None]),
        lambda: protocol.encode_return(MIXED),
        lambda: protocol.encode_call_return(TypeIndex.INT, [42]),
        lambda: protocol.encode_call_return(1, []),
    ):
        py, c = _both(fn)
        assert isinstance(py, bytes) and py == c


def test_decodings_are_equal_and_typed_alike() -> None:
    wire = values.encode_pseq(MIXED)
    py, c = _both(lambda: values.decode_pseq(Reader(wire)))
    assert py == c
    assert [type(v) for v in py] == [type(v) for v in c]


@pytest.mark.parametrize(
    "bad",
    [1 << 63, -(1 << 63) - 1, "\ud800", object(), [1], 3 + 4j],
    ids=["int-over", "int-under", "lone-surrogate", "object", "list", "complex"],
)
def test_unencodable_values_raise_the_same_error(bad: Any) -> None:
    py, c = _both(lambda: values.encode_pseq([1, bad]))
    assert py == c
    assert py[0] is ProtocolError


def test_every_truncation_raises_the_same_error() -> None:
    wire = values.encode_pseq(MIXED)
    for cut in range(len(wire)):
        py, c = _both(lambda cut=cut: values.decode_pseq(Reader(wire[:cut])))  # type: ignore[misc]
        assert py == c, cut
        assert py[0] is ProtocolError, cut


@pytest.mark.parametrize(
    "wire",
    [
        struct.pack("<i", -1),  # negative count
        struct.pack("<i", 1 << 20),  # count over the limit
        struct.pack("<i", 3) + struct.pack("<iq", 1, 5),  # count beyond the bytes
        struct.pack("<iiQ", 1, 8, 1 << 62),  # string length far past the packet
        struct.pack("<iiQ", 1, 9, 1 << 40) + b"x" * 16,  # bytes length past max_bytes
        struct.pack("<iiQ", 1, 8, 2) + b"\xff\xfe",  # not UTF-8
        struct.pack("<ii", 1, 40),  # unknown type index
        struct.pack("<ii", 1, 7) + struct.pack("<Qiii", 0, 1, 0, 1 << 30),  # huge ndim
    ],
    ids=["neg-count", "big-count", "short-count", "long-str", "big-bytes", "utf8", "tag", "ndim"],
)
def test_hostile_sequences_raise_the_same_protocol_error(wire: bytes) -> None:
    limits = Limits(max_bytes=1 << 20)
    py, c = _both(lambda: values.decode_pseq(Reader(wire, limits)))
    assert py == c
    assert py[0] is ProtocolError


def test_random_bytes_decode_alike_and_never_crash() -> None:
    rng = random.Random(23)
    tags = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 65, 66, 68, 73, 115, 40, -1]
    for _ in range(400):
        n = rng.randrange(0, 6)
        body = bytearray(struct.pack("<i", n))
        for _ in range(n):
            body += struct.pack("<i", rng.choice(tags))
            body += rng.randbytes(rng.randrange(0, 24))
        wire = bytes(body)
        py, c = _both(lambda wire=wire: values.decode_pseq(Reader(wire)))  # type: ignore[misc]
        assert py == c, wire.hex()


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=96))
def test_any_bytes_decode_alike(wire: bytes) -> None:
    py, c = _both(lambda: values.decode_pseq(Reader(wire)))
    assert py == c


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1),
            st.floats(allow_nan=False),
            st.text(max_size=20),
            st.binary(max_size=20),
        ),
        max_size=8,
    )
)
def test_any_common_values_round_trip_alike(items: list[Any]) -> None:
    py, c = _both(lambda: protocol.encode_call(5, items))
    assert py == c
    body = py[20:]  # after u64 len, i32 code, u64 handle
    assert values.decode_pseq(Reader(body)) == items


def test_take_return_needs_a_whole_return_packet() -> None:
    packet = protocol.encode_call_return(1, [41])
    limits = Limits()
    args = (limits.max_packet, limits.max_args, limits.max_bytes, limits)
    buf = bytearray(packet + packet)
    assert C.take_return(buf, 0, *args) == ([1, 41], len(packet))
    assert C.take_return(buf, len(packet), *args) == ([1, 41], 2 * len(packet))
    for cut in range(len(packet)):
        assert C.take_return(bytearray(packet[:cut]), 0, *args) is None
    call = protocol.encode_call(3, [1])
    assert C.take_return(call, 0, *args) is None  # not a kReturn
    assert C.take_return(bytes(8) + packet, 0, *args) is None  # padding: the general path
    huge = struct.pack("<Qi", 1 << 40, 4)
    assert C.take_return(huge, 0, *args) is None  # a length the general path refuses


def test_take_return_refuses_trailing_bytes_and_bad_values() -> None:
    limits = Limits()
    args = (limits.max_packet, limits.max_args, limits.max_bytes, limits)
    body = struct.pack("<i", 4) + values.encode_pseq([1]) + b"zz"
    with pytest.raises(ProtocolError, match="kReturn: 2 unexpected trailing bytes"):
        C.take_return(struct.pack("<Q", len(body)) + body, 0, *args)
    body = struct.pack("<i", 4) + struct.pack("<ii", 1, 40)
    with pytest.raises(ProtocolError, match="unknown type index 40"):
        C.take_return(struct.pack("<Q", len(body)) + body, 0, *args)


def test_decode_hook_cannot_read_past_the_body() -> None:
    # A Handle at the very end of a body cut short: the next packet's bytes are not read.
    body = struct.pack("<i", 4) + struct.pack("<ii", 1, 4) + b"\x01\x02"
    buf = struct.pack("<Q", len(body)) + body + bytes(16)
    limits = Limits()
    with pytest.raises(ProtocolError, match="needs 8 bytes but the packet has 2 left"):
        C.take_return(buf, 0, limits.max_packet, limits.max_args, limits.max_bytes, limits)


def test_range_outside_the_buffer_is_refused() -> None:
    limits = Limits()
    with pytest.raises(ValueError, match="outside the 4-byte buffer"):
        C.decode_pseq(b"\0\0\0\0", 0, 9, limits.max_args, limits.max_bytes, "args", limits)


# ---------------------------------------------------------------------- a real server


#: The server process: serve one connection (no handshake) with the C codec, port to a file.
_SERVER = """
import socket, sys
import pytvm.rpc.testing
from pytvm.rpc.sessions.endpoint import serve
from pytvm.rpc.wire.channel import SocketChannel
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
conn, _ = listener.accept()
serve(SocketChannel(conn))
"""


@pytest.fixture
def raw_server(tmp_path: Path) -> Iterator[socket.socket]:
    port_file = tmp_path / "port"
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, str(port_file)])
    try:
        sock = None
        for _ in range(600):
            if port_file.exists():
                sock = socket.create_connection(("127.0.0.1", int(port_file.read_text())), 10)
                break
            try:
                proc.wait(timeout=0.05)
                raise AssertionError("the server process exited before listening")
            except subprocess.TimeoutExpired:
                pass
        assert sock is not None, "the server did not listen within 30 s"
        sock.settimeout(30)
        with sock:
            yield sock
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _recv_packet(sock: socket.socket) -> tuple[int, bytes]:
    def exact(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            assert chunk, "server closed the connection"
            out += chunk
        return out

    (size,) = struct.unpack("<Q", exact(8))
    body = exact(size)
    return struct.unpack_from("<i", body)[0], body[4:]


def test_server_answers_bad_calls_and_keeps_serving(raw_server: socket.socket) -> None:
    sock = raw_server
    sock.sendall(protocol.encode_init_server())
    assert _recv_packet(sock)[0] == protocol.RPCCode.RETURN
    sock.sendall(protocol.encode_syscall(protocol.RPCCode.GET_GLOBAL_FUNC, ["rpc.test.addone"]))
    code, body = _recv_packet(sock)
    handle = values.decode_pseq(Reader(body))[0].value
    bad_bodies = [
        struct.pack("<i", 3) + b"\x01\x02",  # handle cut short
        struct.pack("<iQ", 3, handle) + struct.pack("<i", 1 << 30),  # impossible count
        struct.pack("<iQ", 3, handle) + struct.pack("<iiQ", 1, 8, 1 << 50),  # string too long
        struct.pack("<iQ", 3, handle) + values.encode_pseq([1]) + b"junk",  # trailing bytes
        struct.pack("<iQ", 3, handle) + struct.pack("<ii", 1, 99),  # unknown type index
        struct.pack("<iQ", 3, handle) + random.Random(1).randbytes(40),
    ]
    for body in bad_bodies:
        sock.sendall(struct.pack("<Q", len(body)) + body)
        code, reply = _recv_packet(sock)
        assert code == protocol.RPCCode.EXCEPTION, reply
    sock.sendall(protocol.encode_call(handle, [41]))
    code, reply = _recv_packet(sock)
    assert code == protocol.RPCCode.RETURN
    assert values.decode_pseq(Reader(reply)) == [1, 42]


def test_untrusted_cache_falls_back_to_the_python_codec(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "pytvm").mkdir(parents=True)
    (cache / "pytvm").chmod(0o777)  # writable by others: pytvm refuses to load from it
    code = (
        "import pytvm.rpc.wire.values as v, pytvm.rpc.wire._c_codec as c; "
        "assert c.CODEC.module is None; "
        "assert v.decode_pseq(v.Reader(v.encode_pseq([1, 'a']))) == [1, 'a']; print('ok')"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "using the Python codec" in out.stderr
