"""The values a packed sequence carries: their Python types, encoding, and bounds-checked decoding.

A packed sequence (PSEQ, ``spec/rpc-protocol.md`` sections 3 and 5) is ``i32 num_args`` then,
per value, ``i32 type_index`` + payload (tvm-ffi type indices,
:class:`~pytvm.ffi.type_index.TypeIndex`); strings and bytes that are objects travel
"object-encoded": outer index, ``u32`` inner index (65 Str, 66 Bytes, 115 RPCObjectRef), then the
data. :mod:`pytvm.rpc.wire.protocol` frames these into packets and re-exports every public name.

Decoding is safe on untrusted bytes: every length and count is checked against the bytes that
are left and against :class:`Limits` *before* anything is allocated, and a bad field raises
:class:`~pytvm.rpc.wire.base.ProtocolError` naming it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from ...ffi.device import Device
from ...ffi.dtype import DataType
from ...ffi.errors import TVMError
from ...ffi.type_index import TypeIndex
from . import _c_codec
from .base import ProtocolError

__all__ = [
    "DEFAULT_LIMITS",
    "BytesObject",
    "Handle",
    "Limits",
    "ObjectRef",
    "Reader",
    "StrObject",
    "TensorDesc",
    "decode_pseq",
    "decode_tensor_desc",
    "decode_value",
    "encode_pseq",
    "encode_tensor_desc",
    "encode_value",
]


@dataclass(frozen=True)
class Limits:
    """Upper bounds a decoder enforces on untrusted input."""

    #: Largest packet body accepted (bytes); a bigger length field is refused unread.
    max_packet: int = 1 << 33
    #: Most values in one packed sequence.
    max_args: int = 1 << 16
    #: Most dimensions of a DLTensor descriptor.
    max_ndim: int = 64
    #: Longest string or bytes value inside a packed sequence.
    max_bytes: int = 1 << 32


DEFAULT_LIMITS: Limits = Limits()


_HANDLE_INDICES = (TypeIndex.OPAQUE_PTR, TypeIndex.FUNCTION, TypeIndex.MODULE)


@dataclass(frozen=True, slots=True)
class Handle:
    """An opaque remote handle: a pointer (4), or a Function (68) / Module (73) handle."""

    value: int
    type_index: int = TypeIndex.OPAQUE_PTR

    def __post_init__(self) -> None:
        if self.type_index not in _HANDLE_INDICES:
            raise ProtocolError(f"Handle type index {self.type_index} is not one of 4, 68, 73")


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """An object-encoded ``runtime.RPCObjectRef``: a handle to an object living on the peer."""

    handle: int
    type_index: int = TypeIndex.RPC_OBJECT_REF

    def __post_init__(self) -> None:
        t = self.type_index
        encodable = (
            t in (TypeIndex.SMALL_STR, TypeIndex.SMALL_BYTES) or t >= TypeIndex.STATIC_OBJECT_BEGIN
        )
        if not encodable or t in _HANDLE_INDICES:
            raise ProtocolError(f"ObjectRef outer type index {t} cannot be object-encoded")


class StrObject(str):
    """A string that travelled object-encoded (outer index 11 SmallStr or 65 Str)."""

    type_index: int = TypeIndex.STR


class BytesObject(bytes):
    """Bytes that travelled object-encoded (outer index 12 SmallBytes or 66 Bytes)."""

    type_index: int = TypeIndex.BYTES


@dataclass(frozen=True, slots=True)
class TensorDesc:
    """A DLTensor descriptor on the wire: remote ``data`` pointer, unmasked device, compact."""

    data: int
    device: Device
    dtype: DataType
    shape: tuple[int, ...]
    byte_offset: int = 0

    @property
    def nbytes(self) -> int:
        """Bytes spanned by the tensor."""
        count = 1
        for d in self.shape:
            count *= d
        return count * ((self.dtype.bits * self.dtype.lanes + 7) // 8)


# ------------------------------------------------------------------------------- encoding

_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_TAG_I64 = struct.Struct("<iq")
_TAG_U64 = struct.Struct("<iQ")
_TAG_F64 = struct.Struct("<id")
_TAG_LEN = struct.Struct("<iQ")
_DTYPE = struct.Struct("<BBH")
_DESC_HEAD = struct.Struct("<Qiii")
_OBJ_HEAD = struct.Struct("<iIQ")
_MAX_I64 = (1 << 63) - 1
# Plain-int copies of the type indices the per-call paths use: reading an enum member
# off its class costs several times a global lookup.
_INT = int(TypeIndex.INT)
_FLOAT = int(TypeIndex.FLOAT)
# The name of ServerStatus.UNKNOWN_TYPE_INDEX (protocol.py, which imports this module).
_UNKNOWN_TYPE_INDEX = "UNKNOWN_TYPE_INDEX"


def _enc_int(v: int) -> bytes:
    if not -(1 << 63) <= v <= _MAX_I64:
        raise ProtocolError(f"int {v} does not fit the wire's int64")
    return _TAG_I64.pack(_INT, v)


def _enc_bytes_like(v: Any) -> bytes:
    data = bytes(v)
    return _TAG_LEN.pack(TypeIndex.BYTE_ARRAY_PTR, len(data)) + data


def _enc_str(v: str) -> bytes:
    data = v.encode()
    return _TAG_LEN.pack(TypeIndex.RAW_STR, len(data)) + data


def _enc_str_object(v: StrObject) -> bytes:
    data = str.encode(v)
    return _OBJ_HEAD.pack(v.type_index, TypeIndex.STR, len(data)) + data


def _enc_bytes_object(v: BytesObject) -> bytes:
    return _OBJ_HEAD.pack(v.type_index, TypeIndex.BYTES, len(v)) + bytes(v)


def _enc_handle(v: Handle) -> bytes:
    return _TAG_U64.pack(v.type_index, v.value)


def _enc_object_ref(v: ObjectRef) -> bytes:
    return _I32.pack(v.type_index) + _U32.pack(TypeIndex.RPC_OBJECT_REF) + _U64.pack(v.handle)


def _enc_dtype(v: DataType) -> bytes:
    return _I32.pack(TypeIndex.DATA_TYPE) + _DTYPE.pack(v.code, v.bits, v.lanes) + b"\0\0\0\0"


def _enc_device(v: Device) -> bytes:
    return struct.pack("<iii", TypeIndex.DEVICE, v.device_type, v.device_id)


def encode_tensor_desc(desc: TensorDesc) -> bytes:
    """The DLTensor descriptor: ``u64 data, i32 type, i32 id, i32 ndim, dtype, i64 shape[ndim],
    u64 byte_offset`` (32 + 8 * ndim bytes).
    """
    dt = desc.dtype
    return b"".join(
        (
            _DESC_HEAD.pack(
                desc.data, desc.device.device_type, desc.device.device_id, len(desc.shape)
            ),
            _DTYPE.pack(dt.code, dt.bits, dt.lanes),
            struct.pack(f"<{len(desc.shape)}q", *desc.shape),
            _U64.pack(desc.byte_offset),
        )
    )


def _enc_tensor(v: TensorDesc) -> bytes:
    return _I32.pack(TypeIndex.DL_TENSOR_PTR) + encode_tensor_desc(v)


_ENCODERS: dict[type, Any] = {
    type(None): lambda v: _I32.pack(TypeIndex.NONE),
    bool: lambda v: _TAG_I64.pack(TypeIndex.BOOL, int(v)),
    int: _enc_int,
    float: lambda v: _TAG_F64.pack(_FLOAT, v),
    str: _enc_str,
    bytes: _enc_bytes_like,
    bytearray: _enc_bytes_like,
    memoryview: _enc_bytes_like,
    StrObject: _enc_str_object,
    BytesObject: _enc_bytes_object,
    Handle: _enc_handle,
    ObjectRef: _enc_object_ref,
    DataType: _enc_dtype,
    Device: _enc_device,
    TensorDesc: _enc_tensor,
}


def encode_value(value: Any) -> bytes:
    """One PSEQ entry (type index + payload) for a wire value."""
    enc = _ENCODERS.get(type(value))
    if enc is None:
        raise ProtocolError(
            f"cannot put a {type(value).__name__} on the RPC wire; expected None, bool, int, "
            "float, str, bytes, DataType, Device, Handle, ObjectRef or TensorDesc"
        )
    try:
        out: bytes = enc(value)
    except (struct.error, UnicodeEncodeError, OverflowError) as err:
        raise ProtocolError(f"cannot encode {value!r}: {err}") from None
    return out


def encode_pseq(values: Any) -> bytes:
    """A packed sequence: ``i32 num_args`` then each value's type index and payload."""
    c = _CODEC.module
    if c is not None:
        out: bytes = c.encode_pseq(values)
        return out
    return _I32.pack(len(values)) + b"".join([encode_value(v) for v in values])


# ------------------------------------------------------------------------------- decoding


class Reader:
    """A bounds-checked cursor over one packet body."""

    __slots__ = ("buf", "limits", "pos")

    def __init__(
        self, buf: bytes | bytearray | memoryview, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        self.buf = memoryview(buf).cast("B") if not isinstance(buf, bytes) else buf
        self.pos = 0
        self.limits = limits

    @property
    def remaining(self) -> int:
        """Bytes not read yet."""
        return len(self.buf) - self.pos

    def take(self, n: int, field: str) -> memoryview | bytes:
        """The next ``n`` bytes; ``ProtocolError`` naming ``field`` if the packet is shorter."""
        if n < 0 or n > len(self.buf) - self.pos:
            raise ProtocolError(
                f"{field}: needs {n} bytes but the packet has {len(self.buf) - self.pos} left"
            )
        start = self.pos
        self.pos = start + n
        return self.buf[start : self.pos]

    def short(self, n: int, field: str) -> ProtocolError:
        """The error for a field of ``n`` bytes that the packet is too short to hold."""
        left = len(self.buf) - self.pos
        return ProtocolError(f"{field}: needs {n} bytes but the packet has {left} left")

    def unpack(self, st: struct.Struct, field: str) -> tuple[Any, ...]:
        """The fields of ``st`` at the cursor, advancing past them."""
        try:
            out = st.unpack_from(self.buf, self.pos)
        except struct.error:
            raise self.short(st.size, field) from None
        self.pos += st.size
        return out

    def i32(self, field: str) -> int:
        """A little-endian ``int32`` named ``field``."""
        try:
            (value,) = _I32.unpack_from(self.buf, self.pos)
        except struct.error:
            raise self.short(4, field) from None
        self.pos += 4
        return int(value)

    def u32(self, field: str) -> int:
        """A little-endian ``uint32`` named ``field``."""
        return int(self.unpack(_U32, field)[0])

    def i64(self, field: str) -> int:
        """A little-endian ``int64`` named ``field``."""
        try:
            (value,) = _I64.unpack_from(self.buf, self.pos)
        except struct.error:
            raise self.short(8, field) from None
        self.pos += 8
        return int(value)

    def u64(self, field: str) -> int:
        """A little-endian ``uint64`` named ``field``."""
        try:
            (value,) = _U64.unpack_from(self.buf, self.pos)
        except struct.error:
            raise self.short(8, field) from None
        self.pos += 8
        return int(value)

    def blob(self, field: str) -> bytes:
        """``u64 len`` + that many bytes, bounded by ``Limits.max_bytes`` and the packet."""
        n = self.u64(f"{field} length")
        if n > self.limits.max_bytes:
            raise ProtocolError(f"{field} length {n} exceeds the limit {self.limits.max_bytes}")
        return bytes(self.take(n, field))

    def text(self, field: str) -> str:
        """A length-prefixed UTF-8 string named ``field``."""
        raw = self.blob(field)
        try:
            return raw.decode()
        except UnicodeDecodeError as err:
            raise ProtocolError(f"{field}: not UTF-8 ({err})") from None

    def expect_end(self, what: str) -> None:
        """``ProtocolError`` if bytes are left after a complete message."""
        if self.remaining:
            raise ProtocolError(f"{what}: {self.remaining} unexpected trailing bytes")


def _device(device_type: int, device_id: int, field: str) -> Device:
    try:
        return Device(device_type, device_id)
    except TVMError as err:
        raise ProtocolError(f"{field}: {err}") from None


def _dtype(code: int, bits: int, lanes: int, field: str) -> DataType:
    try:
        return DataType(code, bits, lanes)
    except TVMError as err:
        raise ProtocolError(f"{field}: {err}") from None


def decode_tensor_desc(r: Reader, field: str = "DLTensor") -> TensorDesc:
    """Read a DLTensor descriptor; ndim is bounded by ``Limits.max_ndim`` and the packet."""
    data, dev_type, dev_id, ndim = r.unpack(_DESC_HEAD, f"{field} header")
    if ndim < 0 or ndim > r.limits.max_ndim:
        raise ProtocolError(f"{field} ndim {ndim} outside 0..{r.limits.max_ndim}")
    code, bits, lanes = r.unpack(_DTYPE, f"{field} dtype")
    shape = struct.unpack_from(f"<{ndim}q", r.take(8 * ndim, f"{field} shape"))
    if any(d < 0 for d in shape):
        raise ProtocolError(f"{field} shape {shape} has a negative dimension")
    byte_offset = r.u64(f"{field} byte_offset")
    return TensorDesc(
        data,
        _device(dev_type, dev_id, f"{field} device"),
        _dtype(code, bits, lanes, f"{field} dtype"),
        tuple(shape),
        byte_offset,
    )


def _decode_object(r: Reader, outer: int, field: str) -> Any:
    inner = r.u32(f"{field} inner type index")
    if inner == TypeIndex.RPC_OBJECT_REF:
        return ObjectRef(r.u64(f"{field} object handle"), outer)
    if inner == TypeIndex.STR:
        s = StrObject(r.text(field))
        s.type_index = outer
        return s
    if inner == TypeIndex.BYTES:
        b = BytesObject(r.blob(field))
        b.type_index = outer
        return b
    raise ProtocolError(
        f"{field}: object of inner type index {inner} is not supported in the RPC calling "
        f"convention (status {_UNKNOWN_TYPE_INDEX})"
    )


def decode_value(r: Reader, field: str) -> Any:  # noqa: PLR0911 - one return per type index
    """One PSEQ entry (type index + payload)."""
    tag = r.i32(f"{field} type index")
    if tag == TypeIndex.INT:
        return r.i64(field)
    if tag == TypeIndex.RAW_STR:
        return r.text(field)
    if tag == TypeIndex.NONE:
        return None
    if tag == TypeIndex.OPAQUE_PTR or tag in (TypeIndex.FUNCTION, TypeIndex.MODULE):
        return Handle(r.u64(field), tag)
    if tag == TypeIndex.DL_TENSOR_PTR:
        return decode_tensor_desc(r, field)
    if tag == TypeIndex.FLOAT:
        return float(r.unpack(_F64, field)[0])
    if tag == TypeIndex.BOOL:
        return bool(r.i64(field))
    if tag == TypeIndex.BYTE_ARRAY_PTR:
        return r.blob(field)
    if tag == TypeIndex.DATA_TYPE:
        code, bits, lanes = r.unpack(_DTYPE, field)
        r.take(4, f"{field} padding")
        return _dtype(code, bits, lanes, field)
    if tag == TypeIndex.DEVICE:
        dev_type, dev_id = r.unpack(struct.Struct("<ii"), field)
        return _device(dev_type, dev_id, field)
    if tag in (TypeIndex.SMALL_STR, TypeIndex.SMALL_BYTES) or tag >= TypeIndex.STATIC_OBJECT_BEGIN:
        return _decode_object(r, tag, field)
    raise ProtocolError(f"{field}: unknown type index {tag} (status {_UNKNOWN_TYPE_INDEX})")


def decode_pseq(r: Reader, what: str = "args") -> list[Any]:
    """A packed sequence; the count is bounded by ``Limits.max_args`` and the bytes left."""
    buf = r.buf
    c = _CODEC.module
    if c is not None:
        limits = r.limits
        values, r.pos = c.decode_pseq(
            buf, r.pos, -1, limits.max_args, limits.max_bytes, what, limits
        )
        return values  # type: ignore[no-any-return]
    try:
        (n,) = _I32.unpack_from(buf, r.pos)
    except struct.error:
        raise r.short(4, f"{what} count") from None
    r.pos += 4
    # Every value takes at least its 4-byte type index, so n is also bounded by the packet.
    if n < 0 or n > r.limits.max_args or 4 * n > len(buf) - r.pos:
        raise ProtocolError(
            f"{what} count {n} impossible (limit {r.limits.max_args}, {r.remaining} bytes left)"
        )
    out: list[Any] = []
    for i in range(n):
        pos = r.pos
        # Fast path for the commonest kinds; anything unusual or short takes the checked path.
        if len(buf) - pos >= _TAG_I64.size:
            tag, payload = _TAG_I64.unpack_from(buf, pos)
            if tag == _INT:
                out.append(payload)
                r.pos = pos + 12
                continue
            if tag == _FLOAT:
                out.append(_F64.unpack_from(buf, pos + 4)[0])
                r.pos = pos + 12
                continue
        out.append(decode_value(r, f"{what}[{i}]"))
    return out


def _decode_at(buf: Any, pos: int, end: int, field: str, limits: Limits) -> tuple[Any, int]:
    """The C codec's hook: the entry at ``pos`` of the body ``buf[:end]`` (or its
    ProtocolError), and the position after it. It reads a copy of the rest of the body, so no
    view of ``buf`` (an endpoint's growing read buffer) outlives the call.
    """
    r = Reader(bytes(buf[pos:end]), limits)
    value = decode_value(r, field)
    return value, pos + r.pos


_CODEC = _c_codec.CODEC
_c_codec.install(encode_value, _decode_at, ProtocolError)
