"""A minimal IDL for accelerator calls, and the stub/skel generators built on it.

FastRPC generates, from ``hexagon_rpc.idl``, a board-side *stub* (the functions the board calls)
and a DSP-side *skel* (which receives the calls and dispatches them to the implementation); seed
000's ``HexagonTransportChannel`` calls ``hexagon_rpc_open/send/receive/close`` through them.
This module does the same for pytvm's accelerator emulator:

* :func:`parse` / :func:`parse_file` read the IDL (syntax at the top of
  ``pytvm/contrib/hexagon/hexagon_rpc.idl``) into frozen dataclasses, with ``file:line:`` errors;
* :func:`generate_stub_py` writes the Python source of the board-side stub class;
* :func:`generate_skel_header` / :func:`generate_skel_c` write the C99 skel: a loop on two file
  descriptors that decodes each request, calls the implementation and writes the reply. It uses
  no heap: one caller-given buffer holds the request and the out-bytes, and every length from
  the wire is checked against it.

Wire format (all integers little-endian)::

    request  u32 size | u32 method_id | in-params in declaration order
    reply    u32 size | i32 status    | out-params in declaration order (only if status == 0)

``size`` counts the bytes after itself and never exceeds the skel's buffer (``max_message``).
``int32`` is an i32, ``uint32`` and ``handle`` a u32; ``bytes`` is ``u32 n`` then ``n`` bytes;
``string`` is ``u32 n`` then ``n`` bytes of UTF-8 whose last byte is the only NUL (so the skel
hands the implementation a C string in place). The skel answers requests it cannot take with a
reserved status (:data:`SKEL_STATUSES`) and keeps serving: a request over its buffer is read
and dropped, so the stream stays in step.

It imports nothing from pytvm, so the build runs it as a script::

    python3 pytvm/contrib/hexagon/idl.py --skel-c out/x_skel.c --skel-h out/x_skel.h hexagon_rpc.idl

(``pytvm/src/crt/device/skel.mk`` does this into ``$(BUILD)/gen``). The Python stub is
generated when :mod:`pytvm.contrib.hexagon.transport` first asks for it (:func:`load_stub`),
from the same file, so stub and skel never disagree; ``--stub-py`` writes it out for reading.
"""

from __future__ import annotations

import argparse
import hashlib
import keyword
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "IDLError",
    "Param",
    "Method",
    "Interface",
    "TYPES",
    "SKEL_STATUSES",
    "DEFAULT_MAX_MESSAGE",
    "parse",
    "parse_file",
    "generate_stub_py",
    "generate_skel_header",
    "generate_skel_c",
    "load_stub",
    "main",
]

#: Parameter types and their C spelling as an in-parameter.
TYPES = ("int32", "uint32", "handle", "string", "bytes")
SCALAR_TYPES = frozenset({"int32", "uint32", "handle"})
DIRECTIONS = ("in", "out")

#: Statuses the skel itself answers with (an implementation must not return them).
SKEL_STATUSES: dict[str, tuple[int, str]] = {
    "EMETHOD": (-1001, "unknown method id"),
    "ETOOBIG": (-1002, "request larger than the skel's buffer"),
    "EBADMSG": (-1003, "malformed request parameters"),
    "EIMPL": (-1004, "the implementation returned more out-bytes than their capacity"),
    "EREAD": (-1005, "read error or truncated request (serve loop result)"),
    "EWRITE": (-1006, "write error (serve loop result)"),
    "EARG": (-1007, "bad serve arguments (serve loop result)"),
}

#: Default largest message ``size`` (the skel buffer the device binary gives its skel).
DEFAULT_MAX_MESSAGE = 1 << 20
#: Smallest buffer the skel accepts.
SKEL_MIN_BUFFER = 64

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while errno".split()
)
_IDL_WORDS = frozenset({"interface", *DIRECTIONS, *TYPES})
_PY_RESERVED = frozenset({*keyword.kwlist, *getattr(keyword, "softkwlist", ()), "self"})


class IDLError(ValueError):
    """A problem in an IDL file, reported as ``<source>:<line>: <message>``."""

    def __init__(self, message: str, line: int, source: str = "<idl>") -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.message = message
        self.line = line
        self.source = source


@dataclass(frozen=True)
class Param:
    """One parameter: ``direction`` is ``"in"`` or ``"out"``, ``type`` one of :data:`TYPES`."""

    name: str
    direction: str
    type: str
    line: int


@dataclass(frozen=True)
class Method:
    """One call; ``method_id`` is its index in the interface. It returns an int32 status."""

    name: str
    method_id: int
    params: tuple[Param, ...]
    line: int

    @property
    def ins(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.direction == "in")

    @property
    def outs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.direction == "out")


@dataclass(frozen=True)
class Interface:
    """A parsed IDL file. ``source`` is the file name and ``digest`` a hash of its text."""

    name: str
    methods: tuple[Method, ...]
    source: str
    digest: str

    def method(self, name: str) -> Method:
        for m in self.methods:
            if m.name == name:
                return m
        raise KeyError(name)


# ---------------------------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"(?P<space>[ \t\r\f\v]+)|(?P<newline>\n)|(?P<comment>(?:#|//)[^\n]*)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[{}(),;])"
)


@dataclass(frozen=True)
class _Token:
    text: str  # "" at the end of the input
    line: int


def _tokens(text: str, source: str) -> list[_Token]:
    out: list[_Token] = []
    line = 1
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise IDLError(f"unexpected character {text[pos]!r}", line, source)
        kind = m.lastgroup
        if kind == "newline":
            line += 1
        elif kind in ("word", "punct"):
            out.append(_Token(m.group(), line))
        pos = m.end()
    out.append(_Token("", line))
    return out


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.toks = _tokens(text, source)
        self.i = 0

    def error(self, message: str, line: int | None = None) -> IDLError:
        return IDLError(message, self.toks[self.i].line if line is None else line, self.source)

    def peek(self) -> _Token:
        return self.toks[self.i]

    def take(self) -> _Token:
        tok = self.toks[self.i]
        if tok.text:
            self.i += 1
        return tok

    def expect(self, text: str, what: str = "") -> _Token:
        tok = self.peek()
        if tok.text != text:
            found = repr(tok.text) if tok.text else "end of file"
            raise self.error(f"expected {text!r}{what}, found {found}")
        return self.take()

    def name(self, what: str) -> _Token:
        tok = self.peek()
        if not tok.text:
            raise self.error(f"expected {what}, found end of file")
        if not _NAME.match(tok.text) or tok.text.endswith("_t"):
            raise self.error(f"{what} {tok.text!r} must match [a-z][a-z0-9_]* and not end in '_t'")
        if tok.text in _IDL_WORDS or tok.text in _C_KEYWORDS or tok.text in _PY_RESERVED:
            raise self.error(f"{what} {tok.text!r} is a reserved word")
        return self.take()

    def interface(self) -> tuple[str, list[Method]]:
        self.expect("interface", " at the start of the file")
        name = self.name("interface name").text
        self.expect("{", f" after 'interface {name}'")
        methods: list[Method] = []
        seen: dict[str, int] = {}
        while self.peek().text != "}":
            if not self.peek().text:
                raise self.error(f"interface {name!r} is not closed with '}}'")
            m = self.method(len(methods))
            if m.name in seen:
                raise self.error(
                    f"method {m.name!r} is declared twice (first on line {seen[m.name]})", m.line
                )
            seen[m.name] = m.line
            methods.append(m)
        close = self.take()
        if not methods:
            raise self.error(f"interface {name!r} declares no methods", close.line)
        if self.peek().text == ";":
            self.take()
        if self.peek().text:
            raise self.error(f"unexpected {self.peek().text!r} after the interface")
        return name, methods

    def method(self, method_id: int) -> Method:
        ret = self.peek()
        if ret.text != "int32":
            found = repr(ret.text) if ret.text else "end of file"
            raise self.error(f"a method starts with its return type 'int32' (found {found})")
        self.take()
        tok = self.name("method name")
        if tok.text.startswith("skel"):
            raise self.error(f"method name {tok.text!r}: names starting 'skel' are reserved")
        self.expect("(", f" after method name {tok.text!r}")
        params: list[Param] = []
        if self.peek().text != ")":
            while True:
                params.append(self.param())
                if self.peek().text != ",":
                    break
                self.take()
        self.expect(")", f" to close the parameters of {tok.text!r}")
        self.expect(";", f" after method {tok.text!r}")
        self.check_params(tok.text, params)
        return Method(tok.text, method_id, tuple(params), tok.line)

    def param(self) -> Param:
        d = self.peek()
        if d.text not in DIRECTIONS:
            found = repr(d.text) if d.text else "end of file"
            raise self.error(f"expected 'in' or 'out' before a parameter, found {found}")
        self.take()
        t = self.peek()
        if t.text not in TYPES:
            found = repr(t.text) if t.text else "end of file"
            raise self.error(f"unknown parameter type {found} (types: {', '.join(TYPES)})")
        self.take()
        n = self.name("parameter name")
        if d.text == "out" and t.text == "string":
            raise self.error(f"'out string {n.text}': strings are in-only; use 'out bytes'", d.line)
        return Param(n.text, d.text, t.text, d.line)

    def check_params(self, method: str, params: list[Param]) -> None:
        seen: set[str] = set()
        c_names: dict[str, str] = {}
        out_bytes = 0
        for p in params:
            if p.name in seen:
                raise self.error(f"method {method!r}: parameter {p.name!r} appears twice", p.line)
            seen.add(p.name)
            if p.direction == "out" and p.type == "bytes":
                out_bytes += 1
                if out_bytes > 1:
                    raise self.error(
                        f"method {method!r}: at most one 'out bytes' parameter", p.line
                    )
            for c_name in _c_param_names(p):
                if c_name in c_names:
                    raise self.error(
                        f"method {method!r}: parameter {p.name!r} needs the C name {c_name!r}, "
                        f"already used by {c_names[c_name]!r}",
                        p.line,
                    )
                c_names[c_name] = p.name


def _c_param_names(p: Param) -> list[str]:
    if p.type == "bytes":
        return [p.name, f"{p.name}_len"] + ([f"{p.name}_cap"] if p.direction == "out" else [])
    return [p.name]


def parse(text: str, source: str = "<idl>") -> Interface:
    """Parse IDL ``text``; ``source`` names it in errors (``<source>:<line>: ...``)."""
    name, methods = _Parser(text, source).interface()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Interface(name, tuple(methods), Path(source).name, digest)


def parse_file(path: str | Path) -> Interface:
    """Parse the IDL file at ``path``."""
    p = Path(path)
    return parse(p.read_text(encoding="utf-8"), str(p))


# ---------------------------------------------------------------------------------- helpers


def _banner(iface: Interface, comment: str) -> str:
    return (
        f"{comment} Generated by pytvm/contrib/hexagon/idl.py from {iface.source} "
        f"(sha256 {iface.digest}). Do not edit.\n"
    )


def _signature(m: Method) -> str:
    params = ", ".join(f"{p.direction} {p.type} {p.name}" for p in m.params)
    return f"int32 {m.name}({params})"


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part)


# ---------------------------------------------------------------------------------- Python stub


def generate_stub_py(iface: Interface, max_message: int = DEFAULT_MAX_MESSAGE) -> str:
    """Python source of the board-side stub class ``<Name>Stub`` of ``iface``.

    The class is built on two file descriptors (a byte pipe to the skel): each method marshals
    its in-parameters into one request, waits for the reply and returns the out-parameters
    (``None``, the single value, or a tuple in declaration order); a non-zero status raises
    ``StatusError`` (``.method``, ``.status``), a broken or malformed reply ``StubError``.
    """
    cls = f"{_camel(iface.name)}Stub"
    ids = [f'    "{m.name}": {m.method_id},' for m in iface.methods]
    skel = [f'    {v[0]}: "{k}",' for k, v in SKEL_STATUSES.items()]
    lines = [
        _banner(iface, "#").rstrip("\n"),
        f'"""Board-side stub of interface ``{iface.name}`` (see pytvm/contrib/hexagon/idl.py)."""',
        "",
        "from __future__ import annotations",
        "",
        "import os as _os",
        "import struct as _struct",
        "import threading as _threading",
        "",
        f'INTERFACE = "{iface.name}"',
        f'DIGEST = "{iface.digest}"',
        "METHOD_IDS = {",
        *ids,
        "}",
        "SKEL_STATUSES = {",
        *skel,
        "}",
        f"MAX_MESSAGE = {max_message}",
        "",
        '_U32 = _struct.Struct("<I")',
        '_I32 = _struct.Struct("<i")',
        '_HEAD = _struct.Struct("<II")',
        "_len = len",
        "_isinstance = isinstance",
        "_memoryview = memoryview",
        "_bytes = bytes",
        "",
        "",
        "class StubError(Exception):",
        '    """The pipe to the skel broke, or a reply was malformed."""',
        "",
        "",
        "class StatusError(StubError):",
        '    """A call returned a non-zero status."""',
        "",
        "    def __init__(self, method: str, status: int) -> None:",
        "        why = SKEL_STATUSES.get(status)",
        '        text = f" (skel: {why})" if why else ""',
        '        super().__init__(f"{INTERFACE}_{method} returned status {status}{text}")',
        "        self.method = method",
        "        self.status = status",
        "",
        "",
        "def _int(name: str, value: object, lo: int, hi: int) -> int:",
        "    if _isinstance(value, bool) or not _isinstance(value, int):",
        '        raise TypeError(f"{name} must be an int, not {type(value).__name__}")',
        "    if not lo <= value <= hi:",
        '        raise ValueError(f"{name}={value} is outside [{lo}, {hi}]")',
        "    return value",
        "",
        "",
        "def _string(name: str, value: object) -> bytes:",
        "    if not _isinstance(value, str):",
        '        raise TypeError(f"{name} must be a str, not {type(value).__name__}")',
        '    raw = value.encode("utf-8")',
        '    if b"\\0" in raw:',
        '        raise ValueError(f"{name} must not contain NUL")',
        '    return raw + b"\\0"',
        "",
        "",
        "def _view(name: str, value: object) -> memoryview:",
        "    if _isinstance(value, str):",
        '        raise TypeError(f"{name} must be bytes-like, not str")',
        "    try:",
        '        return _memoryview(value).cast("B")  # type: ignore[arg-type]',
        "    except TypeError as err:",
        '        raise TypeError(f"{name} must be a contiguous bytes-like object") from err',
        "",
        "",
        f"class {cls}:",
        f'    """Stub of ``{iface.name}``: requests go to ``write_fd``, replies come from'
        " ``read_fd``.",
        "",
        "    ``max_message`` must not exceed the skel's buffer; larger requests raise",
        "    ``ValueError`` before anything is sent. Calls are serialised by a lock.",
        '    """',
        "",
        "    def __init__(self, read_fd: int, write_fd: int, max_message: int = MAX_MESSAGE)"
        " -> None:",
        "        if max_message < 16:",
        '            raise ValueError(f"max_message={max_message} is too small")',
        "        self._read_fd = read_fd",
        "        self._write_fd = write_fd",
        "        self._max_message = max_message",
        "        self._lock = _threading.Lock()",
        '        self._broken = ""',
        "",
        "    @property",
        "    def max_message(self) -> int:",
        '        """Largest request or reply ``size`` (bytes after the size field)."""',
        "        return self._max_message",
        "",
        "    def _write(self, data: bytes | memoryview) -> None:",
        "        view = _memoryview(data)",
        "        while _len(view):",
        "            try:",
        "                view = view[_os.write(self._write_fd, view) :]",
        "            except OSError as err:",
        '                raise StubError(f"cannot write to the skel: {err}") from err',
        "",
        "    def _read(self, n: int) -> bytearray:",
        "        buf = bytearray(n)",
        "        view = _memoryview(buf)",
        "        got = 0",
        "        while got < n:",
        "            try:",
        "                k = _os.readv(self._read_fd, [view[got:]])",
        "            except OSError as err:",
        '                raise StubError(f"cannot read from the skel: {err}") from err',
        "            if k == 0:",
        '                raise StubError(f"the skel closed the pipe after {got} of {n} bytes")',
        "            got += k",
        "        return buf",
        "",
        "    def _call(self, method: str, method_id: int, size: int, parts: list) -> memoryview:",
        '        """Send one request (``parts[0]`` is bytes); the reply\'s out-parameter bytes."""',
        "        limit = self._max_message",
        '        where = f"{INTERFACE}_{method}"',
        "        if size > limit:",
        '            raise ValueError(f"{where}: {size}-byte request over the {limit} limit")',
        "        with self._lock:",
        "            if self._broken:",
        '                raise StubError(f"{where}: the stub is broken: {self._broken}")',
        "            try:",
        "                self._write(_HEAD.pack(size, method_id) + parts[0])",
        "                for part in parts[1:]:",
        "                    if _len(part):",
        "                        self._write(part)",
        "                (reply_size,) = _U32.unpack(self._read(4))",
        "                if not 4 <= reply_size <= limit:",
        '                    raise StubError(f"{where}: bad reply size {reply_size}")',
        "                body = self._read(reply_size)",
        "            except StubError as err:",
        "                self._broken = str(err)  # the stream is out of step from here on",
        "                raise",
        "        (status,) = _I32.unpack_from(body, 0)",
        "        if status != 0:",
        "            if reply_size != 4:",
        '                raise StubError(f"{where}: a failed call returned out-params")',
        "            raise StatusError(method, status)",
        "        return _memoryview(body)[4:]",
        "",
        "    @staticmethod",
        "    def _take_u32(method: str, body: memoryview, pos: int) -> int:",
        "        if _len(body) - pos < 4:",
        '            raise StubError(f"{INTERFACE}_{method}: the reply is truncated")',
        "        return int(_U32.unpack_from(body, pos)[0])",
        "",
        "    @staticmethod",
        "    def _end(method: str, body: memoryview, pos: int) -> None:",
        "        if pos != _len(body):",
        "            extra = _len(body) - pos",
        '            raise StubError(f"{INTERFACE}_{method}: {extra} extra reply bytes")',
    ]
    for m in iface.methods:
        lines += [""] + _stub_method(iface, m)
    return "\n".join(lines) + "\n"


def _py_type(p: Param) -> str:
    if p.type == "string":
        return "str"
    if p.type == "bytes":
        return "bytes" if p.direction == "out" else "bytes | bytearray | memoryview"
    return "int"


def _stub_method(iface: Interface, m: Method) -> list[str]:
    args = "".join(f", {p.name}: {_py_type(p)}" for p in m.ins)
    outs = m.outs
    if not outs:
        ret = "None"
    elif len(outs) == 1:
        ret = _py_type(outs[0])
    else:
        ret = f"tuple[{', '.join(_py_type(p) for p in outs)}]"
    body = [
        f"    def {m.name}(self{args}) -> {ret}:",
        f'        """``{_signature(m)}``."""',
        "        _fixed = bytearray()",
        "        _parts: list = []",
        "        _size = 4",
    ]
    for p in m.ins:
        n = p.name
        if p.type == "int32":
            body.append(f'        _fixed += _I32.pack(_int("{n}", {n}, -(1 << 31), (1 << 31) - 1))')
            body.append("        _size += 4")
        elif p.type in ("uint32", "handle"):
            body.append(f'        _fixed += _U32.pack(_int("{n}", {n}, 0, (1 << 32) - 1))')
            body.append("        _size += 4")
        else:
            conv = "_string" if p.type == "string" else "_view"
            body += [
                f'        _v_{n} = {conv}("{n}", {n})',
                f"        if _len(_v_{n}) > 0xFFFFFFFF:",
                f'            raise ValueError("{n} is longer than 2**32 - 1 bytes")',
                f"        _fixed += _U32.pack(_len(_v_{n}))",
                "        _parts.append(_bytes(_fixed))",
                "        _fixed = bytearray()",
                f"        _parts.append(_v_{n})",
                f"        _size += 4 + _len(_v_{n})",
            ]
    body.append("        _parts.append(_bytes(_fixed))")
    body.append(f'        _body = self._call("{m.name}", {m.method_id}, _size, _parts)')
    body.append("        _pos = 0")
    names = []
    for p in outs:
        n = f"_o_{p.name}"
        names.append(n)
        if p.type in ("uint32", "handle"):
            body.append(f'        {n} = self._take_u32("{m.name}", _body, _pos)')
            body.append("        _pos += 4")
        elif p.type == "int32":
            body.append(f'        {n} = self._take_u32("{m.name}", _body, _pos)')
            body.append(f"        {n} = {n} - (1 << 32) if {n} >= (1 << 31) else {n}")
            body.append("        _pos += 4")
        else:  # out bytes
            body += [
                f'        _n_{p.name} = self._take_u32("{m.name}", _body, _pos)',
                "        _pos += 4",
                f"        if _len(_body) - _pos < _n_{p.name}:",
                f'            raise StubError("{iface.name}_{m.name}: out-parameter {p.name} is'
                ' truncated")',
                f"        {n} = _bytes(_body[_pos : _pos + _n_{p.name}])",
                f"        _pos += _n_{p.name}",
            ]
    body.append(f'        self._end("{m.name}", _body, _pos)')
    if len(names) == 1:
        body.append(f"        return {names[0]}")
    elif names:
        body.append(f"        return ({', '.join(names)})")
    else:
        body.append("        return None")
    return body


def load_stub(iface: Interface, max_message: int = DEFAULT_MAX_MESSAGE) -> types.ModuleType:
    """Generate and execute the stub of ``iface``; the module holds ``<Name>Stub``."""
    source = generate_stub_py(iface, max_message)
    module = types.ModuleType(f"_{iface.name}_stub", f"Generated stub of {iface.name}.")
    module.__dict__["__file__"] = f"<stub generated from {iface.source}>"
    exec(compile(source, f"<{iface.name} stub>", "exec"), module.__dict__)
    return module


# ---------------------------------------------------------------------------------- C skel


def _c_proto(iface: Interface, m: Method) -> str:
    args: list[str] = []
    for p in m.params:
        if p.direction == "in":
            if p.type == "int32":
                args.append(f"int32_t {p.name}")
            elif p.type in ("uint32", "handle"):
                args.append(f"uint32_t {p.name}")
            elif p.type == "string":
                args.append(f"const char* {p.name}")
            else:
                args.append(f"const uint8_t* {p.name}, uint32_t {p.name}_len")
        elif p.type == "int32":
            args.append(f"int32_t* {p.name}")
        elif p.type in ("uint32", "handle"):
            args.append(f"uint32_t* {p.name}")
        else:
            args.append(f"uint8_t* {p.name}, uint32_t {p.name}_cap, uint32_t* {p.name}_len")
    return f"int32_t {iface.name}_{m.name}({', '.join(args) or 'void'})"


def _wrap_c(text: str, indent: str = "    ", width: int = 100) -> str:
    """Break a prototype after commas so lines stay within ``width``."""
    if len(text) <= width:
        return text
    head, _, rest = text.partition("(")
    pieces = rest.split(", ")
    lines: list[str] = []
    cur = head + "("
    pad = " " * len(cur)
    for i, piece in enumerate(pieces):
        item = piece + ("," if i < len(pieces) - 1 else "")
        if len(cur) + len(item) + 1 > width and cur.strip() and not cur.endswith("("):
            lines.append(cur.rstrip())
            cur = pad
        cur += item + " "
    lines.append(cur.rstrip())
    return "\n".join(lines)


def generate_skel_header(iface: Interface) -> str:
    """C99 header of the skel: method ids, reserved statuses, the implementation's prototypes
    (which the implementation defines) and ``<iface>_skel_serve``."""
    up = iface.name.upper()
    guard = f"PYTVM_GENERATED_{up}_SKEL_H_"
    out = [
        "/*",
        _banner(iface, " *").rstrip("\n"),
        f" * Skel of interface `{iface.name}`: {iface.name}_skel_serve() reads requests from a",
        " * file descriptor, calls the functions below (defined by the implementation) and writes",
        " * the replies. Wire format: see pytvm/contrib/hexagon/idl.py. No heap: the caller gives",
        " * one buffer for the request and the out-bytes.",
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "/* Method ids (declaration order). */",
    ]
    for m in iface.methods:
        out.append(f"#define {up}_METHOD_{m.name.upper()} {m.method_id}u")
    out += [f"#define {up}_NUM_METHODS {len(iface.methods)}u", ""]
    out.append("/* Statuses the skel answers with itself; implementations must not return them. */")
    for key, (value, why) in SKEL_STATUSES.items():
        out.append(f"/* {why} */")
        out.append(f"#define {up}_SKEL_{key} ({value})")
    out += [
        "",
        f"/* Smallest buffer {iface.name}_skel_serve accepts. */",
        f"#define {up}_SKEL_MIN_BUFFER {SKEL_MIN_BUFFER}u",
        "",
        "/* ---- implemented by the device (0 = success; out-parameters are sent only then) */",
        "",
    ]
    for m in iface.methods:
        out.append(f"/* {_signature(m)} */")
        out.append(_wrap_c(_c_proto(iface, m)) + ";")
        out.append("")
    out += [
        "/*",
        " * Serve requests from read_fd until it ends, writing replies to write_fd. `buf` (of",
        " * buf_bytes >= *_SKEL_MIN_BUFFER) holds one request at a time; a request's `out bytes`",
        " * capacity is what is left of it. Requests over buf_bytes are dropped and answered",
        " * with *_SKEL_ETOOBIG.",
        " * Returns 0 when read_fd ends between requests, else *_SKEL_EREAD, *_SKEL_EWRITE or",
        " * *_SKEL_EARG.",
        " */",
        f"int32_t {iface.name}_skel_serve(int read_fd, int write_fd, uint8_t* buf, "
        "size_t buf_bytes);",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        f"#endif /* {guard} */",
    ]
    return "\n".join(out) + "\n"


_SKEL_BASE = r"""
/* ------------------------------------------------------------------ bytes and I/O */

typedef struct {
  const uint8_t* p;
  size_t left;
} skel_cursor;

static uint32_t skel_get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
         ((uint32_t)p[3] << 24);
}

static void skel_put_u32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)(v & 0xFFu);
  p[1] = (uint8_t)((v >> 8) & 0xFFu);
  p[2] = (uint8_t)((v >> 16) & 0xFFu);
  p[3] = (uint8_t)((v >> 24) & 0xFFu);
}

static uint32_t skel_i32_to_u32(int32_t v) { return (uint32_t)v; }
"""

#: Decoders, emitted only when a method needs them (no unused static functions).
_SKEL_TAKE_U32 = r"""
static int skel_take_u32(skel_cursor* c, uint32_t* v) {
  if (c->left < 4u) {
    return -1;
  }
  *v = skel_get_u32(c->p);
  c->p += 4;
  c->left -= 4u;
  return 0;
}
"""

_SKEL_TAKE_I32 = r"""
/* Two's complement without implementation-defined conversions. */
static int32_t skel_u32_to_i32(uint32_t u) {
  if (u <= 0x7FFFFFFFu) {
    return (int32_t)u;
  }
  return (int32_t)(u - 0x80000000u) - (int32_t)0x7FFFFFFF - 1;
}

static int skel_take_i32(skel_cursor* c, int32_t* v) {
  uint32_t u = 0u;
  if (skel_take_u32(c, &u) != 0) {
    return -1;
  }
  *v = skel_u32_to_i32(u);
  return 0;
}
"""

_SKEL_TAKE_BYTES = r"""
static int skel_take_bytes(skel_cursor* c, const uint8_t** data, uint32_t* len) {
  uint32_t n = 0u;
  if (skel_take_u32(c, &n) != 0) {
    return -1;
  }
  if ((size_t)n > c->left) {
    return -1;
  }
  *data = c->p;
  *len = n;
  c->p += n;
  c->left -= (size_t)n;
  return 0;
}
"""

_SKEL_TAKE_STRING = r"""
/* A string is its UTF-8 bytes and one terminating NUL, the only NUL. */
static int skel_take_string(skel_cursor* c, const char** s) {
  const uint8_t* data = NULL;
  uint32_t n = 0u;
  if (skel_take_bytes(c, &data, &n) != 0) {
    return -1;
  }
  if ((n == 0u) || (data[n - 1u] != 0u) || (memchr(data, 0, (size_t)n - 1u) != NULL)) {
    return -1;
  }
  *s = (const char*)data;
  return 0;
}
"""

_SKEL_IO = r"""
/* 0: n bytes read; 1: the input ended before the first byte (when eof_ok); -1: error. */
static int skel_read_exact(int fd, uint8_t* buf, size_t n, int eof_ok) {
  size_t done = 0u;
  while (done < n) {
    ssize_t got = read(fd, buf + done, n - done);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -1;
    }
    if (got == 0) {
      return ((done == 0u) && (eof_ok != 0)) ? 1 : -1;
    }
    done += (size_t)got;
  }
  return 0;
}

static int skel_write_all(int fd, const uint8_t* buf, size_t n) {
  size_t done = 0u;
  while (done < n) {
    ssize_t put = write(fd, buf + done, n - done);
    if (put < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -1;
    }
    done += (size_t)put;
  }
  return 0;
}

/* Read and drop n bytes, using buf as scratch. */
static int skel_discard(int fd, uint8_t* buf, size_t buf_bytes, size_t n) {
  while (n > 0u) {
    size_t step = (n < buf_bytes) ? n : buf_bytes;
    if (skel_read_exact(fd, buf, step, 0) != 0) {
      return -1;
    }
    n -= step;
  }
  return 0;
}

/* A reply with a status and no out-parameters. */
static int skel_reply_status(int fd, int32_t status) {
  uint8_t out[8];
  skel_put_u32(out, 4u);
  skel_put_u32(out + 4, skel_i32_to_u32(status));
  return skel_write_all(fd, out, sizeof(out));
}
"""


def _skel_helpers(iface: Interface) -> str:
    in_types = {p.type for m in iface.methods for p in m.ins}
    parts = [_SKEL_BASE]
    if in_types:
        parts.append(_SKEL_TAKE_U32)
    if "int32" in in_types:
        parts.append(_SKEL_TAKE_I32)
    if in_types & {"bytes", "string"}:
        parts.append(_SKEL_TAKE_BYTES)
    if "string" in in_types:
        parts.append(_SKEL_TAKE_STRING)
    parts.append(_SKEL_IO)
    return "".join(parts).rstrip("\n")


def _skel_method(iface: Interface, m: Method) -> list[str]:
    up = iface.name.upper()
    outs = m.outs
    out_bytes = [p for p in outs if p.type == "bytes"]
    fixed = 4 + 4 * len(outs)  # status + each scalar out / each out-bytes length
    lines = [
        f"/* {_signature(m)} */",
        f"static int skel_call_{m.name}(int write_fd, skel_cursor* c, uint8_t* space, "
        "size_t space_bytes) {",
    ]
    decl: list[str] = []
    for p in m.params:
        n = f"arg_{p.name}"
        if p.direction == "in":
            if p.type == "int32":
                decl.append(f"  int32_t {n} = 0;")
            elif p.type in ("uint32", "handle"):
                decl.append(f"  uint32_t {n} = 0u;")
            elif p.type == "string":
                decl.append(f"  const char* {n} = NULL;")
            else:
                decl.append(f"  const uint8_t* {n} = NULL;")
                decl.append(f"  uint32_t {n}_len = 0u;")
        elif p.type == "int32":
            decl.append(f"  int32_t {n} = 0;")
        elif p.type in ("uint32", "handle"):
            decl.append(f"  uint32_t {n} = 0u;")
        else:
            decl.append(f"  uint8_t* {n} = space;")
            decl.append(f"  uint32_t {n}_cap = 0u;")
            decl.append(f"  uint32_t {n}_len = 0u;")
    lines += decl
    lines += [
        "  int32_t status;",
        f"  uint8_t out[{4 + fixed}];",
        "  size_t used = 0u;",
    ]
    if not out_bytes:
        lines += ["  (void)space;", "  (void)space_bytes;"]
    else:
        b = f"arg_{out_bytes[0].name}"
        lines += [
            f"  if (space_bytes > {fixed}u) {{",
            f"    size_t room = space_bytes - {fixed}u;",
            f"    {b}_cap = (room > 0xFFFFFFFFu) ? 0xFFFFFFFFu : (uint32_t)room;",
            "  }",
        ]
    takes: list[str] = []
    for p in m.ins:
        n = f"arg_{p.name}"
        if p.type == "int32":
            takes.append(f"(skel_take_i32(c, &{n}) != 0)")
        elif p.type in ("uint32", "handle"):
            takes.append(f"(skel_take_u32(c, &{n}) != 0)")
        elif p.type == "string":
            takes.append(f"(skel_take_string(c, &{n}) != 0)")
        else:
            takes.append(f"(skel_take_bytes(c, &{n}, &{n}_len) != 0)")
    takes.append("(c->left != 0u)")
    cond = " ||\n      ".join(takes)
    lines += [
        f"  if ({cond}) {{",
        f"    return skel_reply_status(write_fd, {up}_SKEL_EBADMSG);",
        "  }",
    ]
    call_args: list[str] = []
    for p in m.params:
        n = f"arg_{p.name}"
        if p.direction == "in":
            call_args += [n, f"{n}_len"] if p.type == "bytes" else [n]
        elif p.type == "bytes":
            call_args += [n, f"{n}_cap", f"&{n}_len"]
        else:
            call_args.append(f"&{n}")
    call = f"  status = {iface.name}_{m.name}({', '.join(call_args)});"
    lines.append(_wrap_c(call, width=100))
    if out_bytes:
        b = f"arg_{out_bytes[0].name}"
        lines += [
            f"  if ((status == 0) && ({b}_len > {b}_cap)) {{",
            f"    status = {up}_SKEL_EIMPL;",
            "  }",
        ]
    lines += [
        "  if (status != 0) {",
        "    return skel_reply_status(write_fd, status);",
        "  }",
    ]
    size = f"{fixed}u" + "".join(f" + arg_{p.name}_len" for p in out_bytes)
    if out_bytes:
        size = f"(uint32_t)({size})"
    lines += [
        f"  skel_put_u32(out, {size});",
        "  skel_put_u32(out + 4, 0u);",
        "  used = 8u;",
    ]
    pending = True
    for i, p in enumerate(outs):
        n = f"arg_{p.name}"
        if p.type == "int32":
            lines += [f"  skel_put_u32(out + used, skel_i32_to_u32({n}));", "  used += 4u;"]
        elif p.type in ("uint32", "handle"):
            lines += [f"  skel_put_u32(out + used, {n});", "  used += 4u;"]
        else:
            lines += [
                f"  skel_put_u32(out + used, {n}_len);",
                "  used += 4u;",
                "  if ((skel_write_all(write_fd, out, used) != 0) ||",
                f"      (skel_write_all(write_fd, {n}, (size_t){n}_len) != 0)) {{",
                "    return -1;",
                "  }",
            ]
            if i + 1 < len(outs):
                lines.append("  used = 0u;")
            pending = False
            continue
        pending = True
    if pending:
        lines.append("  return skel_write_all(write_fd, out, used);")
    else:
        lines.append("  return 0;")
    lines.append("}")
    return lines


def generate_skel_c(iface: Interface) -> str:
    """C99 source of the skel: ``<iface>_skel_serve`` and one decoder per method. It includes
    ``<iface>_skel.h`` (:func:`generate_skel_header`), which must sit beside it."""
    up = iface.name.upper()
    out = [
        "/*",
        _banner(iface, " *").rstrip("\n"),
        f" * Skel of interface `{iface.name}` (see {iface.name}_skel.h and",
        " * pytvm/contrib/hexagon/idl.py).",
        " */",
        "#ifndef _POSIX_C_SOURCE",
        "#define _POSIX_C_SOURCE 200809L",
        "#endif",
        "",
        "#include <errno.h>",
        "#include <string.h>",
        "#include <unistd.h>",
        "",
        f'#include "{iface.name}_skel.h"',
        _skel_helpers(iface),
        "",
        "/* ------------------------------------------------------------------ methods */",
    ]
    for m in iface.methods:
        out += [""] + _skel_method(iface, m)
    out += [
        "",
        "/* ------------------------------------------------------------------ serve loop */",
        "",
        f"int32_t {iface.name}_skel_serve(int read_fd, int write_fd, uint8_t* buf, "
        "size_t buf_bytes) {",
        f"  if ((buf == NULL) || (buf_bytes < {up}_SKEL_MIN_BUFFER) || (read_fd < 0) ||",
        "      (write_fd < 0)) {",
        f"    return {up}_SKEL_EARG;",
        "  }",
        "  for (;;) {",
        "    uint8_t head[4];",
        "    uint32_t size;",
        "    uint32_t method;",
        "    skel_cursor c;",
        "    int rc = skel_read_exact(read_fd, head, sizeof(head), 1);",
        "    if (rc == 1) {",
        "      return 0; /* the board closed the pipe between requests */",
        "    }",
        "    if (rc != 0) {",
        f"      return {up}_SKEL_EREAD;",
        "    }",
        "    size = skel_get_u32(head);",
        "    if ((size_t)size > buf_bytes) {",
        "      /* drop it whole so the next request is found, then say why */",
        "      if (skel_discard(read_fd, buf, buf_bytes, (size_t)size) != 0) {",
        f"        return {up}_SKEL_EREAD;",
        "      }",
        f"      rc = skel_reply_status(write_fd, {up}_SKEL_ETOOBIG);",
        "    } else if (skel_read_exact(read_fd, buf, (size_t)size, 0) != 0) {",
        f"      return {up}_SKEL_EREAD;",
        "    } else if (size < 4u) {",
        f"      rc = skel_reply_status(write_fd, {up}_SKEL_EBADMSG);",
        "    } else {",
        "      method = skel_get_u32(buf);",
        "      c.p = buf + 4;",
        "      c.left = (size_t)size - 4u;",
        "      switch (method) {",
    ]
    for m in iface.methods:
        out += [
            f"        case {up}_METHOD_{m.name.upper()}:",
            f"          rc = skel_call_{m.name}(write_fd, &c, buf + size, "
            "buf_bytes - (size_t)size);",
            "          break;",
        ]
    out += [
        "        default:",
        f"          rc = skel_reply_status(write_fd, {up}_SKEL_EMETHOD);",
        "          break;",
        "      }",
        "    }",
        "    if (rc != 0) {",
        f"      return {up}_SKEL_EWRITE;",
        "    }",
        "  }",
        "}",
    ]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------- CLI


def _write(path: str, text: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(target.name + ".tmp")
    staged.write_text(text, encoding="utf-8")
    staged.replace(target)


def main(argv: list[str] | None = None) -> int:
    """``idl.py [--skel-c F] [--skel-h F] [--stub-py F] IDL``: generate the named outputs."""
    ap = argparse.ArgumentParser(prog="idl.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("idl", help="the IDL file")
    ap.add_argument("--skel-c", help="write the C skel here")
    ap.add_argument("--skel-h", help="write the skel header here")
    ap.add_argument("--stub-py", help="write the Python stub here")
    ns = ap.parse_args(argv)
    try:
        iface = parse_file(ns.idl)
    except (OSError, IDLError) as err:
        print(f"idl.py: {err}", file=sys.stderr)
        return 1
    writers = (  # the header first: build rules rely on the .c being the newer file
        (ns.skel_h, generate_skel_header),
        (ns.skel_c, generate_skel_c),
        (ns.stub_py, generate_stub_py),
    )
    for path, generate in writers:
        if path is not None:
            _write(path, generate(iface))
    return 0


if __name__ == "__main__":
    sys.exit(main())
