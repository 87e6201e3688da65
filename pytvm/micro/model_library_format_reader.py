"""Reading a Model Library Format tar back into the attributes of the factory that wrote it.

``read_model_library_format("model.tar")`` returns an :class:`MLFModule` with what projects,
the memory report and the CLI read from an AOT factory: ``mod_name``, ``target``, ``lib`` (a
``SourceModule`` of ``codegen/host``), ``inputs``/``outputs`` (``TensorInfo``),
``workspace_bytes``, ``constant_bytes``, ``io_bytes``, ``memory_plan``, ``kernels``,
``params``, ``executor``/``runtime`` (name and options) and ``ir_text``. The archive is read in
memory, never unpacked: a member that is a link or a device, or whose name is absolute or
climbs out with ``..``, is refused before anything is read, as is an archive with no
``metadata.json`` of a known version.
"""

from __future__ import annotations

import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from ..ffi.errors import TVMValueError
from ..runtime.graph_executor.params import load_param_dict

__all__ = ["METADATA_FILE", "MLFModule", "read_model_library_format"]

METADATA_FILE = "metadata.json"
#: Versions of TVM's Model Library Format this reader understands.
_VERSIONS = (5, 6, 7)


@dataclass(frozen=True)
class MLFModule:
    """A model read from Model Library Format: the factory attributes projects build from."""

    path: str
    mod_name: str
    style: str
    target: Any
    lib: Any
    executor: dict[str, Any]
    runtime: dict[str, Any]
    inputs: list[Any]
    outputs: list[Any]
    workspace_bytes: int
    constant_bytes: int
    io_bytes: int
    memory_plan: list[Any]
    kernels: list[Any]
    params: dict[str, np.ndarray]
    ir_text: str
    metadata: dict[str, Any] = field(repr=False)
    graph_json: str | None = field(default=None, repr=False)

    def get_params(self) -> dict[str, np.ndarray]:
        """The constants, as the factory's ``get_params()``."""
        return dict(self.params)

    def get_lib(self) -> Any:
        """The model's C, a ``SourceModule``."""
        return self.lib

    def get_executor_config(self) -> str | None:
        """The graph JSON of a graph-executor model, else None (as TVM's AOT factory)."""
        return self.graph_json


def _safe_name(path: str, member: tarfile.TarInfo) -> str:
    name = PurePosixPath(member.name)
    parts = [p for p in name.parts if p not in (".", "")]
    if name.is_absolute() or ".." in parts:
        raise TVMValueError(
            f"{path}: member {member.name!r} would be written outside the archive's folder; "
            "refusing it (not a Model Library Format archive pytvm or TVM wrote)"
        )
    if not (member.isfile() or member.isdir()):
        raise TVMValueError(
            f"{path}: member {member.name!r} is a link or a special file; Model Library Format "
            "holds only files and folders"
        )
    return "/".join(parts)


def _members(path: str) -> dict[str, bytes]:
    """The regular files of the tar at ``path`` by normalised name, every member checked first."""
    try:
        tar = tarfile.open(path, "r:*")
    except FileNotFoundError:
        raise TVMValueError(f"no Model Library Format archive at {path!r}") from None
    except (tarfile.TarError, OSError) as err:
        raise TVMValueError(
            f"{path} is not a Model Library Format archive (a tar): {err}"
        ) from None
    with tar:
        members = tar.getmembers()
        names = [(_safe_name(path, m), m) for m in members]
        files: dict[str, bytes] = {}
        for name, member in names:
            if member.isfile():
                f = tar.extractfile(member)
                assert f is not None  # a regular file always has data
                files[name] = f.read()
    return files


def _metadata(path: str, files: dict[str, bytes]) -> dict[str, Any]:
    if METADATA_FILE not in files:
        raise TVMValueError(
            f"{path} is a tar but not Model Library Format: it has no {METADATA_FILE} (write one "
            "with pytvm.micro.export_model_library_format)"
        )
    try:
        meta = json.loads(files[METADATA_FILE])
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TVMValueError(f"{path}: {METADATA_FILE} is not JSON: {err}") from None
    if not isinstance(meta, dict) or meta.get("version") not in _VERSIONS:
        version = meta.get("version") if isinstance(meta, dict) else None
        raise TVMValueError(
            f"{path}: {METADATA_FILE} has version {version!r}; this reader takes Model Library "
            f"Format versions {list(_VERSIONS)}"
        )
    return meta


def _tensors(section: dict[str, Any], path: str, c_names: dict[str, str]) -> list[Any]:
    from ..graph.aot.factory import TensorInfo

    out = []
    for name, info in section.items():
        if "shape" not in info:
            raise TVMValueError(
                f"{path}: tensor {name!r} has no shape in {METADATA_FILE} (TVM's archives lack "
                "it; re-export the model with pytvm)"
            )
        out.append(
            TensorInfo(
                name=name,
                shape=tuple(int(d) for d in info["shape"]),
                dtype=str(info["dtype"]),
                nbytes=int(info["size"]),
                c_name=str(c_names.get(name, "")),
            )
        )
    return out


def _source_module(files: dict[str, bytes], target: str, own: dict[str, Any]) -> Any:
    from ..runtime.source_module import SourceModule

    def texts(folder: str) -> dict[str, str]:
        prefix = f"codegen/host/{folder}/"
        return {
            name[len(prefix) :]: data.decode()
            for name, data in sorted(files.items(), key=lambda kv: _source_order(kv[0]))
            if name.startswith(prefix)
        }

    sources = texts("src")
    if not sources:
        raise TVMValueError("the archive has no C source under codegen/host/src/")
    return SourceModule(
        sources=sources,
        target=target,
        function_names=[str(f) for f in own.get("function_names", [])],
        headers=texts("include"),
        cflags=[str(f) for f in own.get("cflags", [])],
    )


def _source_order(name: str) -> tuple[str, int]:
    """``default_lib10.c`` after ``default_lib2.c``."""
    stem = PurePosixPath(name).stem
    digits = len(stem) - len(stem.rstrip("0123456789"))
    return (stem[: len(stem) - digits], int(stem[len(stem) - digits :] or -1))


def read_model_library_format(path: str | Path) -> MLFModule:
    """Read the Model Library Format tar at ``path`` (one full model, as
    :func:`~pytvm.micro.export_model_library_format` writes).

    Examples
    --------
    >>> mlf = pytvm.micro.model_library_format.read_model_library_format("m.tar")  # doctest: +SKIP
    >>> mlf.mod_name, mlf.workspace_bytes  # doctest: +SKIP
    ('default', 4352)
    """
    from ..graph.aot.factory import KernelInfo, PlannedBuffer
    from ..target import Target

    where = str(path)
    files = _members(where)
    meta = _metadata(where, files)
    if meta.get("style") == "operator" or "modules" not in meta:
        raise TVMValueError(
            f"{where} holds operators (style {meta.get('style')!r}), not a model; "
            "read_model_library_format reads full-model archives"
        )
    modules = meta["modules"]
    if len(modules) != 1:
        raise TVMValueError(f"{where} holds {len(modules)} models; one per archive is read")
    mod_name, info = next(iter(modules.items()))
    try:
        main = info["memory"]["functions"]["main"][0]
        own = info.get("pytvm", {})
        target_text = str(info["target"][0])
        params_bytes = files[f"parameters/{mod_name}.params"]
    except (KeyError, IndexError, TypeError) as err:
        raise TVMValueError(f"{where}: {METADATA_FILE} or the archive lacks {err}") from None
    kernels = [
        KernelInfo(
            name=str(f["function_name"]),
            scratch_bytes=max((int(w["workspace_size_bytes"]) for w in f["workspace"]), default=0),
        )
        for f in info["memory"]["functions"].get("operator_functions", [])
    ]
    plan = [PlannedBuffer(**b) for b in own.get("memory_plan", [])]
    params = {k: v.numpy() for k, v in load_param_dict(params_bytes).items()}
    graph = files.get(f"executor-config/graph/{mod_name}.graph")
    return MLFModule(
        path=where,
        mod_name=mod_name,
        style=str(info.get("style", "full-model")),
        target=Target(target_text),
        lib=_source_module(files, target_text, own),
        executor=dict(own.get("executor", {"name": info["executors"][0], "options": {}})),
        runtime=dict(own.get("runtime", {"name": "crt", "options": {}})),
        inputs=_tensors(main["inputs"], where, own.get("c_names", {})),
        outputs=_tensors(main["outputs"], where, own.get("c_names", {})),
        workspace_bytes=int(main["workspace_size_bytes"]),
        constant_bytes=int(main["constants_size_bytes"]),
        io_bytes=int(main["io_size_bytes"]),
        memory_plan=plan,
        kernels=kernels,
        params=params,
        ir_text=files.get("src/relay.txt", b"").decode(),
        metadata=meta,
        graph_json=graph.decode() if graph is not None else None,
    )
