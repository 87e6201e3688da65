"""One-file artifacts: a graph's JSON and parameters carried as data symbols in its kernel library.

The compiler appends :func:`embedded_graph_c_source` to the kernels' C source and builds one
shared object. Its symbols (default visibility, read-only data):

- ``__pytvm_graph_format``: ``uint32_t``, the layout version (1);
- ``__pytvm_graph_json`` / ``__pytvm_graph_json_size``: the graph JSON (UTF-8, no NUL) and its
  byte count (``uint64_t``);
- ``__pytvm_graph_params`` / ``__pytvm_graph_params_size``: the parameters in
  ``save_param_dict``'s format and their byte count;
- ``__pytvm_graph_module_name``: the factory function's name (``"default"``), NUL-terminated.

``load_module("net.so")`` sees ``__pytvm_graph_json`` and returns a ``GraphExecutorFactory``
whose library (``get_lib()``, its import) is the shared object itself.

Examples
--------
>>> src = embedded_graph_c_source('{"nodes": []}', bytes([0, 1]))
>>> "__pytvm_graph_params_size = 2" in src
True
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path

from ...ffi.errors import TVMValueError
from ..module import GRAPH_ARTIFACT_SYMBOL, LibraryModule

__all__ = [
    "FORMAT_SYMBOL",
    "FORMAT_VERSION",
    "GRAPH_JSON_SIZE_SYMBOL",
    "GRAPH_JSON_SYMBOL",
    "MODULE_NAME_SYMBOL",
    "PARAMS_SIZE_SYMBOL",
    "PARAMS_SYMBOL",
    "EmbeddedGraph",
    "embedded_graph_c_source",
    "read_embedded_graph",
]

FORMAT_SYMBOL = "__pytvm_graph_format"
FORMAT_VERSION = 1
GRAPH_JSON_SYMBOL = GRAPH_ARTIFACT_SYMBOL
GRAPH_JSON_SIZE_SYMBOL = "__pytvm_graph_json_size"
PARAMS_SYMBOL = "__pytvm_graph_params"
PARAMS_SIZE_SYMBOL = "__pytvm_graph_params_size"
MODULE_NAME_SYMBOL = "__pytvm_graph_module_name"

_EXPORT = '__attribute__((visibility("default"), used))'
_PLAIN = frozenset(range(0x20, 0x7F)) - {ord('"'), ord("\\"), ord("?")}  # '?': no trigraphs
# Three-digit octal escapes never swallow the character after them (hex escapes would).
_ESCAPE = [chr(b) if b in _PLAIN else f"\\{b:03o}" for b in range(256)]
_LINE_BYTES = 96


def _c_bytes(data: bytes) -> str:
    """``data`` as adjacent C string literals, one per source line."""
    if not data:
        return '""'
    escape = _ESCAPE.__getitem__
    return "\n".join(
        '"' + "".join(map(escape, data[i : i + _LINE_BYTES])) + '"'
        for i in range(0, len(data), _LINE_BYTES)
    )


def _blob(symbol: str, size_symbol: str, data: bytes) -> str:
    # An array sized exactly to the literal keeps no terminating NUL (C11 6.7.9p14).
    return (
        f"{_EXPORT} const uint64_t {size_symbol} = {len(data)};\n"
        f"{_EXPORT} const unsigned char {symbol}[{max(len(data), 1)}] =\n{_c_bytes(data)};\n"
    )


def _incbin(symbol: str, size_symbol: str, path: Path) -> str:
    """The file at ``path`` as data the assembler copies in (``.incbin``): no C literal to
    parse, and the data is never held in memory here.
    """
    size = path.stat().st_size
    where = str(path.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    asm = (
        f".section .rodata\n.globl {symbol}\n.type {symbol}, @object\n.balign 64\n{symbol}:\n"
        f'.incbin "{where}"\n.size {symbol}, {size}\n.previous\n'
    )
    return (
        f"{_EXPORT} const uint64_t {size_symbol} = {size};\n"
        f"__asm__({_c_bytes(asm.encode('utf-8'))});\n"
    )


def embedded_graph_c_source(
    graph_json: str,
    params: bytes | bytearray | os.PathLike[str],
    module_name: str = "default",
    blob_dir: str | os.PathLike[str] | None = None,
) -> str:
    """C source defining the artifact symbols for ``graph_json``, ``params`` (bytes in
    ``save_param_dict``'s format, or the path of a file holding them) and the factory name
    ``module_name``.

    With ``blob_dir`` (ELF targets: Linux and the like), the JSON and parameters are files
    there that the assembler includes (``.incbin``), which compiles large parameters in a
    fraction of the time; the files must stay until the source is compiled. Otherwise they are
    C string literals.
    """
    if not isinstance(graph_json, str) or not isinstance(params, (bytes, bytearray, os.PathLike)):
        raise TVMValueError(
            "embedded_graph_c_source: expects the graph JSON str and params bytes or file path"
        )
    if not module_name or "\0" in module_name:
        raise TVMValueError(f"embedded_graph_c_source: bad module name {module_name!r}")
    name = module_name.encode("utf-8")
    graph = graph_json.encode("utf-8")
    if blob_dir is None:
        blob = Path(params).read_bytes() if isinstance(params, os.PathLike) else bytes(params)
        data = _blob(GRAPH_JSON_SYMBOL, GRAPH_JSON_SIZE_SYMBOL, graph) + _blob(
            PARAMS_SYMBOL, PARAMS_SIZE_SYMBOL, blob
        )
    else:
        folder = Path(blob_dir)
        graph_file = folder / "graph.json"
        graph_file.write_bytes(graph)
        if isinstance(params, os.PathLike):
            params_file = Path(params)
        else:
            params_file = folder / "graph.params"
            params_file.write_bytes(params)
        data = _incbin(GRAPH_JSON_SYMBOL, GRAPH_JSON_SIZE_SYMBOL, graph_file) + _incbin(
            PARAMS_SYMBOL, PARAMS_SIZE_SYMBOL, params_file
        )
    return (
        "/* A graph's JSON and parameters, read by pytvm.runtime.load_module. */\n"
        "#include <stdint.h>\n"
        f"{_EXPORT} const uint32_t {FORMAT_SYMBOL} = {FORMAT_VERSION};\n"
        f"{_EXPORT} const char {MODULE_NAME_SYMBOL}[{len(name) + 1}] = {_c_bytes(name)};\n" + data
    )


@dataclass(frozen=True)
class EmbeddedGraph:
    """What a one-file artifact carries besides its kernels."""

    graph_json: str
    #: The parameters' bytes: a read-only view of the loaded library's memory (not a copy).
    params: memoryview
    module_name: str


def _symbol(lib: LibraryModule, name: str) -> int:
    address = lib.symbol_address(name)
    if not address:
        raise TVMValueError(
            f"load_module: {lib.path.name} has {GRAPH_JSON_SYMBOL} but no {name}; it is not a "
            "complete graph artifact (rebuild it with export_library)"
        )
    return address


def read_embedded_graph(lib: LibraryModule) -> EmbeddedGraph | None:
    """The graph a shared object carries, or None when it carries none."""
    if not lib.symbol_address(GRAPH_JSON_SYMBOL):
        return None
    version = ctypes.c_uint32.from_address(_symbol(lib, FORMAT_SYMBOL)).value
    if version != FORMAT_VERSION:
        raise TVMValueError(
            f"load_module: {lib.path.name} carries a graph in layout version {version}; this "
            f"pytvm reads version {FORMAT_VERSION}"
        )
    json_size = ctypes.c_uint64.from_address(_symbol(lib, GRAPH_JSON_SIZE_SYMBOL)).value
    params_size = ctypes.c_uint64.from_address(_symbol(lib, PARAMS_SIZE_SYMBOL)).value
    graph = ctypes.string_at(_symbol(lib, GRAPH_JSON_SYMBOL), json_size)
    data = (ctypes.c_char * params_size).from_address(_symbol(lib, PARAMS_SYMBOL))
    data.library = lib  # type: ignore[attr-defined]  # views keep the library loaded
    params = memoryview(data).toreadonly()
    name = ctypes.string_at(_symbol(lib, MODULE_NAME_SYMBOL))
    try:
        return EmbeddedGraph(graph.decode("utf-8"), params, name.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise TVMValueError(
            f"load_module: {lib.path.name}: graph text is not UTF-8: {err}"
        ) from None
