"""The board-side stub of an IDL interface: calls marshalled from the parsed interface into
requests on a byte pipe to the skel, and replies decoded back (wire format:
:mod:`pytvm.contrib.hexagon.wire`).

:class:`Stub` serves any parsed interface through :meth:`Stub.call`; :class:`HexagonRpcStub`
adds the typed ``open``/``send``/``receive``/``close`` of ``hexagon_rpc.idl`` and checks, when
built, that the interface still declares them as it expects.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

from ...ffi.errors import TVMOSError, TVMTypeError, TVMValueError
from .idl_parser import Interface, Param, parse_file
from .wire import DEFAULT_MAX_MESSAGE, SCALAR_TYPES, skel_status_name

__all__ = [
    "HEXAGON_RPC_SHAPE",
    "IDL_PATH",
    "HexagonRpcStub",
    "OutValue",
    "StatusError",
    "Stub",
    "StubError",
    "hexagon_rpc_interface",
]

#: The interface definition the stub (here) and the skel (in ``pytvm-device``) come from.
IDL_PATH = Path(__file__).resolve().with_name("hexagon_rpc.idl")

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_HEAD = struct.Struct("<II")
_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "uint32": (0, (1 << 32) - 1)}
_RANGES["handle"] = _RANGES["uint32"]
#: Bytes of one wire word: a size, a status, a scalar or a length prefix.
_WORD = _U32.size
#: Longest ``bytes``/``string`` parameter a length prefix can state.
_MAX_LENGTH = (1 << 32) - 1
#: Smallest ``max_message`` a stub accepts.
_MIN_MESSAGE = 16

#: A decoded out-parameter: an int for the scalar types, bytes for ``out bytes``.
OutValue = int | bytes


class StubError(TVMOSError):
    """The pipe to the skel broke, or a reply was malformed."""


class StatusError(StubError):
    """A call returned a non-zero status (``.method``, ``.status``)."""

    def __init__(self, interface: str, method: str, status: int) -> None:
        why = skel_status_name(status)
        text = f" (skel: {why})" if why else ""
        super().__init__(f"{interface}_{method} returned status {status}{text}")
        self.method = method
        self.status = status


def _int(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TVMTypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise TVMValueError(f"{name}={value} is outside [{lo}, {hi}]")
    return value


def _string(name: str, value: object) -> bytes:
    if not isinstance(value, str):
        raise TVMTypeError(f"{name} must be a str, not {type(value).__name__}")
    raw = value.encode("utf-8")
    if b"\0" in raw:
        raise TVMValueError(f"{name} must not contain NUL")
    return raw + b"\0"


def _view(name: str, value: object) -> memoryview:
    if isinstance(value, str):
        raise TVMTypeError(f"{name} must be bytes-like, not str")
    try:
        return memoryview(value).cast("B")  # type: ignore[arg-type]
    except TypeError as err:
        raise TVMTypeError(f"{name} must be a contiguous bytes-like object") from err


@dataclass(frozen=True, slots=True)
class _Plan:
    """One method, split once for all its calls: name, id, parameters by direction, and
    ``where`` (``<interface>_<method>``, for messages).
    """

    name: str
    method_id: int
    ins: tuple[Param, ...]
    outs: tuple[Param, ...]
    where: str


class Stub:
    """Stub of ``interface``: requests go to ``write_fd``, replies come from ``read_fd``.

    ``max_message`` must not exceed the skel's buffer; larger requests raise ``ValueError``
    before anything is sent. Calls are serialised by a lock. After a broken pipe or a
    malformed reply the stream is out of step, and every later call raises :class:`StubError`.
    """

    def __init__(
        self,
        interface: Interface,
        read_fd: int,
        write_fd: int,
        max_message: int = DEFAULT_MAX_MESSAGE,
    ) -> None:
        if max_message < _MIN_MESSAGE:
            raise TVMValueError(f"max_message={max_message} is too small (at least {_MIN_MESSAGE})")
        self._iface = interface
        self._plans = {
            m.name: _Plan(m.name, m.method_id, m.ins, m.outs, f"{interface.name}_{m.name}")
            for m in interface.methods
        }
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._max_message = max_message
        self._lock = threading.Lock()
        self._broken = ""

    @property
    def interface(self) -> Interface:
        """The parsed interface the calls are marshalled from."""
        return self._iface

    @property
    def max_message(self) -> int:
        """Largest request or reply ``size`` (bytes after the size field)."""
        return self._max_message

    @property
    def method_ids(self) -> dict[str, int]:
        """Method name -> the id sent on the wire."""
        return {m.name: m.method_id for m in self._iface.methods}

    def call(self, method: str, *args: object) -> object:
        """Call ``method`` with its in-parameters in declaration order; returns its
        out-parameters: ``None``, the single value, or a tuple in declaration order.
        """
        outs = self.invoke(method, args)
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def invoke(self, method: str, args: Sequence[object]) -> list[OutValue]:
        """Call ``method``; the list of its out-parameters (ints, or bytes for ``out bytes``)."""
        plan = self._plans.get(method)
        if plan is None:
            known = ", ".join(self._plans)
            raise TVMValueError(
                f"{self._iface.name}_{method}: {self._iface.source} declares no such method: "
                f"{known}"
            )
        ins = plan.ins
        if len(args) != len(ins):
            names = ", ".join(p.name for p in ins)
            raise TVMTypeError(
                f"{plan.where} takes {len(ins)} arguments ({names}), got {len(args)}"
            )
        size, parts = self._encode(ins, args)
        body = self._exchange(plan, size, parts)
        return self._decode(plan, body)

    def _encode(
        self, ins: Sequence[Param], args: Sequence[object]
    ) -> tuple[int, list[bytes | memoryview]]:
        """The request's ``size`` and its pieces after the head: ``parts[0]`` is bytes, and
        large bytes parameters are not copied.
        """
        fixed = bytearray()
        parts: list[bytes | memoryview] = []
        size = 4
        for p, value in zip(ins, args, strict=True):
            if p.type in SCALAR_TYPES:
                lo, hi = _RANGES[p.type]
                number = _int(p.name, value, lo, hi)
                fixed += _I32.pack(number) if p.type == "int32" else _U32.pack(number)
                size += 4
                continue
            data = _string(p.name, value) if p.type == "string" else _view(p.name, value)
            if len(data) > _MAX_LENGTH:
                raise TVMValueError(f"{p.name} is longer than 2**32 - 1 bytes")
            fixed += _U32.pack(len(data))
            parts += [bytes(fixed), data]
            fixed = bytearray()
            size += 4 + len(data)
        parts.append(bytes(fixed))
        return size, parts

    def _exchange(self, plan: _Plan, size: int, parts: list[bytes | memoryview]) -> memoryview:
        """Send one request; the reply's out-parameter bytes (after a zero status)."""
        limit = self._max_message
        where = plan.where
        if size > limit:
            raise TVMValueError(f"{where}: {size}-byte request over the {limit} limit")
        with self._lock:
            if self._broken:
                raise StubError(f"{where}: the stub is broken: {self._broken}")
            try:
                self._write(_HEAD.pack(size, plan.method_id) + bytes(parts[0]))
                for part in parts[1:]:
                    if len(part):
                        self._write(part)
                (reply_size,) = _U32.unpack(self._read(_WORD))
                if not _WORD <= reply_size <= limit:
                    raise StubError(f"{where}: bad reply size {reply_size}")
                body = self._read(reply_size)
            except StubError as err:
                self._broken = str(err)  # the stream is out of step from here on
                raise
        (status,) = _I32.unpack_from(body, 0)
        if status != 0:
            if reply_size != _WORD:
                raise StubError(f"{where}: a failed call returned out-params")
            raise StatusError(self._iface.name, plan.name, status)
        return memoryview(body)[4:]

    def _decode(self, plan: _Plan, body: memoryview) -> list[OutValue]:
        where = plan.where
        outs: list[OutValue] = []
        pos = 0
        for p in plan.outs:
            if len(body) - pos < _WORD:
                raise StubError(f"{where}: the reply is truncated")
            word = int(_U32.unpack_from(body, pos)[0])
            pos += 4
            if p.type == "bytes":
                if len(body) - pos < word:
                    raise StubError(f"{where}: out-parameter {p.name} is truncated")
                outs.append(bytes(body[pos : pos + word]))
                pos += word
            else:
                outs.append(word - (1 << 32) if p.type == "int32" and word >= 1 << 31 else word)
        if pos != len(body):
            raise StubError(f"{where}: {len(body) - pos} extra reply bytes")
        return outs

    def _write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._write_fd, view) :]
            except OSError as err:
                raise StubError(f"cannot write to the skel: {err}") from err

    def _read(self, n: int) -> bytearray:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = os.readv(self._read_fd, [view[got:]])
            except OSError as err:
                raise StubError(f"cannot read from the skel: {err}") from err
            if k == 0:
                raise StubError(f"the skel closed the pipe after {got} of {n} bytes")
            got += k
        return buf


@lru_cache(maxsize=1)
def hexagon_rpc_interface() -> Interface:
    """The parsed :data:`IDL_PATH`, read once per process."""
    return parse_file(IDL_PATH)


#: What :class:`HexagonRpcStub` expects of ``hexagon_rpc.idl``: (direction, type) per parameter.
HEXAGON_RPC_SHAPE: dict[str, tuple[tuple[str, str], ...]] = {
    "open": (("in", "string"), ("in", "int32"), ("out", "handle")),
    "send": (("in", "handle"), ("in", "bytes")),
    "receive": (("in", "handle"), ("in", "uint32"), ("out", "bytes")),
    "close": (("in", "handle"),),
}


class HexagonRpcStub(Stub):
    """The typed stub of ``hexagon_rpc``: seed 000's ``hexagon_rpc_open/send/receive/close``.

    ``interface`` defaults to the shipped ``hexagon_rpc.idl``; building the stub checks that it
    declares the four calls with the parameters this class marshals.
    """

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        max_message: int = DEFAULT_MAX_MESSAGE,
        interface: Interface | None = None,
    ) -> None:
        iface = interface if interface is not None else hexagon_rpc_interface()
        for name, shape in HEXAGON_RPC_SHAPE.items():
            try:
                m = iface.method(name)
            except KeyError:
                raise TVMValueError(
                    f"{iface.source}: interface {iface.name!r} lacks method {name!r}, which "
                    "HexagonRpcStub calls"
                ) from None
            found = tuple((p.direction, p.type) for p in m.params)
            if found != shape:
                want = ", ".join(f"{d} {t}" for d, t in shape)
                raise TVMValueError(
                    f"{iface.source}:{m.line}: {m.signature} does not match what "
                    f"HexagonRpcStub marshals ({name}({want})); update the class with the IDL"
                )
        super().__init__(iface, read_fd, write_fd, max_message)

    def open(self, uri: str, stack_size: int) -> int:
        """Start the accelerator's RPC server for ``uri``; returns the session handle."""
        return cast(int, self.invoke("open", (uri, stack_size))[0])

    def send(self, h: int, data: bytes | bytearray | memoryview) -> None:
        """Feed RPC bytes to the server of session ``h``."""
        self.invoke("send", (h, data))

    def receive(self, h: int, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` of the server's pending replies (``b""`` once it ended)."""
        return cast(bytes, self.invoke("receive", (h, max_bytes))[0])

    def close(self, h: int) -> None:
        """Stop the server of session ``h``."""
        self.invoke("close", (h,))
