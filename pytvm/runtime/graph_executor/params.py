"""TVM's parameter-dict byte format (``save_param_dict`` / ``load_param_dict``), read and written.

The layout, little-endian, byte for byte what TVM writes:

- ``u64`` list magic ``0xF7E58D4F05049CB7``, ``u64`` reserved (0);
- ``u64`` number of names, then each name as ``u64`` length + UTF-8 bytes;
- ``u64`` number of arrays (equal to the number of names), then each array:
  ``u64`` magic ``0xDD5E40F096B4A13F``, ``u64`` reserved, device (``i32`` type, ``i32`` id: always
  the CPU), ``i32`` ndim, dtype (``u8`` code, ``u8`` bits, ``u16`` lanes), ``i64`` shape[ndim],
  ``i64`` data byte size, the data.

Reading never trusts a size from the bytes: every length is checked against what is left before
anything is allocated, and a bad file raises ``TVMValueError`` naming the offset and the field.

Examples
--------
>>> import numpy as np
>>> blob = save_param_dict({"w": np.arange(3, dtype="float32")})
>>> load_param_dict(blob)["w"].numpy().tolist()
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import ctypes
import math
import os
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ...ffi.device import cpu
from ...ffi.dtype import DataType
from ...ffi.dtype import dtype as make_dtype
from ...ffi.errors import TVMTypeError, TVMValueError
from ..ndarray import NDArray, empty

__all__ = [
    "ARRAY_MAGIC",
    "LIST_MAGIC",
    "load_param_dict",
    "load_param_dict_from_file",
    "read_param_names",
    "save_param_dict",
    "save_param_dict_to_file",
    "write_param_dict",
]

#: Magic number opening a parameter dict (TVM's ``kTVMNDArrayListMagic``).
LIST_MAGIC = 0xF7E58D4F05049CB7
#: Magic number opening each array (TVM's ``kTVMNDArrayMagic``).
ARRAY_MAGIC = 0xDD5E40F096B4A13F
_CPU = 1
_MAX_NDIM = 64  # more dimensions than any tensor has; a bigger count is a corrupt file


def _host_data(name: str, value: Any) -> tuple[DataType, tuple[int, ...], memoryview]:
    """Element type, shape and raw little-endian bytes of one parameter (a view of the
    array's own memory where its layout allows: nothing is copied for a contiguous numpy
    array or a CPU NDArray).
    """
    if isinstance(value, NDArray):
        if value.device.device_type == _CPU and value.byte_offset == 0:
            host = np.ctypeslib.as_array(
                (ctypes.c_uint8 * value.nbytes).from_address(value.data_ptr)
            )
            # the view keeps the NDArray (its memory's owner) alive
            return value.data_type, value.shape, _owned_view(host, value)
        host = np.empty(value.nbytes, dtype=np.uint8)
        value.copy_to_bytes(host)
        return value.data_type, value.shape, _bytes_view(host)
    if not isinstance(value, np.ndarray):
        to_numpy = getattr(value, "numpy", None)
        value = to_numpy() if callable(to_numpy) else np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TVMTypeError(
            f"save_param_dict: parameter {name!r} is a {type(value).__name__}; expected an "
            "NDArray or a numpy array"
        )
    # The format is little-endian, whatever the array's byte order.
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one.)
    arr = np.asarray(value, dtype=value.dtype.newbyteorder("<"), order="C")
    return make_dtype(arr.dtype), tuple(arr.shape), _bytes_view(arr.reshape(-1).view(np.uint8))


def _owned_view(host: np.ndarray, owner: Any) -> memoryview:
    """A byte view of ``host`` that holds ``owner`` as long as the view lives."""
    holder = host.view(_Held)
    holder.owner = owner
    return _bytes_view(holder)


def _bytes_view(host: np.ndarray) -> memoryview:
    return memoryview(host)  # type: ignore[arg-type]


class _Held(np.ndarray):
    """A numpy view that keeps another object alive (the memory's owner)."""

    owner: Any = None


def _chunks(params: Mapping[str, Any]) -> Iterator[bytes | memoryview]:
    """The parameter-dict bytes of ``params`` piece by piece; array data as views."""
    if not isinstance(params, Mapping):
        raise TVMTypeError(f"save_param_dict expects a dict of arrays, got {type(params).__name__}")
    for name in params:
        if not isinstance(name, str):
            raise TVMTypeError(f"save_param_dict: parameter names must be str, got {name!r}")
    yield struct.pack("<QQQ", LIST_MAGIC, 0, len(params))
    for name in params:
        encoded = name.encode("utf-8")
        yield struct.pack("<Q", len(encoded)) + encoded
    yield struct.pack("<Q", len(params))
    for name, value in params.items():
        dt, shape, data = _host_data(name, value)
        if dt.lanes != 1:
            raise TVMValueError(
                f"save_param_dict: parameter {name!r} has vector type {dt}; TVM's format stores "
                "one lane per element, save it as a scalar type with the lanes as a last axis"
            )
        yield (
            struct.pack("<QQiii", ARRAY_MAGIC, 0, _CPU, 0, len(shape))
            + struct.pack("<BBH", dt.code, dt.bits, dt.lanes)
            + struct.pack(f"<{len(shape)}q", *shape)
            + struct.pack("<q", data.nbytes)
        )
        yield data


def save_param_dict(params: Mapping[str, Any]) -> bytes:
    """Serialise ``{name: NDArray or numpy array}`` into TVM's parameter-dict bytes.

    Names are written in the mapping's order. Vector element types (``float32x4``) are refused:
    TVM's format records one lane's size per element and would drop the other lanes.
    """
    return b"".join(_chunks(params))


def write_param_dict(params: Mapping[str, Any], stream: BinaryIO) -> int:
    """Write :func:`save_param_dict`'s bytes of ``params`` to ``stream`` array by array (no
    copy of the whole dict is made); returns the number of bytes written.
    """
    written = 0
    for chunk in _chunks(params):
        stream.write(chunk)
        written += len(chunk) if isinstance(chunk, bytes) else chunk.nbytes
    return written


class _Reader:
    """A cursor over parameter bytes that checks every read against what is left."""

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.view = memoryview(data).cast("B")
        self.offset = 0

    def take(self, size: int, field: str) -> memoryview:
        left = len(self.view) - self.offset
        if size < 0 or size > left:
            raise TVMValueError(
                f"load_param_dict: truncated or corrupt parameters: {field} at offset "
                f"{self.offset} needs {size} bytes, only {left} left"
            )
        out = self.view[self.offset : self.offset + size]
        self.offset += size
        return out

    def unpack(self, fmt: str, field: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), field))

    def fail(self, at: int, message: str) -> TVMValueError:
        return TVMValueError(f"load_param_dict: at offset {at}: {message}")


def _read_names(reader: _Reader) -> list[str]:
    start = reader.offset
    (magic,) = reader.unpack("<Q", "list magic")
    if magic != LIST_MAGIC:
        raise reader.fail(
            start, f"list magic is {magic:#x}, expected {LIST_MAGIC:#x} (not TVM parameters)"
        )
    reader.unpack("<Q", "reserved field")
    at = reader.offset
    (count,) = reader.unpack("<Q", "number of names")
    if count * 8 > len(reader.view) - reader.offset:
        raise reader.fail(at, f"{count} names cannot fit in the {len(reader.view)} bytes given")
    names = []
    for index in range(count):
        at = reader.offset
        (length,) = reader.unpack("<Q", f"length of name {index}")
        raw = reader.take(length, f"name {index}")
        try:
            names.append(bytes(raw).decode("utf-8"))
        except UnicodeDecodeError as err:
            raise reader.fail(at, f"name {index} is not UTF-8: {err}") from None
    return names


def _read_array(reader: _Reader, name: str, copy: bool) -> NDArray:
    at = reader.offset
    (magic,) = reader.unpack("<Q", f"magic of array {name!r}")
    if magic != ARRAY_MAGIC:
        raise reader.fail(at, f"array {name!r}: magic is {magic:#x}, expected {ARRAY_MAGIC:#x}")
    reader.unpack("<Q", f"reserved field of array {name!r}")
    at = reader.offset
    device_type, _device_id, ndim = reader.unpack("<iii", f"device and ndim of array {name!r}")
    if device_type != _CPU:
        raise reader.fail(at, f"array {name!r}: device type {device_type}, expected 1 (CPU)")
    if not 0 <= ndim <= _MAX_NDIM:
        raise reader.fail(at + 8, f"array {name!r}: ndim {ndim} is not in 0..{_MAX_NDIM}")
    at = reader.offset
    code, bits, lanes = reader.unpack("<BBH", f"dtype of array {name!r}")
    if bits == 0 or lanes != 1:
        raise reader.fail(
            at,
            f"array {name!r}: dtype (code {code}, bits {bits}, lanes {lanes}) is not a "
            "scalar type with bits > 0",
        )
    dt = DataType(code, bits, lanes)
    at = reader.offset
    shape = reader.unpack(f"<{ndim}q", f"shape of array {name!r}")
    if any(dim < 0 for dim in shape):
        raise reader.fail(at, f"array {name!r}: negative dimension in shape {shape}")
    at = reader.offset
    (nbytes,) = reader.unpack("<q", f"byte size of array {name!r}")
    expected = math.prod(shape) * ((bits + 7) // 8)
    if nbytes != expected:
        raise reader.fail(
            at,
            f"array {name!r}: byte size {nbytes} does not match shape {shape} {dt} "
            f"({expected} bytes)",
        )
    data = reader.take(nbytes, f"data of array {name!r}")
    if not copy:
        return _view(data, shape, dt)
    out = empty(shape, dt)
    out.copy_from_bytes(np.frombuffer(data, dtype=np.uint8))
    return out


def _view(data: memoryview, shape: tuple[int, ...], dt: DataType) -> NDArray:
    """An NDArray over ``data``'s memory (kept alive by the array; read-only when it is)."""
    host = np.frombuffer(data, dtype=np.uint8)
    view = NDArray(host.ctypes.data if host.size else 0, shape, dt, cpu(0), owner=host)
    view._read_only = data.readonly
    return view


def load_param_dict(
    param_bytes: bytes | bytearray | memoryview, *, copy: bool = True
) -> dict[str, NDArray]:
    """Parse TVM's parameter-dict bytes into ``{name: NDArray}`` (arrays on the CPU).

    ``copy=False`` makes each array a view of ``param_bytes`` (no copy; the arrays keep the
    buffer alive, and are read-only when it is).
    """
    if not isinstance(param_bytes, (bytes, bytearray, memoryview)):
        raise TVMTypeError(f"load_param_dict expects bytes, got {type(param_bytes).__name__}")
    reader = _Reader(param_bytes)
    names = _read_names(reader)
    at = reader.offset
    (count,) = reader.unpack("<Q", "number of arrays")
    if count != len(names):
        raise reader.fail(at, f"{count} arrays for {len(names)} names")
    seen: set[str] = set()
    out: dict[str, NDArray] = {}
    for name in names:
        if name in seen:
            raise reader.fail(at, f"parameter name {name!r} appears twice")
        seen.add(name)
        out[name] = _read_array(reader, name, copy)
    if reader.offset != len(reader.view):
        raise reader.fail(
            reader.offset, f"{len(reader.view) - reader.offset} unexpected bytes after the arrays"
        )
    return out


def read_param_names(param_bytes: bytes | bytearray | memoryview) -> list[str]:
    """The parameter names of TVM's parameter-dict bytes, without reading the arrays."""
    return _read_names(_Reader(param_bytes))


def save_param_dict_to_file(params: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write :func:`save_param_dict` of ``params`` to ``path`` (streamed, array by array)."""
    with Path(path).open("wb") as stream:
        write_param_dict(params, stream)


def load_param_dict_from_file(path: str | os.PathLike[str]) -> dict[str, NDArray]:
    """Read the parameter dict saved in ``path``."""
    return load_param_dict(Path(path).read_bytes())
