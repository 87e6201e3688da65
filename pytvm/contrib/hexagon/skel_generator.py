"""The C99 skel of an IDL interface: its header and source, filled in from the template files in
``templates/`` by a table of what each (direction, type) of parameter becomes in C.

The skel is a loop on two file descriptors that decodes each request, calls the
implementation (``<iface>_<method>``, defined by the device) and writes the reply, in the wire
format of :mod:`pytvm.contrib.hexagon.wire`. It uses no heap: one caller-given buffer holds the
request and the out-bytes, and every length from the wire is checked against it.

Templates use ``string.Template`` placeholders (``${name}``); ``skel_fragments.c.in`` holds
named pieces (a line ``@@ <name>`` starts one): the helper functions, emitted only when a
method needs them, and the parts of a method that depend on its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

from .idl_parser import Interface, Method, Param
from .wire import SKEL_MIN_BUFFER, SKEL_STATUSES

__all__ = [
    "C_PARAMS",
    "TEMPLATE_DIR",
    "CParam",
    "banner",
    "generate_skel_c",
    "generate_skel_header",
]

#: The template files (shipped in the package, listed in pyproject.toml's package-data).
TEMPLATE_DIR = Path(__file__).resolve().with_name("templates")


@dataclass(frozen=True, slots=True)
class CParam:
    """What one (direction, type) of parameter becomes in C. ``{n}`` is the IDL name and
    ``{a}`` the skel's local variable (``arg_<name>``).
    """

    #: The parameter(s) in the implementation's prototype.
    proto: str
    #: The skel's local declarations.
    decls: tuple[str, ...]
    #: The arguments the skel passes to the implementation.
    args: tuple[str, ...]
    #: In-parameters: the decoder call (0 on success) and the helper fragments it needs.
    take: str = ""
    helpers: tuple[str, ...] = ()
    #: Out scalars: the lines that append the value to the reply (``out + used``).
    put: tuple[str, ...] = ()
    #: Bytes in the reply before any out-bytes data.
    reply_bytes: int = 0


_U32_IN = CParam(
    proto="uint32_t {n}",
    decls=("uint32_t {a} = 0u;",),
    args=("{a}",),
    take="skel_take_u32(c, &{a})",
    helpers=("take_u32",),
)
_U32_OUT = CParam(
    proto="uint32_t* {n}",
    decls=("uint32_t {a} = 0u;",),
    args=("&{a}",),
    put=("skel_put_u32(out + used, {a});", "used += 4u;"),
    reply_bytes=4,
)

#: The table: (direction, type) -> its C form.
C_PARAMS: dict[tuple[str, str], CParam] = {
    ("in", "int32"): CParam(
        proto="int32_t {n}",
        decls=("int32_t {a} = 0;",),
        args=("{a}",),
        take="skel_take_i32(c, &{a})",
        helpers=("take_u32", "take_i32"),
    ),
    ("in", "uint32"): _U32_IN,
    ("in", "handle"): _U32_IN,
    ("in", "string"): CParam(
        proto="const char* {n}",
        decls=("const char* {a} = NULL;",),
        args=("{a}",),
        take="skel_take_string(c, &{a})",
        helpers=("take_u32", "take_bytes", "take_string"),
    ),
    ("in", "bytes"): CParam(
        proto="const uint8_t* {n}, uint32_t {n}_len",
        decls=("const uint8_t* {a} = NULL;", "uint32_t {a}_len = 0u;"),
        args=("{a}", "{a}_len"),
        take="skel_take_bytes(c, &{a}, &{a}_len)",
        helpers=("take_u32", "take_bytes"),
    ),
    ("out", "int32"): CParam(
        proto="int32_t* {n}",
        decls=("int32_t {a} = 0;",),
        args=("&{a}",),
        put=("skel_put_u32(out + used, skel_i32_to_u32({a}));", "used += 4u;"),
        reply_bytes=4,
    ),
    ("out", "uint32"): _U32_OUT,
    ("out", "handle"): _U32_OUT,
    ("out", "bytes"): CParam(  # written by fragment put_bytes, into the skel's spare buffer
        proto="uint8_t* {n}, uint32_t {n}_cap, uint32_t* {n}_len",
        decls=("uint8_t* {a} = space;", "uint32_t {a}_cap = 0u;", "uint32_t {a}_len = 0u;"),
        args=("{a}", "{a}_cap", "&{a}_len"),
        reply_bytes=4,
    ),
}

#: Helper fragments in the order they are emitted (a helper follows those it calls).
_HELPER_ORDER = ("take_u32", "take_i32", "take_bytes", "take_string")


@cache
def _template(name: str) -> Template:
    return Template((TEMPLATE_DIR / name).read_text(encoding="utf-8"))


@cache
def _fragments() -> dict[str, Template]:
    text = _template("skel_fragments.c.in").template
    out: dict[str, Template] = {}
    name = ""
    lines: list[str] = []
    for line in [*text.split("\n"), "@@"]:
        if line.startswith("@@"):
            if name:
                out[name] = Template("\n".join(lines).strip("\n"))
            name, lines = line[2:].strip(), []
        else:
            lines.append(line)
    return out


def _fragment(name: str, **values: str) -> str:
    return _fragments()[name].substitute(values)


def _c(p: Param) -> CParam:
    return C_PARAMS[(p.direction, p.type)]


def _fill(text: str, p: Param) -> str:
    return text.format(n=p.name, a=f"arg_{p.name}")


def banner(iface: Interface) -> str:
    """The first comment line of every generated file: where it came from."""
    return (
        f"Generated by pytvm.contrib.hexagon.idl from {iface.source} "
        f"(sha256 {iface.digest}). Do not edit."
    )


def _wrap_c(text: str, width: int = 100) -> str:
    """Break a call or prototype after commas so lines stay within ``width``."""
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


def _prototype(iface: Interface, m: Method) -> str:
    args = ", ".join(_fill(_c(p).proto, p) for p in m.params)
    return f"int32_t {iface.name}_{m.name}({args or 'void'})"


def generate_skel_header(iface: Interface) -> str:
    """C99 header of the skel: method ids, reserved statuses, the implementation's prototypes
    (which the implementation defines) and ``<iface>_skel_serve``.
    """
    up = iface.name.upper()
    ids = "".join(f"#define {up}_METHOD_{m.name.upper()} {m.method_id}u\n" for m in iface.methods)
    statuses = "".join(
        f"/* {why} */\n#define {up}_SKEL_{key} ({value})\n"
        for key, (value, why) in SKEL_STATUSES.items()
    )
    protos = "".join(
        f"/* {m.signature} */\n{_wrap_c(_prototype(iface, m))};\n\n" for m in iface.methods
    )
    return _template("skel.h.in").substitute(
        banner=banner(iface),
        name=iface.name,
        UP=up,
        guard=f"PYTVM_GENERATED_{up}_SKEL_H_",
        method_ids=ids,
        num_methods=str(len(iface.methods)),
        statuses=statuses,
        min_buffer=str(SKEL_MIN_BUFFER),
        prototypes=protos,
    )


def _helpers(iface: Interface) -> str:
    needed = {h for m in iface.methods for p in m.ins for h in _c(p).helpers}
    names = ["base", *(h for h in _HELPER_ORDER if h in needed), "io"]
    return "\n" + "\n\n".join(_fragment(n) for n in names)


def _method(iface: Interface, m: Method) -> str:
    up = iface.name.upper()
    out_bytes = [p for p in m.outs if p.type == "bytes"]
    fixed = 4 + sum(_c(p).reply_bytes for p in m.outs)  # the status, then each out's word
    lines = (_fill(line, p) for p in m.params for line in _c(p).decls)
    decls = "".join(f"  {line}\n" for line in lines)
    takes = [f"({_fill(_c(p).take, p)} != 0)" for p in m.ins] + ["(c->left != 0u)"]
    args = ", ".join(_fill(a, p) for p in m.params for a in _c(p).args)
    call = _wrap_c(f"  status = {iface.name}_{m.name}({args});") + "\n"
    space = _fragment("space_unused") + "\n"
    check = ""
    size = f"{fixed}u"
    if out_bytes:
        a = f"arg_{out_bytes[0].name}"
        space = _fragment("space_cap", fixed=str(fixed), a=a) + "\n"
        check = _fragment("impl_check", a=a, UP=up) + "\n"
        size = f"(uint32_t)({size} + {a}_len)"
    puts: list[str] = []
    flushed = False  # whether the last out went straight to the pipe (out bytes)
    for i, p in enumerate(m.outs):
        if p.type == "bytes":
            puts.append(_fragment("put_bytes", a=f"arg_{p.name}"))
            if i + 1 < len(m.outs):
                puts.append("  used = 0u;")
            flushed = True
        else:
            puts += [f"  {_fill(line, p)}" for line in _c(p).put]
            flushed = False
    puts.append("  return 0;" if flushed else "  return skel_write_all(write_fd, out, used);")
    return _template("skel_method.c.in").substitute(
        signature=m.signature,
        method=m.name,
        UP=up,
        decls=decls,
        out_bytes=str(4 + fixed),
        space=space,
        takes=" ||\n      ".join(takes),
        call=call,
        check=check,
        size=size,
        puts="\n".join(puts) + "\n",
    )


def generate_skel_c(iface: Interface) -> str:
    """C99 source of the skel: ``<iface>_skel_serve`` and one decoder per method. It includes
    ``<iface>_skel.h`` (:func:`generate_skel_header`), which must sit beside it.
    """
    up = iface.name.upper()
    cases = "".join(
        _fragment("case", UP=up, METHOD=m.name.upper(), method=m.name) + "\n" for m in iface.methods
    )
    return _template("skel.c.in").substitute(
        banner=banner(iface),
        name=iface.name,
        UP=up,
        helpers=_helpers(iface),
        methods="".join("\n" + _method(iface, m) for m in iface.methods),
        cases=cases,
    )
