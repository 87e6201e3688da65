"""The RPC wire format (``spec/rpc-protocol.md`` sections 2-5): round trips, the sniffed byte
layouts, and a decoder that only ever answers untrusted bytes with ``ProtocolError``.
"""

from __future__ import annotations

import dataclasses
import re
import struct
import time
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytvm.ffi.device import Device
from pytvm.ffi.dtype import DataType
from pytvm.rpc.wire.base import ProtocolError
from pytvm.rpc.wire.messages import (
    CallFunc,
    CopyAck,
    CopyFromRemote,
    CopyToRemote,
    ExceptionMsg,
    InitServer,
    Return,
    Shutdown,
    Syscall,
    decode_message,
    encode_message,
)
from pytvm.rpc.wire.protocol import (
    BytesObject,
    Handle,
    Limits,
    ObjectRef,
    Reader,
    RPCCode,
    StrObject,
    TensorDesc,
    copy_overhead,
    decode_pseq,
    decode_tensor_desc,
    encode_call,
    encode_call_return,
    encode_copy_ack,
    encode_copy_from_remote,
    encode_copy_to_remote,
    encode_exception,
    encode_init_server,
    encode_pseq,
    encode_return,
    encode_shutdown,
    encode_syscall,
    encode_tensor_desc,
    packet,
)

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
U64_MAX = (1 << 64) - 1
MIB = 1 << 20
CPU = Device(1, 0)
F32 = DataType(2, 32, 1)


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def i64(v: int) -> bytes:
    return struct.pack("<q", v)


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def str_object(text: str, type_index: int) -> StrObject:
    s = StrObject(text)
    s.type_index = type_index
    return s


def bytes_object(data: bytes, type_index: int) -> BytesObject:
    b = BytesObject(data)
    b.type_index = type_index
    return b


def canon(v: Any) -> Any:
    """A comparable form that tells apart what ``==`` conflates: bool/int, the type index of
    object-encoded strings, and NaN payloads (floats compare by bit pattern).
    """
    if type(v) is float:
        return ("float", struct.pack("<d", v))
    if isinstance(v, StrObject):
        return ("StrObject", v.type_index, str(v))
    if isinstance(v, BytesObject):
        return ("BytesObject", v.type_index, bytes(v))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(canon(x) for x in v))
    if dataclasses.is_dataclass(v):
        fields = tuple(canon(getattr(v, f.name)) for f in dataclasses.fields(v))
        return (type(v).__name__, fields)
    return (type(v).__name__, v)


# ------------------------------------------------------------------------------ strategies

u64s = st.integers(0, U64_MAX)
int64s = st.one_of(
    st.sampled_from([I64_MIN, I64_MIN + 1, -1, 0, 1, I64_MAX]), st.integers(I64_MIN, I64_MAX)
)
floats = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 2.5]),
    st.floats(allow_nan=True, allow_infinity=True),
    # NaNs with arbitrary payloads and sign
    st.integers(0, (1 << 52) - 1).map(
        lambda m: struct.unpack("<d", u64(0x7FF0000000000001 | m))[0]
    ),
)
# UTF-8 has no encoding of a lone surrogate, so no wire string holds one
unicode_chars = st.characters(exclude_categories=["Cs"])
texts = st.one_of(
    st.just(""),
    st.text(unicode_chars),
    st.text(st.characters(min_codepoint=0x80, exclude_categories=["Cs"]), max_size=8),
)
blobs = st.one_of(st.just(b""), st.binary(max_size=64))
dtypes = st.builds(DataType, st.integers(0, 255), st.integers(0, 255), st.integers(0, 65535))
devices = st.builds(Device, st.integers(0, I32_MAX), st.integers(I32_MIN, I32_MAX))
shapes = st.lists(
    st.one_of(st.integers(0, 16), st.integers(0, I64_MAX)), min_size=0, max_size=8
).map(tuple)
tensor_descs = st.builds(TensorDesc, u64s, devices, dtypes, shapes, u64s)
handles = st.builds(Handle, u64s, st.sampled_from([4, 68, 73]))
object_refs = st.builds(
    ObjectRef,
    u64s,
    st.one_of(st.just(115), st.integers(64, 127).filter(lambda i: i not in (68, 73))),
)
str_objects = st.builds(str_object, texts, st.sampled_from([11, 65]))
bytes_objects = st.builds(bytes_object, blobs, st.sampled_from([12, 66]))

wire_values = st.one_of(
    st.none(),
    st.booleans(),
    int64s,
    floats,
    texts,
    blobs,
    str_objects,
    bytes_objects,
    handles,
    object_refs,
    dtypes,
    devices,
    tensor_descs,
)
value_lists = st.lists(wire_values, max_size=8)


@st.composite
def copy_to_remote_msgs(draw: st.DrawFn) -> CopyToRemote:
    desc = draw(tensor_descs)
    data = draw(st.binary(max_size=min(desc.nbytes, 64)))
    return CopyToRemote(desc, data)


@st.composite
def copy_from_remote_msgs(draw: st.DrawFn) -> CopyFromRemote:
    desc = draw(tensor_descs)
    return CopyFromRemote(desc, draw(st.integers(0, min(desc.nbytes, U64_MAX))))


messages = st.one_of(
    st.builds(InitServer, texts, value_lists.map(tuple)),
    st.builds(CallFunc, u64s, value_lists.map(tuple)),
    st.builds(Return, value_lists.map(tuple)),
    st.builds(ExceptionMsg, texts),
    copy_to_remote_msgs(),
    copy_from_remote_msgs(),
    st.builds(CopyAck, blobs),
    st.builds(Syscall, st.sampled_from([c for c in RPCCode if c >= 9]), value_lists.map(tuple)),
    st.just(Shutdown()),
)


def sample_bodies() -> list[bytes]:
    """Valid packet bodies of every request and reply kind, with every value type inside."""
    desc = TensorDesc(0x1000, CPU, F32, (2, 3), 8)
    values = [
        None,
        True,
        -5,
        2.5,
        "héllo",
        b"\x00\xff",
        str_object("s", 11),
        str_object("a longer string", 65),
        bytes_object(b"xyz", 12),
        bytes_object(b"b" * 20, 66),
        Handle(0xDEAD, 4),
        Handle(7, 68),
        Handle(8, 73),
        ObjectRef(0xBEEF),
        F32,
        Device(2, 1),
        desc,
        TensorDesc(0, CPU, F32, ()),
    ]
    pkts = [
        encode_init_server(),
        encode_init_server(["rpc.Connect", "127.0.0.1", 9090, "", False]),
        encode_call(0x55, values),
        encode_call(0x55, []),
        encode_return(values),
        encode_return([None]),
        encode_call_return(1, [7]),
        encode_exception("boom"),
        encode_copy_to_remote(desc, 4) + b"abcd",
        encode_copy_from_remote(desc, 24),
        encode_syscall(RPCCode.GET_GLOBAL_FUNC, ["testing.echo"]),
        encode_syscall(RPCCode.DEV_ALLOC_DATA, [CPU, 64, 64, F32]),
        encode_syscall(RPCCode.COPY_AMONG_REMOTE, [desc, desc, Handle(0)]),
    ]
    return [p[8:] for p in pkts]


# ------------------------------------------------------------------------------ round trips


@given(value_lists)
def test_every_value_type_round_trips_through_a_packed_sequence(values: list[Any]) -> None:
    wire = encode_pseq(values)
    r = Reader(wire)
    decoded = decode_pseq(r)
    assert r.remaining == 0
    assert canon(decoded) == canon(values)
    assert encode_pseq(decoded) == wire


@given(value_lists)
def test_packed_sequence_decodes_from_bytearray_and_memoryview(values: list[Any]) -> None:
    wire = encode_pseq(values)
    for buf in (bytearray(wire), memoryview(wire)):
        assert canon(decode_pseq(Reader(buf))) == canon(values)


@pytest.mark.parametrize("v", [I64_MIN, I64_MAX, 0, -1])
def test_int64_extremes_round_trip_as_int_not_bool(v: int) -> None:
    wire = encode_pseq([v])
    assert wire == i32(1) + i32(1) + i64(v)
    (back,) = decode_pseq(Reader(wire))
    assert type(back) is int and back == v


def test_ints_beyond_int64_are_refused_by_the_encoder() -> None:
    for v in (I64_MAX + 1, I64_MIN - 1):
        with pytest.raises(ProtocolError, match="int64"):
            encode_pseq([v])


def test_unsupported_python_values_are_refused_by_the_encoder() -> None:
    with pytest.raises(ProtocolError, match="cannot put a list"):
        encode_pseq([[1, 2]])


@given(floats)
def test_float_bit_patterns_survive_including_nan_payloads(v: float) -> None:
    (back,) = decode_pseq(Reader(encode_pseq([v])))
    assert struct.pack("<d", back) == struct.pack("<d", v)


def test_bytearray_and_memoryview_encode_like_bytes() -> None:
    want = encode_pseq([b"abc"])
    assert encode_pseq([bytearray(b"abc")]) == want
    assert encode_pseq([memoryview(b"abc")]) == want


@given(tensor_descs)
def test_tensor_descriptor_is_32_plus_8_ndim_bytes_and_round_trips(desc: TensorDesc) -> None:
    wire = encode_tensor_desc(desc)
    assert len(wire) == 32 + 8 * len(desc.shape)
    r = Reader(wire)
    assert decode_tensor_desc(r) == desc
    assert r.remaining == 0


@given(messages)
def test_every_message_round_trips_and_its_length_prefix_counts_the_body(msg: Any) -> None:
    pkt = encode_message(msg)
    (body_len,) = struct.unpack_from("<Q", pkt)
    body = pkt[8:]
    assert body_len == len(body)
    decoded = decode_message(body)
    assert canon(decoded) == canon(msg)
    assert encode_message(decoded) == pkt


def test_message_codes_are_the_first_i32_of_the_body() -> None:
    cases = {
        RPCCode.SHUTDOWN: encode_shutdown(),
        RPCCode.INIT_SERVER: encode_init_server(),
        RPCCode.CALL_FUNC: encode_call(1, []),
        RPCCode.RETURN: encode_return([None]),
        RPCCode.EXCEPTION: encode_exception("x"),
        RPCCode.COPY_FROM_REMOTE: encode_copy_from_remote(TensorDesc(0, CPU, F32, (1,)), 4),
        RPCCode.COPY_TO_REMOTE: encode_copy_to_remote(TensorDesc(0, CPU, F32, (1,)), 0),
        RPCCode.COPY_ACK: encode_copy_ack(0),
        RPCCode.DEV_GET_CURRENT_STREAM: encode_syscall(RPCCode.DEV_GET_CURRENT_STREAM, [CPU]),
    }
    for code, pkt in cases.items():
        assert struct.unpack_from("<i", pkt, 8)[0] == code


# ------------------------------------------------------------------------------ sniffed bytes


def test_plain_init_server_is_the_sniffed_21_byte_body() -> None:
    body = bytes.fromhex("02000000 0500000000000000") + b"0.8.0" + bytes.fromhex("00000000")
    assert len(body) == 21
    assert encode_init_server() == u64(21) + body
    assert decode_message(body) == InitServer("0.8.0", ())


def test_rpc_connect_constructor_packet_layout() -> None:
    args = [
        str_object("rpc.Connect", 65),
        str_object("127.0.0.1", 65),
        9090,
        str_object("", 11),
        False,
    ]
    body = b"".join(
        [
            i32(2),
            u64(5) + b"0.8.0",
            i32(5),
            i32(65) + u32(65) + u64(11) + b"rpc.Connect",
            i32(65) + u32(65) + u64(9) + b"127.0.0.1",
            i32(1) + i64(9090),
            i32(11) + u32(65) + u64(0),
            i32(2) + i64(0),
        ]
    )
    assert encode_init_server(args) == u64(len(body)) + body
    msg = decode_message(body)
    assert canon(msg) == canon(InitServer("0.8.0", tuple(args)))
    assert [getattr(a, "type_index", None) for a in msg.args[:4:3]] == [65, 11]


def test_init_reply_is_return_none_12_bytes() -> None:
    assert encode_return([None]) == u64(12) + bytes.fromhex("04000000 01000000 00000000")


def test_echo_7_reply_is_type_tag_then_value() -> None:
    body = bytes.fromhex("04000000 02000000 01000000 0100000000000000 01000000 0700000000000000")
    # spec 5.3 calls this body "28 bytes" but its hex (and the 5.8 trace's "len 32") is 32
    assert len(body) == 32
    assert encode_call_return(1, [7]) == u64(32) + body
    assert decode_message(body) == Return((1, 7))


def test_exception_layout_is_one_raw_str() -> None:
    text = "boom"
    body = i32(5) + i32(1) + i32(8) + u64(len(text)) + text.encode()
    assert len(body) == 4 + 4 + 4 + 8 + len(text)
    assert encode_exception(text) == u64(len(body)) + body
    assert decode_message(body) == ExceptionMsg("boom")


@pytest.mark.parametrize("ndim", range(9))
def test_copy_packets_carry_44_plus_8_ndim_bytes_of_overhead(ndim: int) -> None:
    desc = TensorDesc(0x1000, CPU, F32, (1,) * ndim, 16)
    assert copy_overhead(ndim) == 44 + 8 * ndim
    nbytes = 4
    head = encode_copy_to_remote(desc, nbytes)
    (body_len,) = struct.unpack_from("<Q", head)
    assert body_len == 44 + 8 * ndim + nbytes
    assert len(head) - 8 == 44 + 8 * ndim  # the head stops where the raw data starts
    pull = encode_copy_from_remote(desc, nbytes)
    assert struct.unpack_from("<Q", pull)[0] == len(pull) - 8 == 44 + 8 * ndim
    assert encode_copy_ack(nbytes) == u64(4 + nbytes) + i32(8)


def test_float32_datatype_payload_bytes() -> None:
    assert encode_pseq([F32]) == i32(1) + i32(5) + bytes.fromhex("02 20 01 00 00 00 00 00")


def test_float_2_5_payload_bytes() -> None:
    assert encode_pseq([2.5]) == i32(1) + i32(3) + bytes.fromhex("00 00 00 00 00 00 04 40")


def test_device_and_handle_payload_bytes() -> None:
    assert encode_pseq([Device(2, 1)]) == i32(1) + i32(6) + i32(2) + i32(1)
    assert encode_pseq([Handle(0x55, 4)]) == i32(1) + i32(4) + u64(0x55)
    assert encode_pseq([ObjectRef(9)]) == i32(1) + i32(115) + u32(115) + u64(9)
    assert encode_pseq([bytes_object(b"xyz", 12)]) == i32(1) + i32(12) + u32(66) + u64(3) + b"xyz"
    assert encode_pseq(["ab"]) == i32(1) + i32(8) + u64(2) + b"ab"
    assert encode_pseq([b"ab"]) == i32(1) + i32(9) + u64(2) + b"ab"


def test_fresh_session_trace_packet_lengths() -> None:
    def length(pkt: bytes) -> int:
        assert struct.unpack_from("<Q", pkt)[0] == len(pkt) - 8
        return len(pkt) - 8

    h = Handle(0x55AA55AA55AA)
    assert length(encode_init_server()) == 21
    assert length(encode_return([None])) == 12
    assert length(encode_syscall(RPCCode.GET_GLOBAL_FUNC, ["testing.echo"])) == 32
    assert length(encode_return([h])) == 20
    assert length(encode_call(h.value, [7])) == 28
    assert length(encode_call_return(1, [7])) == 32
    assert length(encode_syscall(RPCCode.FREE_HANDLE, [h])) == 20
    assert length(encode_shutdown()) == 4
    assert encode_shutdown() == u64(4) + i32(1)
    assert length(encode_call(h.value, [])) == 16


def test_packet_prefixes_the_body_length() -> None:
    assert packet(3, b"ab", b"cde") == u64(9) + i32(3) + b"abcde"


# ------------------------------------------------------------------------------ decoder safety


@pytest.mark.parametrize("index", range(len(sample_bodies())))
def test_every_truncation_of_a_valid_packet_is_a_protocol_error(index: int) -> None:
    body = sample_bodies()[index]
    decode_message(body)  # the whole body is fine
    for cut in range(len(body)):
        with pytest.raises(ProtocolError):
            decode_message(body[:cut])


@given(messages, st.data())
def test_truncated_messages_are_protocol_errors(msg: Any, data: st.DataObject) -> None:
    body = encode_message(msg)[8:]
    limit = 4 if isinstance(msg, CopyAck) else len(body)  # a kCopyAck is all data
    if limit == 0:
        return
    cut = data.draw(st.integers(0, limit - 1))
    with pytest.raises(ProtocolError):
        decode_message(body[:cut])


@pytest.mark.parametrize("index", range(len(sample_bodies())))
def test_trailing_bytes_are_a_protocol_error(index: int) -> None:
    body = sample_bodies()[index]
    with pytest.raises(ProtocolError, match="trailing"):
        decode_message(body + b"\0")


def decode_bounded(body: bytes, limits: Limits = Limits()) -> tuple[str, int, float]:
    """Decode ``body`` expecting ``ProtocolError``; its message, the peak traced allocation
    and the seconds it took.
    """
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ProtocolError) as info:
            decode_message(body, limits)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return str(info.value), peak, elapsed


HUGE_LIMITS = Limits(max_packet=1 << 62, max_args=1 << 40, max_ndim=1 << 40, max_bytes=1 << 62)


@pytest.mark.parametrize("limits", [Limits(), HUGE_LIMITS], ids=["default", "huge"])
@pytest.mark.parametrize(
    "body",
    [
        i32(9) + i32(1) + i32(8) + u64(1 << 40) + b"abc",  # RawStr length 2^40
        i32(9) + i32(1) + i32(9) + u64(1 << 40) + b"abc",  # ByteArrayPtr length 2^40
        i32(9) + i32(1) + i32(65) + u32(65) + u64(1 << 40) + b"abc",  # Str object
        i32(9) + i32(1) + i32(66) + u32(66) + u64(U64_MAX) + b"abc",  # Bytes object
        i32(2) + u64(1 << 40) + b"0.8.0",  # protocol version length
        i32(3) + u64(1) + i32(1 << 30) + i32(0) * 4,  # argument count 2^30
        i32(4) + i32(I32_MAX),  # return value count
        i32(9) + i32(1) + i32(7) + u64(0) + i32(1) + i32(0) + i32(10**6) + b"\2\x20\1\0",
        i32(6) + u64(0) + i32(1) + i32(0) + i32(10**6) + b"\2\x20\1\0" + u64(0) * 4,
        i32(7) + u64(0) + i32(1) + i32(0) + i32(10**6) + b"\2\x20\1\0" + u64(0) * 4,
    ],
    ids=[
        "raw-str-2^40",
        "bytes-2^40",
        "str-object-2^40",
        "bytes-object-2^64",
        "version-2^40",
        "count-2^30",
        "count-i32-max",
        "ndim-1e6-arg",
        "ndim-1e6-copy-from",
        "ndim-1e6-copy-to",
    ],
)
def test_huge_lengths_and_counts_fail_fast_without_allocating(body: bytes, limits: Limits) -> None:
    _, peak, elapsed = decode_bounded(body, limits)
    assert peak < MIB
    assert elapsed < 1.0


def test_copy_nbytes_is_checked_against_the_tensor_and_the_packet() -> None:
    desc = TensorDesc(0x1000, CPU, F32, (1 << 40,))
    _, peak, _ = decode_bounded(encode_copy_to_remote(desc, 1 << 42)[8:] + b"abc")
    assert peak < MIB
    desc = TensorDesc(0x1000, CPU, F32, (2,))
    with pytest.raises(ProtocolError, match="nbytes 9 exceeds"):
        decode_message(encode_copy_to_remote(desc, 9)[8:] + b"x" * 9)
    with pytest.raises(ProtocolError, match="nbytes 9 exceeds"):
        decode_message(encode_copy_from_remote(desc, 9)[8:])


@pytest.mark.parametrize("tag", [10, 13, 14, 50, 63, -1, I32_MIN])
@pytest.mark.parametrize("position", [0, 2])
def test_unknown_type_index_names_the_argument(tag: int, position: int) -> None:
    body = encode_call(1, [1, 2, 3])[8:]
    start = 4 + 8 + 4 + 12 * position
    body = body[:start] + i32(tag) + body[start + 4 :]
    with pytest.raises(ProtocolError, match=rf"args\[{position}\].*unknown type index {tag}"):
        decode_message(body)


@pytest.mark.parametrize("inner", [0, 1, 8, 64, 67, 68, 114, 116, 1 << 31])
@pytest.mark.parametrize("outer", [11, 12, 65, 66, 115, 200])
def test_unknown_inner_object_index_names_the_argument(outer: int, inner: int) -> None:
    body = i32(3) + u64(1) + i32(1) + i32(outer) + u32(inner) + u64(0)
    with pytest.raises(ProtocolError, match=rf"args\[0\].*inner type index {inner}"):
        decode_message(body)


def test_errors_in_syscall_and_return_sequences_name_them() -> None:
    with pytest.raises(ProtocolError, match=r"GET_GLOBAL_FUNC args\[1\]"):
        decode_message(i32(9) + i32(2) + i32(0) + i32(13))
    with pytest.raises(ProtocolError, match=r"return values\[0\]"):
        decode_message(i32(4) + i32(1) + i32(10))
    with pytest.raises(ProtocolError, match=r"constructor args\[0\]"):
        decode_message(encode_init_server()[8:-4] + i32(1) + i32(-1))


@pytest.mark.parametrize("shape", [(-1,), (2, -3), (I64_MIN,)])
def test_negative_shape_is_a_protocol_error(shape: tuple[int, ...]) -> None:
    desc = TensorDesc(0x1000, CPU, F32, shape)
    for body in (
        encode_call(1, [desc])[8:],
        encode_copy_from_remote(desc, 0)[8:],
        encode_copy_to_remote(desc, 0)[8:],
    ):
        with pytest.raises(ProtocolError, match="negative"):
            decode_message(body)


@pytest.mark.parametrize("device", [(-1, 0), (I32_MIN, 0)])
def test_negative_device_type_is_a_protocol_error(device: tuple[int, int]) -> None:
    body = i32(9) + i32(1) + i32(6) + i32(device[0]) + i32(device[1])
    with pytest.raises(ProtocolError, match=r"args\[0\]"):
        decode_message(body)


@pytest.mark.parametrize(
    "body",
    [
        i32(9) + i32(1) + i32(8) + u64(2) + b"\xff\xfe",  # RawStr
        i32(9) + i32(1) + i32(65) + u32(65) + u64(1) + b"\x80",  # Str object
        i32(9) + i32(1) + i32(11) + u32(65) + u64(3) + b"\xed\xa0\x80",  # encoded surrogate
        i32(2) + u64(5) + b"0.8.\xff" + i32(0),  # protocol version
        i32(5) + i32(1) + i32(8) + u64(1) + b"\xc3",  # exception text
    ],
)
def test_bad_utf8_is_a_protocol_error(body: bytes) -> None:
    with pytest.raises(ProtocolError, match="UTF-8"):
        decode_message(body)


@pytest.mark.parametrize("code", [0, 22, 100, -1, I32_MAX])
def test_internal_and_unknown_codes_are_protocol_errors(code: int) -> None:
    with pytest.raises(ProtocolError):
        decode_message(i32(code) + i32(0))


def test_exception_must_carry_one_string() -> None:
    with pytest.raises(ProtocolError, match="one string"):
        decode_message(encode_return([1])[8:].replace(i32(4), i32(5), 1))
    with pytest.raises(ProtocolError, match="one string"):
        decode_message(i32(5) + i32(0))


def test_max_args_limit_is_honoured() -> None:
    body = encode_call(1, [1, 2, 3])[8:]
    assert decode_message(body, Limits(max_args=3)) == CallFunc(1, (1, 2, 3))
    with pytest.raises(ProtocolError, match="args count 3"):
        decode_message(body, Limits(max_args=2))


def test_max_ndim_limit_is_honoured() -> None:
    desc = TensorDesc(0x1000, CPU, F32, (1, 2, 3))
    for body in (
        encode_call(1, [desc])[8:],
        encode_copy_from_remote(desc, 4)[8:],
        encode_copy_to_remote(desc, 4)[8:] + b"abcd",
    ):
        decode_message(body, Limits(max_ndim=3))
        with pytest.raises(ProtocolError, match=re.escape("ndim 3 outside 0..2")):
            decode_message(body, Limits(max_ndim=2))


def test_default_max_ndim_is_64() -> None:
    ok = TensorDesc(0, CPU, F32, (1,) * 64)
    decode_message(encode_call(1, [ok])[8:])
    with pytest.raises(ProtocolError, match="ndim 65"):
        decode_message(encode_call(1, [TensorDesc(0, CPU, F32, (1,) * 65)])[8:])


@pytest.mark.parametrize(
    "value",
    ["0123456789", b"0123456789", str_object("0123456789", 65), bytes_object(b"x" * 10, 66)],
)
def test_max_bytes_limit_is_honoured(value: Any) -> None:
    body = encode_syscall(RPCCode.GET_GLOBAL_FUNC, [value])[8:]
    (back,) = decode_message(body, Limits(max_bytes=10)).args
    assert canon(back) == canon(value)
    with pytest.raises(ProtocolError, match="length 10 exceeds the limit 9"):
        decode_message(body, Limits(max_bytes=9))


def test_max_bytes_limit_applies_to_the_protocol_version() -> None:
    with pytest.raises(ProtocolError, match="protocol version length 5 exceeds"):
        decode_message(encode_init_server()[8:], Limits(max_bytes=4))


@settings(max_examples=500)
@given(st.binary(max_size=200))
def test_random_bytes_only_ever_raise_protocol_error(body: bytes) -> None:
    try:
        decode_message(body)
    except ProtocolError:
        pass


@settings(max_examples=500)
@given(st.sampled_from(range(-1, 23)), st.binary(max_size=200))
def test_random_payloads_after_a_valid_code_only_raise_protocol_error(
    code: int, payload: bytes
) -> None:
    try:
        decode_message(i32(code) + payload)
    except ProtocolError:
        pass


def mutate(body: bytes, data: st.DataObject) -> bytes:
    """A bit flip, byte insert/delete or an overwritten 4/8-byte window of ``body``."""
    kind = data.draw(st.sampled_from(["flip", "insert", "delete", "window"]))
    at = data.draw(st.integers(0, len(body)))
    if kind == "flip" and at < len(body):
        bit = data.draw(st.integers(0, 7))
        return body[:at] + bytes([body[at] ^ (1 << bit)]) + body[at + 1 :]
    if kind == "insert":
        return body[:at] + bytes([data.draw(st.integers(0, 255))]) + body[at:]
    if kind == "delete":
        return body[:at] + body[at + 1 :]
    width = data.draw(st.sampled_from([4, 8]))
    value = data.draw(
        st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, 1 << 31, (1 << 32) - 1, 1 << 40, U64_MAX])
    )
    raw = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    return body[:at] + raw + body[at + width :]


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sample_bodies()) | messages.map(lambda m: encode_message(m)[8:]), st.data())
def test_mutated_valid_packets_only_raise_protocol_error(body: bytes, data: st.DataObject) -> None:
    for _ in range(data.draw(st.integers(1, 3))):
        body = mutate(body, data)
    try:
        decode_message(body)
    except ProtocolError:
        pass
    # The Limits a server would use must not change which exception is raised.
    try:
        decode_message(body, Limits(max_args=2, max_ndim=1, max_bytes=3))
    except ProtocolError:
        pass
