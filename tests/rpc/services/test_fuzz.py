"""A live RPC server keeps answering through thousands of mutated packets.

Requests of every kind (kInitServer, kCallFunc on a registered echo function, syscalls 9-21,
kCopyToRemote/kCopyFromRemote on memory the fuzzer allocated) are mutated -- bit flips, byte
insert/delete, truncation, overwritten length fields, foreign codes -- and sent over one
connection. While the outer length stays consistent with the body the stream is in sync, so
every packet must get exactly one well-formed reply, and a packet our own decoder rejects must
get a kException. Packets whose outer length lies, a length over ``Limits.max_packet`` and
clients that vanish mid-packet end only their own session: the next client is served.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytvm
from pytvm.ffi.device import Device
from pytvm.ffi.dtype import DataType
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.endpoint import Endpoint, serve
from pytvm.rpc.wire.base import RPC_MAGIC, ProtocolError, recv_key, recvall, send_key, set_nodelay
from pytvm.rpc.wire.channel import SocketChannel, memory_pair
from pytvm.rpc.wire.messages import CopyAck, ExceptionMsg, Return, decode_message
from pytvm.rpc.wire.protocol import (
    DEFAULT_LIMITS,
    BytesObject,
    Handle,
    Limits,
    ObjectRef,
    RPCCode,
    StrObject,
    TensorDesc,
    encode_call,
    encode_copy_from_remote,
    encode_copy_to_remote,
    encode_init_server,
    encode_shutdown,
    encode_syscall,
)

ECHO = "testing.fuzz.echo"
IO_TIMEOUT = 60.0  # a safety net against a hung server, never a synchronisation
CPU = Device(1, 0)
U8 = DataType(1, 8, 1)
F32 = DataType(2, 32, 1)
U64_MAX = (1 << 64) - 1
I64_MAX = (1 << 63) - 1
INTERESTING = [0, 1, 2, 3, 4, 7, 8, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 1 << 31, (1 << 32) - 1]
INTERESTING += [1 << 40, I64_MAX, 1 << 63, U64_MAX]
CODES = [-1, 0, 2, 3, 4, 5, 6, 7, 8, *range(9, 22), 22, 23, 100, 1 << 30, (1 << 31) - 1]


def _echo(*args: Any) -> Any:
    return args[0] if args else None


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


# ------------------------------------------------------------------------------ servers


class ThreadServer:
    """The handshake plus ``endpoint.serve`` in a thread per connection, in this process.

    ``errors`` collects whatever escapes ``serve``: it should only ever end a session quietly.
    """

    def __init__(self) -> None:
        self._listen = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listen.getsockname()[1]
        self.errors: list[BaseException] = []
        self._sessions: list[threading.Thread] = []
        self._stop = False
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    def _accept_loop(self) -> None:
        while True:
            conn, _ = self._listen.accept()
            if self._stop:
                conn.close()
                return
            t = threading.Thread(target=self._session, args=(conn,), daemon=True)
            self._sessions.append(t)
            t.start()

    def _session(self, conn: socket.socket) -> None:
        try:
            (magic,) = struct.unpack("<i", recvall(conn, 4))
            if magic != RPC_MAGIC:
                conn.close()
                return
            recv_key(conn)
            send_key(conn, RPC_MAGIC, "server:")
            serve(SocketChannel(conn))
        except BaseException as err:
            self.errors.append(err)

    def wait_idle(self, timeout: float) -> bool:
        for t in list(self._sessions):
            t.join(timeout)
        return not any(t.is_alive() for t in self._sessions)

    def terminate(self) -> None:
        self._stop = True
        socket.create_connection(("127.0.0.1", self.port)).close()  # wakes accept()
        self._acceptor.join(IO_TIMEOUT)
        self._listen.close()


def _server_kinds() -> list[str]:
    return ["thread", "forked"]


def _start(kind: str) -> Any:
    if kind == "forked":
        return Server(host="127.0.0.1", port=0, key="", silent=True)
    return ThreadServer()


@pytest.fixture(scope="module", autouse=True)
def echo_function() -> Iterator[None]:
    """Registered before any server starts, so forked session workers have it too."""
    pytvm.register_func(ECHO, _echo, override=True)
    yield
    pytvm.remove_global_func(ECHO)


@pytest.fixture(scope="module", params=_server_kinds())
def server(request: pytest.FixtureRequest, echo_function: None) -> Iterator[Any]:
    srv = _start(request.param)
    yield srv
    srv.terminate()
    if isinstance(srv, ThreadServer):
        assert srv.errors == []


@pytest.fixture(scope="module")
def fuzz_server(echo_function: None) -> Iterator[Any]:
    """The server the big mutation streams go to: the real forked one (a crash there ends one
    worker and shows up as a closed connection).
    """
    srv = _start("forked")
    yield srv
    srv.terminate()


# ------------------------------------------------------------------------------ raw client


class RawClient:
    """A client that speaks the wire format byte by byte."""

    def __init__(self, port: int, init: bool = True) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT)
        set_nodelay(self.sock)
        send_key(self.sock, RPC_MAGIC, "client:")
        (magic,) = struct.unpack("<i", recvall(self.sock, 4))
        assert magic == RPC_MAGIC
        assert recv_key(self.sock).startswith("server:")
        if init:
            assert self.request(encode_init_server()) == Return((None,))

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_packet(self) -> bytes | None:
        """The next reply body; None if the server closed the stream at a packet boundary."""
        head = bytearray()
        while len(head) < 8:
            chunk = self.sock.recv(8 - len(head))
            if not chunk:
                assert not head, "server closed the stream inside a length field"
                return None
            head += chunk
        (size,) = struct.unpack("<Q", head)
        assert 4 <= size <= 1 << 32, f"server sent packet length {size}"
        return recvall(self.sock, size)

    def request(self, pkt: bytes) -> Any:
        self.send(pkt)
        body = self.read_packet()
        assert body is not None, "server closed the connection instead of replying"
        return decode_message(body)

    def global_func(self, name: str) -> int:
        reply = self.request(encode_syscall(RPCCode.GET_GLOBAL_FUNC, [name]))
        assert isinstance(reply, Return) and len(reply.values) == 1
        (h,) = reply.values
        assert isinstance(h, Handle) and h.value
        return h.value

    def alloc(self, nbytes: int) -> int:
        reply = self.request(encode_syscall(RPCCode.DEV_ALLOC_DATA, [CPU, nbytes, 64, U8]))
        assert isinstance(reply, Return), reply
        return int(reply.values[0].value)

    def assert_echo_works(self) -> None:
        h = self.global_func(ECHO)
        assert self.request(encode_call(h, [7])) == Return((1, 7))
        assert self.request(encode_call(h, ["fuzz"])) == Return((65, "fuzz"))
        assert self.request(encode_syscall(RPCCode.FREE_HANDLE, [Handle(h)])) == Return((None,))

    def drain_to_eof(self) -> list[bytes]:
        """Every reply until the server closes the connection."""
        replies = []
        while (body := self.read_packet()) is not None:
            replies.append(body)
        return replies

    def close(self) -> None:
        self.sock.close()


def assert_serves_a_new_client(srv: Any) -> None:
    client = RawClient(srv.port)
    client.assert_echo_works()
    client.send(encode_shutdown())
    assert client.drain_to_eof() == []
    client.close()


# ------------------------------------------------------------------------------ generator


class Fuzzer:
    """Valid requests from ``rng`` (fed with the handles and pointers of earlier replies),
    and mutations of them.
    """

    def __init__(self, rng: random.Random, echo: int, buffers: list[tuple[int, int]]) -> None:
        self.rng = rng
        self.echo = echo
        self.buffers = list(buffers)  # (pointer, nbytes) of CPU memory the server gave us
        self.handles: list[int] = [echo]  # objects and functions the server exported
        self.allocated: list[int] = []  # pointers of kDevAllocData replies (free to free)
        self.streams: list[int] = [0]

    # -- values

    def u64(self) -> int:
        r = self.rng
        return r.choice(INTERESTING) if r.random() < 0.3 else r.getrandbits(r.choice([8, 32, 64]))

    def int64(self) -> int:
        v = self.u64()
        return v - (1 << 64) if v > I64_MAX else v

    def device(self) -> Device:
        r = self.rng
        roll = r.random()
        if roll < 0.75:
            return CPU
        if roll < 0.9:
            return Device(r.choice([0, 2, 4, 7, 8, 10, 12, 13, 14, 16, 129]), r.randrange(-1, 3))
        return Device(r.getrandbits(31), r.getrandbits(32) - (1 << 31))

    def dtype(self) -> DataType:
        r = self.rng
        if r.random() < 0.8:
            return r.choice([U8, F32, DataType(0, 32, 1), DataType(2, 64, 1), DataType(2, 32, 4)])
        return DataType(r.getrandbits(8), r.getrandbits(8), r.getrandbits(16))

    def text(self) -> str:
        r = self.rng
        return "".join(r.choice("abc.é\u4e2d\0") for _ in range(r.randrange(12)))

    def desc(self, on_buffer: bool | None = None) -> TensorDesc:
        r = self.rng
        if on_buffer is None:
            on_buffer = r.random() < 0.7
        if on_buffer and self.allocated and r.random() < 0.15:
            # memory the stream allocated itself, of a size the fuzzer does not track
            ptr = r.choice(self.allocated)
            offset = r.choice([0, 0, 8, 64, 4096, 1 << 20, 1 << 40])
            return TensorDesc(ptr, CPU, U8, (r.choice([0, 1, 8, 64, 256]),), offset)
        if on_buffer and self.buffers:
            ptr, size = r.choice(self.buffers)
            dtype = r.choice([U8, F32])
            count = size // dtype.itemsize
            offset = r.randrange(0, 16) * dtype.itemsize if r.random() < 0.5 else 0
            n = r.randrange(0, max(1, (size - offset) // dtype.itemsize) + 1)
            shape: tuple[int, ...] = (n,) if r.random() < 0.6 else (1, n)
            if r.random() < 0.1:
                shape = (count + r.randrange(1, 4),)  # a little too big
            return TensorDesc(ptr, CPU, dtype, shape, offset)
        ndim = r.choice([0, 1, 1, 2, 3, 8])
        dims = tuple(r.choice([0, 1, 2, 3, 16, 1 << 20, 1 << 32, I64_MAX]) for _ in range(ndim))
        return TensorDesc(self.u64(), self.device(), self.dtype(), dims, self.u64())

    def handle(self) -> Handle:
        r = self.rng
        pool = self.handles if r.random() < 0.6 else [p for p, _ in self.buffers] or [0]
        value = r.choice(pool) if r.random() < 0.8 else self.u64()
        return Handle(value, r.choice([4, 4, 4, 68, 73]))

    def value(self) -> Any:  # noqa: PLR0911, PLR0912 - a dispatcher: one branch per value kind
        r = self.rng
        kind = r.randrange(14)
        if kind == 0:
            return None
        if kind == 1:
            return r.random() < 0.5
        if kind == 2:
            return self.int64()
        if kind == 3:
            return r.choice([0.0, -0.0, 2.5, float("inf"), float("nan"), r.uniform(-1e9, 1e9)])
        if kind == 4:
            return self.text()
        if kind == 5:
            return r.randbytes(r.randrange(20))
        if kind == 6:
            s = StrObject(self.text())
            s.type_index = r.choice([11, 65])
            return s
        if kind == 7:
            b = BytesObject(r.randbytes(r.randrange(10)))
            b.type_index = r.choice([12, 66])
            return b
        if kind == 8:
            return self.handle()
        if kind == 9:
            return ObjectRef(r.choice(self.handles) if r.random() < 0.5 else self.u64())
        if kind == 10:
            return self.dtype()
        if kind == 11:
            return self.device()
        if kind == 12:
            return self.desc()
        return self.int64() & 0xFF

    def values(self, most: int = 4) -> list[Any]:
        return [self.value() for _ in range(self.rng.randrange(most + 1))]

    # -- requests

    def syscall_args(self, code: int) -> list[Any]:  # noqa: PLR0911, PLR0912 - one branch per code
        r = self.rng
        if r.random() < 0.2:
            # any values; the echo function's handle stays alive for the known-good calls
            values = self.values()
            return [
                Handle(0) if isinstance(v, Handle) and v.value == self.echo else v for v in values
            ]
        if code == RPCCode.GET_GLOBAL_FUNC:
            return [r.choice([ECHO, "rpc.test.addone", "no.such.function", self.text()])]
        if code == RPCCode.FREE_HANDLE:
            # never the echo handle we still use (a fresh lookup would add a reference anyway)
            pool = [h for h in self.handles if h != self.echo] or [0]
            return [Handle(r.choice(pool) if r.random() < 0.5 else self.u64())]
        if code in (RPCCode.DEV_SET_DEVICE, RPCCode.DEV_CREATE_STREAM):
            return [self.device()]
        if code == RPCCode.DEV_GET_CURRENT_STREAM:
            return [self.device()]
        if code == RPCCode.DEV_GET_ATTR:
            return [self.device(), r.choice([0, 1, 4, 5, 14, 16, 17, -1, self.int64()])]
        if code == RPCCode.DEV_ALLOC_DATA:
            nbytes = r.choice([0, 1, 64, 4096, 1 << 16, 1 << 40, 1 << 62, -1])
            return [self.device(), nbytes, r.choice([0, 1, 64, 3, 1 << 20]), self.dtype()]
        if code == RPCCode.DEV_FREE_DATA:
            # mostly what the fuzzer allocated; rarely one of the buffers the copies aim at
            pool = self.allocated if self.allocated and r.random() < 0.9 else [0]
            if r.random() < 0.005:
                pool = [p for p, _ in self.buffers]
            return [self.device(), Handle(r.choice(pool))]
        if code in (RPCCode.DEV_STREAM_SYNC, RPCCode.DEV_FREE_STREAM, RPCCode.DEV_SET_STREAM):
            return [self.device(), Handle(r.choice(self.streams))]
        if code == RPCCode.COPY_AMONG_REMOTE:
            return [self.desc(), self.desc(), Handle(r.choice(self.streams))]
        if code == RPCCode.DEV_ALLOC_DATA_WITH_SCOPE:
            template = self.desc(on_buffer=False)
            if r.random() < 0.7:
                template = TensorDesc(0, CPU, self.dtype(), (r.randrange(64),))
            return [template, r.choice([None, "global", "shared", self.text()])]
        return self.values()

    def request(self) -> bytes:
        """A well-formed request packet."""
        r = self.rng
        kind = r.random()
        if kind < 0.35:
            h = self.echo if r.random() < 0.8 else self.handle().value
            return encode_call(h, self.values())
        if kind < 0.7:
            code = r.randrange(9, 22)
            return encode_syscall(code, self.syscall_args(code))
        if kind < 0.85:
            desc = self.desc()
            nbytes = min(desc.nbytes, r.choice([0, 1, 4, 16, 64, 256]))
            return encode_copy_to_remote(desc, nbytes) + r.randbytes(nbytes)
        if kind < 0.97:
            desc = self.desc()
            return encode_copy_from_remote(desc, min(desc.nbytes, r.choice([0, 1, 4, 64, 256])))
        version = "0.8.0" if r.random() < 0.7 else self.text()
        return encode_init_server(r.choice([[], ["rpc.LocalSession"], self.values()]), version)

    def mutate(self, pkt: bytes) -> bytes:
        """``pkt`` damaged in one to three ways; the outer length is fixed up to match."""
        r = self.rng
        body = bytearray(pkt[8:])
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            op = r.randrange(8)
            at = r.randrange(len(body) + 1)
            if op == 0 and body:  # bit flips
                for _ in range(r.randrange(1, 4)):
                    i = r.randrange(len(body))
                    body[i] ^= 1 << r.randrange(8)
            elif op == 1:  # insert bytes
                body[at:at] = r.randbytes(r.randrange(1, 9))
            elif op == 2 and body:  # delete bytes
                del body[at : at + r.randrange(1, 9)]
            elif op == 3:  # truncate
                del body[r.randrange(len(body) + 1) :]
            elif op == 4:  # a length/count field: overwrite an aligned-ish window
                width = r.choice([4, 8])
                at = r.randrange(0, len(body) + 1, 4)
                value = r.choice(INTERESTING) & ((1 << (8 * width)) - 1)
                body[at : at + width] = value.to_bytes(width, "little")
            elif op == 5:  # a foreign code
                body[0:4] = i32(r.choice(CODES))
            elif op == 6:  # append garbage
                body += r.randbytes(r.randrange(1, 32))
            else:  # splice in the tail of another request
                other = self.request()[8:]
                cut = r.randrange(len(other) + 1)
                body[at:] = other[cut:]
        if len(body) < 4:
            body += bytes(4 - len(body))
        if struct.unpack_from("<i", body)[0] == RPCCode.SHUTDOWN:
            body[0:4] = i32(RPCCode.CALL_FUNC)  # kShutdown has no reply; tested on its own
        return u64(len(body)) + bytes(body)

    # -- replies

    def learn(self, request: bytes, reply: Any) -> None:
        """Keep handles and pointers the server handed out, to aim later requests at them."""
        if not isinstance(reply, Return):
            return
        code = struct.unpack_from("<i", request, 8)[0]
        allocs = (RPCCode.DEV_ALLOC_DATA, RPCCode.DEV_ALLOC_DATA_WITH_SCOPE)
        pool = self.allocated if code in allocs else self.handles
        for v in reply.values:
            if isinstance(v, Handle) and v.value and len(pool) < 64:
                pool.append(v.value)


def check_reply(pkt: bytes, body: bytes | None, history: list[bytes]) -> Any:
    """One in-sync request ``pkt`` got ``body``: a well-formed reply of the right kind."""
    trail = "\n".join(p.hex() for p in history[-4:])
    assert body is not None, f"server closed the connection; last packets sent:\n{trail}"
    reply = decode_message(body)  # a server's reply must itself be well formed
    req = pkt[8:]
    code = struct.unpack_from("<i", req)[0]
    allowed = (CopyAck, ExceptionMsg) if code == RPCCode.COPY_FROM_REMOTE else (Return,)
    assert isinstance(reply, (*allowed, ExceptionMsg)), (reply, trail)
    try:
        msg = decode_message(req)
    except ProtocolError:
        assert isinstance(reply, ExceptionMsg), f"accepted a malformed request:\n{trail}"
        return reply
    if isinstance(reply, CopyAck):
        assert len(reply.data) == msg.nbytes
    elif isinstance(reply, Return):
        if code == RPCCode.CALL_FUNC:
            assert reply.values and type(reply.values[0]) is int, reply
        else:
            assert len(reply.values) == 1, reply
    return reply


def run_stream(client: RawClient, fuzzer: Fuzzer, count: int) -> dict[str, int]:
    """Send ``count`` (mostly mutated) requests in lock step; returns reply kinds seen."""
    seen: dict[str, int] = {}
    history: list[bytes] = []
    for i in range(count):
        if i % 500 == 499:
            client.assert_echo_works()
        pkt = fuzzer.request()
        mutated = fuzzer.mutate(pkt)
        history.append(mutated)
        client.send(mutated)
        reply = check_reply(mutated, client.read_packet(), history)
        fuzzer.learn(mutated, reply)
        name = type(reply).__name__
        seen[name] = seen.get(name, 0) + 1
        if mutated == pkt:
            check_valid_reply(fuzzer, pkt, reply)
    return seen


def check_valid_reply(fuzzer: Fuzzer, pkt: bytes, reply: Any) -> None:
    """Unmutated echo calls of plain values come back unchanged."""
    msg = decode_message(pkt[8:])
    if not (type(msg).__name__ == "CallFunc" and msg.handle == fuzzer.echo and msg.args):
        return
    tags = {int: 1, bool: 2, float: 3, str: 65, bytes: 66, type(None): 0}
    if any(type(a) not in tags for a in msg.args):
        return
    arg = msg.args[0]
    assert isinstance(reply, Return), (msg, reply)
    tag, back = reply.values
    assert tag == tags[type(arg)]
    if type(arg) is float:
        assert struct.pack("<d", back) == struct.pack("<d", arg)
    else:
        assert back == arg and type(back) is type(arg)


def fuzz_session(srv: Any, rng: random.Random, count: int) -> dict[str, int]:
    client = RawClient(srv.port)
    echo = client.global_func(ECHO)
    buffers = [(client.alloc(n), n) for n in (64, 256, 4096)]
    fuzzer = Fuzzer(rng, echo, buffers)
    seen = run_stream(client, fuzzer, count)
    client.assert_echo_works()
    client.send(encode_shutdown())
    assert client.drain_to_eof() == []
    client.close()
    return seen


# ------------------------------------------------------------------------------ tests


def test_server_answers_every_packet_of_a_seeded_mutation_stream(fuzz_server: Any) -> None:
    seen = fuzz_session(fuzz_server, random.Random(20240527), 5000)
    # the stream reached the server's working paths, not only its error paths
    assert seen.get("ExceptionMsg", 0) > 1000
    assert seen.get("Return", 0) > 500
    assert seen.get("CopyAck", 0) > 20
    assert_serves_a_new_client(fuzz_server)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.randoms(use_true_random=False))
def test_server_answers_hypothesis_mutation_batches(fuzz_server: Any, rng: random.Random) -> None:
    fuzz_session(fuzz_server, rng, 40)


@pytest.mark.parametrize("length", [1, 3, DEFAULT_LIMITS.max_packet + 1, 1 << 63, U64_MAX])
def test_untrustworthy_length_gets_exception_then_close(server: Any, length: int) -> None:
    client = RawClient(server.port)
    client.send(u64(length) + i32(RPCCode.CALL_FUNC) + bytes(64))
    reply = decode_message(client.read_packet() or b"")
    assert isinstance(reply, ExceptionMsg)
    assert f"packet length {length}" in reply.text
    assert client.drain_to_eof() == []
    client.close()
    assert server.wait_idle(IO_TIMEOUT)
    assert_serves_a_new_client(server)


def test_empty_packets_are_padding_without_reply(server: Any) -> None:
    client = RawClient(server.port)
    h = client.global_func(ECHO)
    client.send(u64(0) * 5)
    assert client.request(u64(0) + encode_call(h, [3])) == Return((1, 3))
    client.close()


def test_shutdown_ends_the_session_without_reply(server: Any) -> None:
    client = RawClient(server.port)
    client.send(encode_shutdown() + encode_call(1, []))  # nothing after kShutdown is read
    assert client.drain_to_eof() == []
    client.close()
    assert_serves_a_new_client(server)


def test_client_vanishing_mid_copy_payload_ends_only_its_session(server: Any) -> None:
    client = RawClient(server.port)
    nbytes = 1 << 20
    ptr = client.alloc(nbytes)
    desc = TensorDesc(ptr, CPU, U8, (nbytes,))
    client.send(encode_copy_to_remote(desc, nbytes) + bytes(nbytes // 2))
    client.close()
    assert server.wait_idle(IO_TIMEOUT)
    assert_serves_a_new_client(server)


@pytest.mark.parametrize("cut", [1, 7, 8, 11, 12, 20, 60, 100])
def test_client_vanishing_mid_packet_ends_only_its_session(server: Any, cut: int) -> None:
    client = RawClient(server.port)
    h = client.global_func(ECHO)
    stream = encode_call(h, ["x" * 50, 1, 2.5]) + encode_syscall(RPCCode.FREE_HANDLE, [Handle(h)])
    client.send(stream[:cut])
    client.close()
    assert server.wait_idle(IO_TIMEOUT)
    assert_serves_a_new_client(server)


def test_lying_outer_lengths_end_only_their_own_session(server: Any) -> None:
    rng = random.Random(7)
    for _ in range(25):
        client = RawClient(server.port)
        echo = client.global_func(ECHO)
        fuzzer = Fuzzer(rng, echo, [(client.alloc(256), 256)])
        stream = bytearray()
        for _ in range(rng.randrange(1, 6)):
            pkt = fuzzer.mutate(fuzzer.request())
            (length,) = struct.unpack_from("<Q", pkt)
            wrong = rng.choice(
                [length + rng.randrange(1, 64), max(length - rng.randrange(1, 8), 0)]
            )
            stream += u64(wrong) + pkt[8:]
        client.send(bytes(stream))
        client.sock.shutdown(socket.SHUT_WR)
        for body in client.drain_to_eof():  # whatever came back is well formed
            decode_message(body)
        client.close()
        assert server.wait_idle(IO_TIMEOUT)
    assert_serves_a_new_client(server)


def test_bad_handshake_magic_is_dropped_and_the_next_client_served(server: Any) -> None:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=IO_TIMEOUT)
    sock.sendall(struct.pack("<ii", 0x1234, 7) + b"client:")
    try:  # closed without a word (a reset when our key was left unread)
        assert sock.recv(16) == b""
    except ConnectionResetError:
        pass
    sock.close()
    assert_serves_a_new_client(server)


def _serve_in_thread(limits: Limits) -> tuple[Any, threading.Thread, list[BaseException]]:
    near, far = memory_pair()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            Endpoint(far, "server", limits=limits).serve_forever()
        except BaseException as err:
            errors.append(err)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return near, t, errors


def _read_body(channel: Any) -> bytes:
    buf = b""
    while len(buf) < 8:
        buf += channel.recv(8 - len(buf))
    (size,) = struct.unpack("<Q", buf)
    body = b""
    while len(body) < size:
        body += channel.recv(size - len(body))
    return body


def test_endpoint_honours_a_smaller_max_packet() -> None:
    limits = Limits(max_packet=64, max_bytes=8)
    near, t, errors = _serve_in_thread(limits)
    near.send(encode_init_server())
    assert decode_message(_read_body(near)) == Return((None,))
    near.send(encode_syscall(RPCCode.GET_GLOBAL_FUNC, ["x" * 9]))  # over max_bytes: answered
    reply = decode_message(_read_body(near))
    assert isinstance(reply, ExceptionMsg) and "exceeds the limit 8" in reply.text
    near.send(u64(65) + i32(RPCCode.CALL_FUNC) + bytes(61))  # over max_packet: the end
    reply = decode_message(_read_body(near))
    assert isinstance(reply, ExceptionMsg) and "packet length 65 outside 4..64" in reply.text
    t.join(IO_TIMEOUT)
    assert not t.is_alive() and errors == []
    near.close()


def test_overflowing_allocation_cannot_reach_memory_beyond_it(fuzz_server: Any) -> None:
    """A template whose size overflows 64 bits must not register a region bigger than the
    block behind it: a copy far past the block is refused, not performed.
    """
    client = RawClient(fuzz_server.port)
    template = TensorDesc(0, CPU, U8, (1 << 32, 1 << 32))  # 2**64 bytes
    reply = client.request(encode_syscall(RPCCode.DEV_ALLOC_DATA_WITH_SCOPE, [template, None]))
    if isinstance(reply, Return):
        ptr = reply.values[0].value
        far = TensorDesc(ptr, CPU, U8, (1 << 32, 1 << 32), 1 << 40)
        reply = client.request(encode_copy_from_remote(far, 8))
        assert isinstance(reply, ExceptionMsg), reply
    client.close()
    assert_serves_a_new_client(fuzz_server)


def test_returning_a_view_keeps_the_whole_allocation_usable(server: Any) -> None:
    """A function that returns a smaller view of an allocation must not shrink what later
    copies may touch of that allocation (found by the mutation stream).
    """
    client = RawClient(server.port)
    ptr = client.alloc(256)
    echo = client.global_func(ECHO)
    view = TensorDesc(ptr, CPU, U8, (4,))
    reply = client.request(encode_call(echo, [view]))
    assert isinstance(reply, Return) and reply.values[0] == 70  # a Tensor came back
    whole = TensorDesc(ptr, CPU, U8, (256,))
    reply = client.request(encode_copy_to_remote(whole, 256) + bytes(range(256)))
    assert reply == Return((None,)), reply
    reply = client.request(encode_copy_from_remote(whole, 256))
    assert reply == CopyAck(bytes(range(256)))
    client.close()


def test_the_server_decodes_requests_with_the_tested_decoder() -> None:
    """One decoder: for a malformed request the server answers with the very ProtocolError that
    ``decode_message`` raises for its body, and it keeps serving afterwards.
    """
    near, t, errors = _serve_in_thread(DEFAULT_LIMITS)
    near.send(encode_init_server())
    assert decode_message(_read_body(near)) == Return((None,))
    bad = [
        encode_call(1, [1, 2])[8:] + b"\0",  # trailing byte
        encode_syscall(RPCCode.GET_GLOBAL_FUNC, ["x"])[8:] + b"\0",
        i32(RPCCode.CALL_FUNC) + u64(1) + i32(1) + i32(13) + i32(0) * 2,  # unknown type index
        encode_copy_from_remote(TensorDesc(0x1000, CPU, U8, (2,)), 9)[8:],  # nbytes too big
        encode_init_server()[8:] + b"\0",
    ]
    for body in bad:
        with pytest.raises(ProtocolError) as info:
            decode_message(body)
        near.send(u64(len(body)) + body)
        reply = decode_message(_read_body(near))
        assert isinstance(reply, ExceptionMsg) and str(info.value) in reply.text, (info, reply)
    near.send(encode_syscall(RPCCode.GET_GLOBAL_FUNC, ["testing.echo"]))
    assert isinstance(decode_message(_read_body(near)), Return)
    near.send(u64(4) + i32(RPCCode.SHUTDOWN))
    t.join(IO_TIMEOUT)
    assert not t.is_alive() and errors == []
    near.close()


def test_the_server_decodes_streamed_copy_heads_with_the_tested_decoder() -> None:
    """A kCopyToRemote streams its data into memory, but its head goes through the same
    decoder: a malformed one is answered with the ProtocolError ``decode_message`` raises for
    that body, and a well-formed copy afterwards still lands.
    """
    near, t, errors = _serve_in_thread(DEFAULT_LIMITS)
    near.send(encode_init_server())
    assert decode_message(_read_body(near)) == Return((None,))
    near.send(encode_syscall(RPCCode.DEV_ALLOC_DATA, [CPU, 4, 64, U8]))
    reply = decode_message(_read_body(near))
    assert isinstance(reply, Return), reply
    desc = TensorDesc(int(reply.values[0].value), CPU, U8, (4,))
    head = encode_copy_to_remote(desc, 4)[8:]
    ndim_at = 4 + 16  # code, then the descriptor's u64 data, i32 device type and id
    bad = [
        head + b"abcd" + b"\0",  # a trailing byte
        head + b"ab",  # data cut short
        head[:14],  # descriptor cut short
        head[:ndim_at] + i32(65) + head[ndim_at + 4 :] + b"abcd",  # ndim over the limit
        head[:ndim_at] + i32(3) + head[ndim_at + 4 : ndim_at + 12],  # shape cut short
        head[:ndim_at] + i32(-1) + head[ndim_at + 4 :] + b"abcd",  # negative ndim
        encode_copy_to_remote(desc, 5)[8:] + b"abcde",  # more bytes than the tensor holds
    ]
    for body in bad:
        with pytest.raises(ProtocolError) as info:
            decode_message(body)
        near.send(u64(len(body)) + body)
        reply = decode_message(_read_body(near))
        assert isinstance(reply, ExceptionMsg) and str(info.value) in reply.text, (info, reply)
    near.send(u64(len(head) + 4) + head + b"wxyz")
    assert decode_message(_read_body(near)) == Return((None,))
    near.send(encode_copy_from_remote(desc, 4))
    assert decode_message(_read_body(near)) == CopyAck(b"wxyz")
    near.send(u64(4) + i32(RPCCode.SHUTDOWN))
    t.join(IO_TIMEOUT)
    assert not t.is_alive() and errors == []
    near.close()
