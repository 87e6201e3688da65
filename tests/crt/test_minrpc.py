"""The MinRPC server in C (``pytvm/src/crt/minrpc``) inside ``pytvm-device``: wire format,
chunked copies, errors that keep the server serving, the hexagon emulator, and nested sessions
hosted by a pytvm server and by a real TVM server.
"""

from __future__ import annotations

import ctypes
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.crt import device_binary
from pytvm.ffi.device import Device
from pytvm.ffi.dtype import DataType
from pytvm.rpc.sessions.forwarding_session import ForwardingSession, popen_session
from pytvm.rpc.wire.channel import popen_pipe
from pytvm.rpc.wire.protocol import (
    BytesObject,
    Handle,
    ObjectRef,
    Reader,
    RPCCode,
    StrObject,
    TensorDesc,
    decode_pseq,
    encode_call,
    encode_copy_from_remote,
    encode_copy_to_remote,
    encode_init_server,
    encode_shutdown,
    encode_syscall,
    packet,
)

pytestmark = pytest.mark.needs_cc

MAX_PACKET = 256 * 1024  # MINRPC_MAX_PACKET of the default build


@pytest.fixture(scope="module")
def binary() -> Path:
    return device_binary()


@pytest.fixture
def sess(binary: Path) -> Iterator[rpc.RPCSession]:
    session = rpc.PopenSession(str(binary))
    yield session
    session.close()


@pytest.fixture
def hexagon(binary: Path) -> Iterator[rpc.RPCSession]:
    session = rpc.PopenSession(str(device_binary(hexagon=True)))
    yield session
    session.close()


# ------------------------------------------------------------------------- through the client


def test_echo_returns_every_argument_type(sess: rpc.RPCSession) -> None:
    echo = sess.get_function("pytvm.device.echo")
    for value in (7, -(1 << 62), 2.5, True, False, None, "hello", "", "grüße", b"xyz", b""):
        result = echo(value)
        assert result == value and type(result) is type(value)
    assert echo(bytearray(b"\x00\xff")) == b"\x00\xff"
    assert echo(b"\x01" * 100_000) == b"\x01" * 100_000
    assert echo(DataType(2, 32, 4)) == DataType(2, 32, 4)
    assert echo(sess.cpu()) == Device(1, 0)  # returned devices are not re-masked
    assert echo(ctypes.c_void_p(0x1234)).value == 0x1234
    assert echo(echo)(5) == 5  # a function handle comes back as a callable
    with pytest.raises(rpc.RPCError, match="kInvalidTypeCodeTensor"):
        echo(pytvm.nd.array(np.zeros(2, "float32"), sess.cpu()))
    assert "MinRPC" in sess.get_function("pytvm.device.info")()


def test_cpu_round_trips_are_bit_exact_and_chunked(sess: rpc.RPCSession) -> None:
    assert isinstance(sess.session, ForwardingSession)
    endpoint = sess.session.endpoint
    copy_packets = []
    send = endpoint._send

    def spy(*parts: bytes | memoryview) -> None:
        head = bytes(parts[0][:12]) if parts else b""
        if len(head) == 12 and struct.unpack_from("<i", head, 8)[0] == RPCCode.COPY_TO_REMOTE:
            copy_packets.append(struct.unpack_from("<Q", head)[0])
        send(*parts)

    endpoint._send = spy  # type: ignore[method-assign]
    small = np.arange(256, dtype="float32")  # 1 KiB
    assert np.array_equal(pytvm.nd.array(small, sess.cpu()).numpy(), small)
    assert endpoint._max_transfer == MAX_PACKET  # the client asked GetCRTMaxPacketSize
    copy_packets.clear()
    big = np.random.default_rng(0).integers(0, 1 << 32, (16 << 20) // 4, dtype=np.uint32)
    remote = pytvm.nd.array(big, sess.cpu())
    assert len(copy_packets) == -(-big.nbytes // (MAX_PACKET - 52))
    assert max(copy_packets) <= MAX_PACKET
    assert remote.numpy().tobytes() == big.tobytes()


def test_copyto_between_remote_arrays(sess: rpc.RPCSession) -> None:
    x = np.arange(1000, dtype="int64")
    a = pytvm.nd.array(x, sess.cpu())
    b = pytvm.nd.empty((1000,), "int64", sess.cpu())
    a.copyto(b)  # kCopyAmongRemote
    assert np.array_equal(b.numpy(), x)


def test_missing_function_raises_attribute_error(sess: rpc.RPCSession) -> None:
    with pytest.raises(AttributeError, match="no_such_function"):
        sess.get_function("no_such_function")


def test_function_error_keeps_its_kind(sess: rpc.RPCSession) -> None:
    scale = sess.get_function("pytvm.device.scale_f32")
    with pytest.raises(TypeError, match="float32"):
        scale(pytvm.nd.array(np.zeros(2, "int32"), sess.cpu()), 2.0)
    assert sess.get_function("pytvm.device.echo")(3) == 3


def test_shutdown_exits_cleanly(binary: Path) -> None:
    session = popen_session(binary)
    session.close()
    assert session.process is not None and session.process.returncode == 0


# ------------------------------------------------------------------------- raw packets


class RawDevice:
    """The binary behind two raw pipes: send bytes, read reply packets."""

    def __init__(self, binary: Path, *flags: str) -> None:
        self.channel, self.proc = popen_pipe([str(binary), *flags])

    def send(self, data: bytes) -> None:
        self.channel.send(data)

    def _exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.channel.recv(n - len(out))
            assert chunk, "the device closed the pipe"
            out += chunk
        return out

    def reply(self) -> tuple[int, bytes]:
        (size,) = struct.unpack("<Q", self._exact(8))
        body = self._exact(size)
        return struct.unpack_from("<i", body)[0], body[4:]

    def values(self) -> list[object]:
        code, body = self.reply()
        values = decode_pseq(Reader(body))
        if code == RPCCode.EXCEPTION:
            raise AssertionError(f"unexpected kException: {values[0]}")
        return values

    def exception(self) -> str:
        code, body = self.reply()
        assert code == RPCCode.EXCEPTION, f"expected kException, got code {code}"
        return str(decode_pseq(Reader(body))[0])

    def lookup(self, name: str) -> int:
        self.send(encode_syscall(RPCCode.GET_GLOBAL_FUNC, [name]))
        (handle,) = self.values()
        assert isinstance(handle, Handle) and handle.value
        return handle.value

    def call(self, name: str, *args: object) -> list[object]:
        self.send(encode_call(self.lookup(name), list(args)))
        return self.values()

    def finish(self) -> int:
        self.channel.close()
        return self.proc.wait(timeout=10)


@pytest.fixture
def raw(binary: Path) -> Iterator[RawDevice]:
    device = RawDevice(binary)
    device.send(encode_init_server())
    assert device.values() == [None]
    yield device
    device.finish()


def test_unknown_code_is_answered_and_the_server_keeps_serving(raw: RawDevice) -> None:
    raw.send(packet(42, b"junk"))
    assert raw.exception() == "RPCServerError: kUnknownRPCCode: code 42"
    raw.send(packet(RPCCode.RETURN, b"\0\0\0\0"))
    assert "kUnknownRPCCode" in raw.exception()
    assert raw.call("pytvm.device.echo", 9) == [1, 9]


def test_malformed_packets_are_drained_and_answered(raw: RawDevice) -> None:
    cases = [
        (struct.pack("<Q", 2) + b"\0\0", "kCheckError"),  # no room for the code
        (packet(RPCCode.CALL_FUNC, struct.pack("<Qi", 1, 5)), "kCheckError"),  # 5 args, no bytes
        (packet(RPCCode.GET_GLOBAL_FUNC, struct.pack("<ii", 1, 42)), "kUnknownTypeIndex"),
        (packet(RPCCode.GET_GLOBAL_FUNC, struct.pack("<iiQ", 1, 8, 1 << 40)), "kCheckError"),
        (encode_syscall(RPCCode.DEV_ALLOC_DATA, [1, 2]), "kCheckError"),  # wrong arg types
        (encode_syscall(RPCCode.GET_GLOBAL_FUNC, [ObjectRef(0x1234)]), "kInvalidTypeCodeObject"),
        (encode_init_server(), "already been initialized"),
        (encode_call(0xDEAD, []), "not a live function handle"),
        (encode_syscall(RPCCode.FREE_HANDLE, [Handle(0xBEEF)]), "not a live handle"),
    ]
    for data, expected in cases:
        raw.send(data)
        text = raw.exception()
        assert text.startswith("RPCServerError: ") and expected in text, text
    assert raw.call("pytvm.device.echo", "still here") == [65, "still here"]


def test_object_encoded_strings_and_bytes_are_accepted(raw: RawDevice) -> None:
    small = StrObject("abc")
    small.type_index = 11
    assert raw.call("pytvm.device.echo", small) == [65, "abc"]
    assert raw.call("pytvm.device.echo", StrObject("a longer string")) == [65, "a longer string"]
    tiny = BytesObject(b"xyz")
    tiny.type_index = 12
    assert raw.call("pytvm.device.echo", tiny) == [66, b"xyz"]
    assert raw.call("pytvm.device.echo", BytesObject(b"b" * 20)) == [66, b"b" * 20]


def test_bad_pointers_are_errors_not_crashes(raw: RawDevice) -> None:
    cpu = Device(1, 0)
    bogus = TensorDesc(0x1000, cpu, DataType(1, 8, 1), (64,))
    raw.send(encode_copy_from_remote(bogus, 64))
    assert "not inside memory allocated by this server" in raw.exception()
    raw.send(encode_copy_to_remote(bogus, 64) + b"\xaa" * 64)  # the payload is drained
    assert "kCheckError" in raw.exception()
    raw.send(encode_syscall(RPCCode.DEV_FREE_DATA, [cpu, Handle(0x1000)]))
    assert "was not allocated by this server" in raw.exception()
    raw.send(encode_syscall(RPCCode.DEV_ALLOC_DATA, [cpu, 64, 64, DataType(1, 8, 1)]))
    (ptr,) = raw.values()
    assert isinstance(ptr, Handle)
    inside = TensorDesc(ptr.value, cpu, DataType(1, 8, 1), (64,))
    raw.send(encode_copy_from_remote(TensorDesc(ptr.value, cpu, DataType(1, 8, 1), (64,), 8), 64))
    assert "not inside memory" in raw.exception()  # runs past the allocation's end
    raw.send(encode_copy_to_remote(inside, 64) + bytes(range(64)))
    assert raw.values() == [None]
    raw.send(encode_copy_from_remote(inside, 64))
    code, body = raw.reply()
    assert code == RPCCode.COPY_ACK and body == bytes(range(64))
    floats = TensorDesc(0x2000, cpu, DataType(2, 32, 1), (4,))
    raw.send(encode_call(raw.lookup("pytvm.device.scale_f32"), [floats, 2.0]))
    assert "kCallFunc argument 0" in raw.exception()


def test_init_server_takes_no_constructor(binary: Path) -> None:
    device = RawDevice(binary)
    device.send(encode_syscall(RPCCode.GET_GLOBAL_FUNC, ["pytvm.device.echo"]))
    assert "send kInitServer first" in device.exception()
    device.send(encode_init_server(["rpc.LocalSession"]))
    assert "kRPCCodeNotSupported" in device.exception()
    device.send(encode_init_server([], version="0.7.0"))
    assert "version mismatch" in device.exception()
    device.send(encode_init_server())
    assert device.values() == [None]
    assert device.finish() == 0


def test_exit_status_per_spec_section_6(binary: Path) -> None:
    huge = RawDevice(binary)
    huge.send(encode_init_server())
    assert huge.values() == [None]
    huge.send(struct.pack("<Qi", 1 << 40, RPCCode.CALL_FUNC))
    assert "kAllocError" in huge.exception()
    assert huge.proc.wait(timeout=10) == 12
    huge.finish()

    cut = RawDevice(binary)
    cut.send(encode_init_server()[:10])  # the pipe closes mid-packet
    assert cut.finish() == 10

    clean = RawDevice(binary)
    clean.send(encode_init_server() + encode_shutdown())
    assert clean.values() == [None]
    assert clean.proc.wait(timeout=10) == 0
    clean.finish()

    assert subprocess.run([str(binary), "3"], capture_output=True, check=False).returncode == 255
    assert (
        subprocess.run(
            [str(binary), "3", "4", "--bogus"], capture_output=True, check=False
        ).returncode
        == 255
    )


def test_device_syscalls(raw: RawDevice) -> None:
    cpu, hexagon = Device(1, 0), Device(16, 0)
    raw.send(encode_syscall(RPCCode.DEV_GET_ATTR, [cpu, 0]))
    assert raw.values() == [1]
    raw.send(encode_syscall(RPCCode.DEV_GET_ATTR, [hexagon, 0]))
    assert raw.values() == [0]  # kExist: no emulator without --hexagon
    raw.send(encode_syscall(RPCCode.DEV_SET_DEVICE, [hexagon]))
    assert "no device API" in raw.exception()
    for code in (RPCCode.DEV_CREATE_STREAM, RPCCode.DEV_GET_CURRENT_STREAM):
        raw.send(encode_syscall(code, [cpu]))
        assert raw.values() == [Handle(0)]
    for code in (RPCCode.DEV_STREAM_SYNC, RPCCode.DEV_SET_STREAM, RPCCode.DEV_FREE_STREAM):
        raw.send(encode_syscall(code, [cpu, Handle(0)]))
        assert raw.values() == [None]
    raw.send(encode_syscall(RPCCode.DEV_STREAM_SYNC, [cpu, Handle(0x99)]))
    assert "only the null stream" in raw.exception()
    template = TensorDesc(0, cpu, DataType(0, 32, 1), (3, 5))
    raw.send(encode_syscall(RPCCode.DEV_ALLOC_DATA_WITH_SCOPE, [template, "texture"]))
    assert "memory scope" in raw.exception()
    raw.send(encode_syscall(RPCCode.DEV_ALLOC_DATA_WITH_SCOPE, [template, None]))
    (ptr,) = raw.values()
    raw.send(encode_syscall(RPCCode.DEV_FREE_DATA, [cpu, ptr]))
    assert raw.values() == [None]
    raw.send(encode_syscall(RPCCode.DEV_FREE_DATA, [cpu, ptr]))
    assert "already freed" in raw.exception()


# ------------------------------------------------------------------------- hexagon emulator


def test_hexagon_array_lives_in_the_emulator_pool(hexagon: rpc.RPCSession) -> None:
    A = pytvm.nd.empty((2,), "int32", hexagon.hexagon(0))
    A.copyfrom(np.array([2, 3], "int32"))
    assert A.numpy().tolist() == [2, 3]
    text = hexagon.get_function("pytvm.hexagon.pool_range")()
    base, size = (int(v) for v in text.split(","))
    assert size == 128 << 20 and base <= A.data_ptr < base + size
    peek = hexagon.get_function("pytvm.hexagon.peek")
    assert peek(A.data_ptr, 0, 8) == np.array([2, 3], "int32").tobytes()
    host = pytvm.nd.array(np.zeros(4, "int32"), hexagon.cpu())
    assert not base <= host.data_ptr < base + size  # CPU memory is the other pool
    with pytest.raises(ValueError, match="outside the emulator pool"):
        peek(host.data_ptr, 0, 4)


def test_hexagon_64_mib_copy_is_chunked_and_exact(hexagon: rpc.RPCSession) -> None:
    x = np.random.default_rng(1).random((64 << 20) // 4, dtype=np.float32)
    A = pytvm.nd.array(x, hexagon.hexagon(0))
    assert isinstance(hexagon.session, ForwardingSession)
    assert hexagon.session.endpoint._max_transfer == MAX_PACKET
    assert A.numpy().tobytes() == x.tobytes()


def test_scale_f32_runs_on_a_hexagon_array(hexagon: rpc.RPCSession) -> None:
    A = pytvm.nd.array(np.arange(4, dtype="float32"), hexagon.hexagon(0))
    hexagon.get_function("pytvm.device.scale_f32")(A, 2.5)
    assert A.numpy().tolist() == [0.0, 2.5, 5.0, 7.5]
    peek = hexagon.get_function("pytvm.hexagon.peek")
    assert peek(A.data_ptr, 4, 4) == np.float32(2.5).tobytes()
    B = pytvm.nd.empty((4,), "float32", hexagon.cpu())
    A.copyto(B)  # kCopyAmongRemote from the emulator pool to CPU memory
    assert B.numpy().tolist() == [0.0, 2.5, 5.0, 7.5]


def test_plain_binary_has_no_hexagon_device(sess: rpc.RPCSession) -> None:
    with pytest.raises(rpc.RPCError, match="no device API"):
        pytvm.nd.empty((2,), "int32", sess.hexagon(0))


# ------------------------------------------------------------------------- hosted sessions


def test_pytvm_server_hosts_the_device(binary: Path) -> None:
    from pytvm.rpc.services.server import Server

    with Server(port=0, silent=True, popen_executables=[str(binary)]) as server:
        args = ["rpc.PopenSession", str(binary)]
        sess = rpc.connect("127.0.0.1", server.port, session_constructor_args=args)
        assert sess.get_function("pytvm.device.echo")("hop") == "hop"
        x = np.random.default_rng(2).random(1 << 18, dtype=np.float32)  # 1 MiB, 5 chunks
        assert pytvm.nd.array(x, sess.cpu()).numpy().tobytes() == x.tobytes()
        sess.close()


def test_tvm_server_hosts_the_device(binary: Path) -> None:
    import tvm.rpc

    server = tvm.rpc.Server(host="127.0.0.1", port=9900, port_end=9990)
    try:
        args = ["rpc.PopenSession", str(binary)]
        sess = rpc.connect("127.0.0.1", server.port, session_constructor_args=args)
        assert sess.get_function("pytvm.device.echo")("hop") == "hop"
        # Within one packet: TVM 0.27's forwarding client session overwrites byte_offset with
        # its own block offset, so copies a client already split do not survive a TVM hop.
        x = np.arange(10_000, dtype="float32")
        assert np.array_equal(pytvm.nd.array(x, sess.cpu()).numpy(), x)
        sess.close()
        args = ["rpc.PopenSession", str(device_binary(hexagon=True))]
        sess = rpc.connect("127.0.0.1", server.port, session_constructor_args=args)
        A = pytvm.nd.array(np.array([2, 3], "int32"), sess.hexagon(0))
        assert sess.get_function("pytvm.hexagon.peek")(A.data_ptr, 0, 8) == A.numpy().tobytes()
        sess.close()
    finally:
        server.terminate()


def test_tvm_client_talks_to_the_device(binary: Path) -> None:
    import tvm
    import tvm.rpc

    sess = tvm.rpc.PopenSession(str(binary))
    echo = sess.get_function("pytvm.device.echo")
    assert (echo(7), echo(2.5), echo("text"), bytes(echo(b"raw"))) == (7, 2.5, "text", b"raw")
    x = np.random.default_rng(3).random(1 << 18, dtype=np.float32)
    a = tvm.runtime.tensor(x, sess.cpu())
    assert a.numpy().tobytes() == x.tobytes()
    with pytest.raises(AttributeError):
        sess.get_function("no_such_function")
