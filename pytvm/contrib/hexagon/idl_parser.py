"""The accelerator IDL: its parsed form (frozen dataclasses) and the parser, with ``file:line:``
errors.

Syntax (also at the top of ``pytvm/contrib/hexagon/hexagon_rpc.idl``)::

    file      := "interface" NAME "{" method+ "}" [";"]
    method    := "int32" NAME "(" [param ("," param)*] ")" ";"
    param     := ("in" | "out") TYPE NAME
    TYPE      := "int32" | "uint32" | "handle" | "string" | "bytes"
    NAME      := [a-z][a-z0-9_]*   (not ending in "_t"; no C or Python keyword, no IDL word)

Names are checked here against everything the generated C and the stub need: C and Python
keywords, the ``skel`` prefix of the skel's own functions, and the extra C names an ``in
bytes`` (``<name>_len``) or ``out bytes`` (``<name>_len``, ``<name>_cap``) parameter takes.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from ...ffi.errors import TVMKeyError, TVMValueError
from .wire import DIRECTIONS, TYPES

__all__ = ["IDLError", "Interface", "Method", "Param", "c_param_names", "parse", "parse_file"]

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while errno".split()
)
_IDL_WORDS = frozenset({"interface", *DIRECTIONS, *TYPES})
_PY_RESERVED = frozenset({*keyword.kwlist, *keyword.softkwlist, "self"})


class IDLError(TVMValueError):
    """A problem in an IDL file, reported as ``<source>:<line>: <message>``."""

    def __init__(self, message: str, line: int, source: str = "<idl>") -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.message = message
        self.line = line
        self.source = source


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: ``direction`` is ``"in"`` or ``"out"``, ``type`` one of ``wire.TYPES``."""

    name: str
    direction: str
    type: str
    line: int

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS or self.type not in TYPES:
            raise TVMValueError(
                f"parameter {self.name!r}: direction {self.direction!r} and type {self.type!r} "
                f"must be one of {DIRECTIONS} and {TYPES}"
            )


@dataclass(frozen=True, slots=True)
class Method:
    """One call; ``method_id`` is its index in the interface. It returns an int32 status."""

    name: str
    method_id: int
    params: tuple[Param, ...]
    line: int

    @property
    def ins(self) -> tuple[Param, ...]:
        """The in-parameters, in declaration order."""
        return tuple(p for p in self.params if p.direction == "in")

    @property
    def outs(self) -> tuple[Param, ...]:
        """The out-parameters, in declaration order."""
        return tuple(p for p in self.params if p.direction == "out")

    @property
    def signature(self) -> str:
        """The declaration as written in IDL: ``int32 name(in T a, out T b)``."""
        params = ", ".join(f"{p.direction} {p.type} {p.name}" for p in self.params)
        return f"int32 {self.name}({params})"


@dataclass(frozen=True, slots=True)
class Interface:
    """A parsed IDL file. ``source`` is the file name and ``digest`` a hash of its text."""

    name: str
    methods: tuple[Method, ...]
    source: str
    digest: str

    def method(self, name: str) -> Method:
        """The method called ``name``; ``KeyError`` if the interface has none."""
        for m in self.methods:
            if m.name == name:
                return m
        known = ", ".join(m.name for m in self.methods)
        raise TVMKeyError(
            f"interface {self.name!r} ({self.source}) has no method {name!r}: {known}"
        )


def c_param_names(p: Param) -> list[str]:
    """The C names parameter ``p`` takes in the skel and the implementation's prototype."""
    if p.type == "bytes":
        return [p.name, f"{p.name}_len"] + ([f"{p.name}_cap"] if p.direction == "out" else [])
    return [p.name]


_TOKEN = re.compile(
    r"(?P<space>[ \t\r\f\v]+)|(?P<newline>\n)|(?P<comment>(?:#|//)[^\n]*)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[{}(),;])"
)


@dataclass(frozen=True, slots=True)
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


def _found(tok: _Token) -> str:
    return repr(tok.text) if tok.text else "end of file"


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
            raise self.error(f"expected {text!r}{what}, found {_found(tok)}")
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
            raise self.error(f"a method starts with its return type 'int32' (found {_found(ret)})")
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
            raise self.error(f"expected 'in' or 'out' before a parameter, found {_found(d)}")
        self.take()
        t = self.peek()
        if t.text not in TYPES:
            raise self.error(f"unknown parameter type {_found(t)} (types: {', '.join(TYPES)})")
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
            for c_name in c_param_names(p):
                if c_name in c_names:
                    raise self.error(
                        f"method {method!r}: parameter {p.name!r} needs the C name {c_name!r}, "
                        f"already used by {c_names[c_name]!r}",
                        p.line,
                    )
                c_names[c_name] = p.name


def parse(text: str, source: str = "<idl>") -> Interface:
    """Parse IDL ``text``; ``source`` names it in errors (``<source>:<line>: ...``).

    Examples
    --------
    >>> iface = parse("interface k { int32 f(in bytes b, out int32 n); };", "k.idl")
    >>> [(m.name, m.method_id, [p.name for p in m.outs]) for m in iface.methods]
    [('f', 0, ['n'])]
    """
    name, methods = _Parser(text, source).interface()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Interface(name, tuple(methods), Path(source).name, digest)


def parse_file(path: str | Path) -> Interface:
    """Parse the IDL file at ``path``."""
    p = Path(path)
    return parse(p.read_text(encoding="utf-8"), str(p))
