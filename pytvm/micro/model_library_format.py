"""Model Library Format: a compiled model as one tar in TVM v0.18's layout (export).

``export_model_library_format(module, "model.tar")`` writes, for an AOT executor factory
(``relay.build(..., executor=Executor("aot"))``) or a graph executor factory built for a C
target (``style: "full-model"``)::

    metadata.json                          TVM's keys (version 7), see below
    codegen/host/src/<mod>_lib0.c ...      the module's C, in its order
    codegen/host/include/tvmgen_<mod>.h    the C interface (AOT with interface-api "c")
    parameters/<mod>.params                the constants, TVM's parameter-dict bytes
    src/relay.txt, src/<mod>.relay         the fused graph as printed
    executor-config/graph/<mod>.graph      the graph JSON (graph executor only)
    runtime/                               the C runtime's sources (AOT with runtime "crt")
    templates/                             crt_config.h.template, platform.c.template (the
                                           POSIX host's platform hooks), AOT with runtime "crt"

and for a kernel source module (``pytvm.build`` for a C target, TVM's ``style: "operator"``)
``metadata.json``, ``codegen/host/src/lib0.c ...`` and ``codegen/host/include/``.

``metadata.json`` of a full model holds ``version`` and ``modules.<mod>`` with TVM's
``model_name``, ``export_datetime``, ``target``, ``executors``, ``style``,
``external_dependencies`` and ``memory.functions``: ``main[0]`` with ``device``,
``workspace_size_bytes``, ``constants_size_bytes``, ``io_size_bytes`` and ``inputs`` /
``outputs`` as ``{name: {"size", "dtype", "shape"}}`` (``shape`` is pytvm's addition),
``operator_functions`` as ``[{"function_name", "workspace": [{"device",
"workspace_size_bytes"}]}]`` in call order, and for the graph executor ``memory.sids``.
pytvm's own figures, which TVM's readers ignore, sit under ``modules.<mod>.pytvm``:
``cflags``, ``executor`` and ``runtime`` (name and options), ``memory_plan`` (the workspace's
buffers: name, offset, nbytes, first_step, last_step, kind). ``read_model_library_format``
(:mod:`pytvm.micro.model_library_format_reader`) reads all of it back.

The C runtime's sources go under ``runtime/`` as a standalone tree: ``runtime/src/crt/``
(``pytvm/src/crt`` without its tests, with its Makefile) and ``runtime/include/`` (the
packed-function ABI headers of ``pytvm/include`` plus ``pytvm_crt/``), so
``-I runtime/include`` compiles every source.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import io
import json
import os
import re
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMTypeError, TVMValueError
from ..runtime.graph_executor.params import save_param_dict
from .model_library_format_reader import (
    METADATA_FILE,
    MLFModule,
    read_model_library_format,
)
from .standalone_crt import get_standalone_crt_dir, standalone_crt_files

__all__ = [
    "METADATA_FILE",
    "MLFModule",
    "UnsupportedInModelLibraryFormatError",
    "export_model_library_format",
    "read_model_library_format",
]

#: TVM v0.18's Model Library Format version.
_GENERATED_VERSION = 7
#: TVM's device type of the host CPU (kDLCPU).
_CPU = 1
STANDALONE_CRT_URL = "./runtime"
CRT_TEMPLATE_FILES_URL = "./templates"


class UnsupportedInModelLibraryFormatError(TVMTypeError):
    """Raised when ``export_model_library_format`` does not support the given module."""


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _tensor_meta(info: Any) -> dict[str, Any]:
    return {
        "size": int(info.nbytes),
        "dtype": str(info.dtype),
        "shape": [int(d) for d in info.shape],
    }


def _is_aot(mod: Any) -> bool:
    return type(mod).__name__ == "AOTExecutorFactoryModule"


def _is_graph(mod: Any) -> bool:
    return type(mod).__name__ in ("GraphExecutorFactoryModule", "GraphExecutorFactory")


def _is_source_module(mod: Any) -> bool:
    return isinstance(getattr(mod, "sources", None), dict) and getattr(mod, "type_key", "") == "c"


def _is_host_c_library(lib: Any) -> bool:
    """A library compiled for this machine from generated C that kept its source
    (``pytvm.build``/``relay.build`` for ``target='c ...'``).
    """
    return (
        getattr(lib, "type_key", "") == "library"
        and callable(getattr(lib, "get_source", None))
        and str(getattr(lib, "target", "")).split()[:1] == ["c"]
    )


def _name_of(x: Any, default: str) -> str:
    """``"aot"`` of an ``Executor`` / ``Runtime`` or of a plain string; ``default`` for None."""
    if x is None:
        return default
    return str(getattr(x, "name", x))


def _attrs_of(x: Any) -> dict[str, Any]:
    attrs = getattr(x, "attrs", None) or {}
    return {
        str(k): (v if isinstance(v, (bool, int, float, str)) else str(v))
        for k, v in dict(attrs).items()
    }


def _c_sources(lib: Any, prefix: str) -> list[tuple[str, str]]:
    """``(<prefix><i>.c, text)`` for each C file of ``lib`` in its order (TVM's MLF names)."""
    if _is_source_module(lib):
        texts = list(lib.sources.values())
    elif getattr(lib, "type_key", "") == "c" or getattr(lib, "format", "") == "c":
        texts = [lib.get_source()]
    elif _is_host_c_library(lib):  # compiled for this machine from C, which it kept
        texts = [lib.get_source()]
    else:
        raise UnsupportedInModelLibraryFormatError(
            f"Model Library Format holds C source, and this module's library is "
            f"{getattr(lib, 'type_key', type(lib).__name__)!r} code; build it for a C target "
            f"(target='c' or 'c -mcpu=cortex-m4')"
        )
    for name in getattr(lib, "imported_modules", []) or []:
        raise UnsupportedInModelLibraryFormatError(
            f"the library imports module {getattr(name, 'type_key', name)!r}, which Model "
            "Library Format cannot hold (only one C library per model)"
        )
    return [(f"{prefix}{i}.c", text) for i, text in enumerate(texts)]


def _sid_map(graph_json: str) -> list[dict[str, Any]]:
    """TVM's ``memory.sids``: one entry per storage id with its bytes and input binding."""
    graph = json.loads(graph_json)
    attrs = graph["attrs"]
    storage_ids, shapes, dltypes = (
        attrs["storage_id"][1],
        attrs["shape"][1],
        attrs["dltype"][1],
    )
    row = graph.get("node_row_ptr") or list(range(len(graph["nodes"]) + 1))
    bindings = {row[nid]: graph["nodes"][nid]["name"] for nid in graph["arg_nodes"]}
    seen: set[int] = set()
    out: list[dict[str, Any]] = []
    for entry, sid in enumerate(storage_ids):
        if sid in seen:
            continue
        seen.add(sid)
        match = re.fullmatch(r"[a-z]+(\d+)", dltypes[entry])
        if match is None:
            raise UnsupportedInModelLibraryFormatError(
                f"graph entry {entry} has dtype {dltypes[entry]!r} of no known width"
            )
        count = 1
        for d in shapes[entry]:
            count *= int(d)
        item: dict[str, Any] = {"storage_id": sid, "size_bytes": (count * int(match[1]) + 7) // 8}
        if entry in bindings:
            item["input_binding"] = bindings[entry]
        out.append(item)
    return out


def _aot_memory(mod: Any) -> dict[str, Any]:
    main = {
        "device": _CPU,
        "workspace_size_bytes": int(mod.workspace_bytes),
        "constants_size_bytes": int(mod.constant_bytes),
        "io_size_bytes": int(mod.io_bytes),
        "inputs": {t.name: _tensor_meta(t) for t in mod.inputs},
        "outputs": {t.name: _tensor_meta(t) for t in mod.outputs},
    }
    operators = [
        {
            "function_name": k.name,
            "workspace": [{"device": _CPU, "workspace_size_bytes": int(k.scratch_bytes)}],
        }
        for k in mod.kernels
    ]
    return {"functions": {"main": [main], "operator_functions": operators}}


def _graph_memory(mod: Any) -> dict[str, Any]:
    graph_json = mod.get_graph_json()
    graph = json.loads(graph_json)
    shapes, dltypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    params = set(mod.get_params())
    inputs: dict[str, Any] = {}
    for nid in graph["arg_nodes"]:
        name = graph["nodes"][nid]["name"]
        if name in params:
            continue
        entry = graph["node_row_ptr"][nid] if "node_row_ptr" in graph else nid
        inputs[name] = _graph_tensor(shapes[entry], dltypes[entry])
    outputs = {}
    for i, (nid, index, _) in enumerate(graph["heads"]):
        entry = graph["node_row_ptr"][nid] + index if "node_row_ptr" in graph else nid
        name = "output" if len(graph["heads"]) == 1 else f"output{i}"
        outputs[name] = _graph_tensor(shapes[entry], dltypes[entry])
    constants = sum(int(getattr(v, "nbytes", 0)) for v in mod.get_params().values())
    main = {
        "device": _CPU,
        "workspace_size_bytes": 0,
        "constants_size_bytes": constants,
        "io_size_bytes": sum(t["size"] for t in (*inputs.values(), *outputs.values())),
        "inputs": inputs,
        "outputs": outputs,
    }
    return {"sids": _sid_map(graph_json), "functions": {"main": [main], "operator_functions": []}}


def _graph_tensor(shape: Sequence[int], dltype: str) -> dict[str, Any]:
    bits = int(re.sub(r"^[a-z]+", "", dltype) or 0)
    count = 1
    for d in shape:
        count *= int(d)
    return {"size": (count * bits + 7) // 8, "dtype": dltype, "shape": [int(d) for d in shape]}


def _plan_json(mod: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": b.name,
            "offset": int(b.offset),
            "nbytes": int(b.nbytes),
            "first_step": int(b.first_step),
            "last_step": int(b.last_step),
            "kind": b.kind,
        }
        for b in getattr(mod, "memory_plan", [])
    ]


def _full_model_files(mod: Any) -> Iterator[tuple[str, bytes]]:
    """``(archive path, bytes)`` of one executor factory, metadata.json first."""
    aot = _is_aot(mod)
    name = str(getattr(mod, "mod_name", None) or getattr(mod, "libmod_name", "default"))
    runtime = _name_of(getattr(mod, "runtime", None), "crt" if aot else "cpp")
    lib = mod.lib if aot else mod.get_lib()
    sources = _c_sources(lib, f"{name}_lib")
    meta: dict[str, Any] = {
        "model_name": name,
        "export_datetime": _now(),
        "memory": _aot_memory(mod) if aot else _graph_memory(mod),
        "target": [str(mod.target) if aot else str(getattr(lib, "target", "c"))],
        "executors": ["aot" if aot else "graph"],
        "style": "full-model",
        "pytvm": {
            "cflags": list(getattr(lib, "cflags", [])),
            "function_names": list(getattr(lib, "function_names", [])),
            "executor": {
                "name": _name_of(getattr(mod, "executor", None), "aot" if aot else "graph"),
                "options": _attrs_of(getattr(mod, "executor", None)),
            },
            "runtime": {"name": runtime, "options": _attrs_of(getattr(mod, "runtime", None))},
            "memory_plan": _plan_json(mod) if aot else [],
            "c_names": {
                t.name: t.c_name
                for t in (*getattr(mod, "inputs", []), *getattr(mod, "outputs", []))
                if getattr(t, "c_name", "")
            },
        },
    }
    with_crt = aot and runtime == "crt"
    if with_crt:
        meta["external_dependencies"] = [
            {
                "short_name": "tvm_standalone_crt",
                "url": STANDALONE_CRT_URL,
                "url_type": "mlf_path",
                "version_spec": _version(),
            }
        ]
    metadata = {"version": _GENERATED_VERSION, "modules": {name: meta}}
    yield METADATA_FILE, json.dumps(metadata, indent=2, sort_keys=True).encode()
    for file_name, text in sources:
        yield f"codegen/host/src/{file_name}", text.encode()
    for file_name, text in (getattr(lib, "headers", None) or {}).items():
        yield f"codegen/host/include/{file_name}", text.encode()
    params = mod.params if aot else mod.get_params()
    yield f"parameters/{name}.params", save_param_dict(params)
    ir_text = str(getattr(mod, "ir_text", "") or getattr(mod, "ir_mod", "") or "")
    yield "src/relay.txt", ir_text.encode()
    yield f"src/{name}.relay", ir_text.encode()
    if not aot:
        yield f"executor-config/graph/{name}.graph", mod.get_executor_config().encode()
    if with_crt:
        for rel, path in standalone_crt_files():
            yield f"runtime/{rel}", path.read_bytes()
        config = Path(get_standalone_crt_dir()) / "include" / "pytvm_crt" / "crt_config.h"
        yield "templates/crt_config.h.template", config.read_bytes()
        platform = Path(get_standalone_crt_dir()) / "platform" / "posix_platform.c"
        yield "templates/platform.c.template", platform.read_bytes()


def _model_name(mod: Any) -> str:
    return str(getattr(mod, "mod_name", None) or getattr(mod, "libmod_name", "default"))


def _several_models_files(modules: Sequence[Any]) -> Iterator[tuple[str, bytes]]:
    """One archive of several executor factories (TVM's ``export_model_library_format([f1,
    f2])``): ``metadata.json`` lists every model under ``modules``; each model's C, header,
    parameters and ``src/<mod>.relay`` keep their ``<mod>`` names; the C runtime is stored once.
    Their symbols are prefixed ``tvmgen_<mod>_``, so the models link into one program.
    """
    kinds = [type(m).__name__ for m in modules if not (_is_aot(m) or _is_graph(m))]
    if kinds:
        raise UnsupportedInModelLibraryFormatError(
            f"several modules in one Model Library Format archive must all be executor "
            f"factories (relay.build); got {kinds}: export kernel modules one per archive"
        )
    names = [_model_name(m) for m in modules]
    if len(set(names)) != len(names):
        raise UnsupportedInModelLibraryFormatError(
            f"Multiple modules should have unique names: {names}; an archive holds one module "
            "per name: build them with distinct mod_name= (relay.build(..., mod_name='mod1'))"
        )
    models: dict[str, Any] = {}
    payload: dict[str, bytes] = {}
    for mod in modules:
        for path, data in _full_model_files(mod):
            if path == METADATA_FILE:
                models.update(json.loads(data)["modules"])
            elif path == "src/relay.txt":
                continue  # one per archive in TVM's layout; each model keeps src/<mod>.relay
            elif payload.setdefault(path, data) != data:
                raise UnsupportedInModelLibraryFormatError(
                    f"models {names} disagree on {path!r} (built with different C runtimes?)"
                )
    metadata = {"version": _GENERATED_VERSION, "modules": models}
    yield METADATA_FILE, json.dumps(metadata, indent=2, sort_keys=True).encode()
    yield from payload.items()


def _operator_files(mod: Any) -> Iterator[tuple[str, bytes]]:
    """``(archive path, bytes)`` of a kernel source module (TVM's ``style: "operator"``)."""
    name = str(getattr(mod, "name", "") or "default")
    functions = list(getattr(mod, "function_names", []) or [])
    meta = {
        "version": _GENERATED_VERSION,
        "model_name": name,
        "export_datetime": _now(),
        "memory": {f: [] for f in functions},
        "target": [str(mod.target)],
        "executors": [],
        "style": "operator",
        "pytvm": {"cflags": list(getattr(mod, "cflags", [])), "function_names": functions},
    }
    yield METADATA_FILE, json.dumps(meta, indent=2, sort_keys=True).encode()
    for file_name, text in _c_sources(mod, "lib"):
        yield f"codegen/host/src/{file_name}", text.encode()
    for file_name, text in (getattr(mod, "headers", None) or {}).items():
        yield f"codegen/host/include/{file_name}", text.encode()


def _version() -> str:
    """The installed pytvm's version (the package root, a higher layer, holds the same)."""
    return importlib.metadata.version("pytvm")


def export_model_library_format(mods: Any, file_name: str | os.PathLike[str]) -> Path:
    """Export a build artifact in Model Library Format (TVM's name and layout).

    Parameters
    ----------
    mods : AOTExecutorFactoryModule, GraphExecutorFactoryModule (built for a C target), or a
        kernel ``SourceModule`` (``pytvm.build`` for a C target); or a list of executor
        factories with distinct ``mod_name`` (one archive, every model under ``modules``).
    file_name : str or PathLike
        The ``.tar`` to write.

    Returns
    -------
    Path
        ``file_name``.

    Examples
    --------
    >>> import pytvm as tvm  # doctest: +SKIP
    >>> factory = tvm.relay.build(mod, target="c -mcpu=cortex-m4",  # doctest: +SKIP
    ...     executor=tvm.relay.backend.Executor("aot", {"interface-api": "c"}), params=params)
    >>> tvm.micro.export_model_library_format(factory, "model.tar")  # doctest: +SKIP
    PosixPath('model.tar')
    """
    modules = list(mods) if isinstance(mods, (list, tuple)) else [mods]
    if not modules:
        raise UnsupportedInModelLibraryFormatError("export_model_library_format: no module given")
    mod = modules[0]
    if len(modules) > 1:
        files = _several_models_files(modules)
    elif _is_aot(mod) or _is_graph(mod):
        files = _full_model_files(mod)
    elif _is_source_module(mod):
        files = _operator_files(mod)
    else:
        raise UnsupportedInModelLibraryFormatError(
            f"don't know how to export a {type(mod).__name__} in Model Library Format; give "
            "the result of relay.build / pytvm.graph.build_aot (executor factory) or of "
            "pytvm.build for a C target (source module)"
        )
    path = Path(file_name)
    if path.suffix != ".tar":
        raise TVMValueError(f"Model Library Format is a .tar archive; got file name {str(path)!r}")
    _write_tar(path, files)
    return path


def _write_tar(path: Path, files: Iterator[tuple[str, bytes]]) -> None:
    """Write ``files`` into an uncompressed tar at ``path`` (owner root, as TVM's ``reset``)."""
    mtime = int(datetime.datetime.now().timestamp())
    tmp = path.with_name(path.name + ".part")
    with tarfile.open(tmp, "w") as tar:
        made: set[str] = set()
        for name, data in files:
            parts = name.split("/")
            for depth in range(1, len(parts)):
                folder = "/".join(parts[:depth])
                if folder not in made:
                    made.add(folder)
                    tar.addfile(_info(f"./{folder}", 0, mtime, tarfile.DIRTYPE))
            tar.addfile(_info(f"./{name}", len(data), mtime, tarfile.REGTYPE), io.BytesIO(data))
    tmp.replace(path)


def _info(name: str, size: int, mtime: int, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.type = size, mtime, kind
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
