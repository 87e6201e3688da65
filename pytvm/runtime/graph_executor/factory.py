"""``GraphExecutorFactory``: a built graph (JSON, parameters, kernel library) that makes executors.

What the graph compiler returns and what ``load_module`` gives back for a one-file artifact.
Its packed functions are TVM's: ``<module_name>(dev, ...)`` (``"default"``) creates an executor
with the parameters set, ``get_graph_json``, ``get_graph_params`` (here: the parameters as
``save_param_dict`` bytes, so they cross RPC), ``debug_create(name, dev, ...)`` and
``remove_params``. From Python it also has TVM's ``GraphExecutorFactoryModule`` methods:
``get_graph_json()``, ``get_params()``, ``get_lib()``, ``export_library(path)``.

``export_library`` writes one shared object: the library's C source (``lib.get_source()``)
compiled together with :func:`~.artifact.embedded_graph_c_source`, by the system C compiler.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ...ffi import PackedFunc, cpu
from ...ffi.dtype import dtype as make_dtype
from ...ffi.errors import TVMTypeError, TVMValueError
from ...ffi.function import PyFunction
from ...ffi.libinfo import compile_shared
from ...ffi.registry import get_global_func, register_func
from ...support.cc import create_shared
from ...support.tar import tar
from ..module import LibraryModule, Module
from ..ndarray import NDArray, array
from .artifact import embedded_graph_c_source, read_embedded_graph
from .executor import GraphExecutor, devices_from_args
from .params import load_param_dict, save_param_dict, save_param_dict_to_file

__all__ = ["GraphExecutorFactory", "GraphExecutorFactoryModule"]

#: ``export_library``'s compiler flags when the library names no ``-mcpu``.
_EXPORT_FLAGS = ("-std=gnu11", "-O3", "-fno-math-errno")


def _export_flags(lib: Module) -> list[str]:
    """Flags matching how the kernels were built: ``-mcpu`` from the library's target string,
    else the host CPU (``-march=native``), as ``pytvm.build`` compiles them.
    """
    target = str(getattr(lib, "target", ""))
    match = re.search(r"-mcpu=(\S+)", target)
    mcpu = match.group(1) if match else "native"
    return [*_EXPORT_FLAGS, "-march=native" if mcpu == "native" else f"-mcpu={mcpu}"]


def _shared(value: Any) -> NDArray:
    """An NDArray of ``value``: a read-only numpy array (C-contiguous, native byte order) is
    shared, as the graph compiler hands over a model's weights (no copy); anything else, a
    writable array the caller may change later among it, is copied.
    """
    host = value if isinstance(value, np.ndarray) else np.asarray(value)
    shareable = host.flags.c_contiguous and not host.flags.writeable
    if shareable and host.dtype.isnative and host.dtype.kind in "biuf":
        view = NDArray(
            host.ctypes.data if host.size else 0,
            host.shape,
            make_dtype(host.dtype),
            cpu(0),
            owner=host,
        )
        view._read_only = True
        return view
    return array(host)


class GraphExecutorFactory(Module):
    """A built graph: ``factory["default"](dev)`` is an executor module with the parameters set.

    Parameters
    ----------
    graph_json : str
        The graph in TVM's JSON schema.
    params : mapping of str to NDArray or numpy array
        Values of the graph's parameter inputs.
    lib : Module
        The kernels (imported by the factory; ``get_lib()``).
    module_name : str
        Name of the function that creates executors (TVM's ``"default"``).
    """

    kind: ClassVar[str] = "GraphExecutorFactory"

    def __init__(
        self,
        graph_json: str,
        params: Mapping[str, Any] | None,
        lib: Module,
        module_name: str = "default",
        artifact_path: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(graph_json, str):
            raise TVMTypeError(f"graph factory: graph_json must be str, got {type(graph_json)}")
        if not isinstance(lib, Module):
            raise TVMTypeError(f"graph factory: lib must be a Module, got {type(lib).__name__}")
        self.graph_json = graph_json
        self.params: dict[str, NDArray] = {
            name: value if isinstance(value, NDArray) else _shared(value)
            for name, value in (params or {}).items()
        }
        self.lib = lib
        self.libmod_name = module_name
        #: The one-file artifact this factory was loaded from (``export_library`` copies it).
        self.artifact_path = Path(artifact_path) if artifact_path is not None else None
        self.import_module(lib)

    def _get_own_function(self, name: str) -> PackedFunc | None:
        # Made per lookup, so the factory holds no function that holds it (no reference cycle).
        methods: dict[str, Callable[..., Any]] = {
            self.libmod_name: self._create,
            "get_graph_json": self.get_graph_json,
            "get_graph_params": self._graph_params,
            "get_graph_param_names": self._graph_param_names,
            "debug_create": self._debug_create,
            "remove_params": self._remove_params,
        }
        method = methods.get(name)
        return PyFunction(method, name) if method is not None else None

    def _graph_params(self) -> bytes:
        return save_param_dict(self.params)

    def _graph_param_names(self) -> str:
        """The parameters' names as a JSON list (names only: nothing large crosses RPC)."""
        return json.dumps(sorted(self.params))

    @property
    def type_key(self) -> str:
        """``"GraphExecutorFactory"``."""
        return self.kind

    def _create(self, *devices: Any) -> GraphExecutor:
        executor = GraphExecutor(
            self.graph_json, self.lib, devices_from_args(devices, self.libmod_name)
        )
        executor.set_params(self.params)
        return executor

    def _debug_create(self, name: str, *devices: Any) -> Module:
        if name != self.libmod_name:
            raise TVMValueError(f"debug_create: this factory is {self.libmod_name!r}, not {name!r}")
        devs = devices_from_args(devices, "debug_create")
        args = [v for d in devs for v in (d.device_type, d.device_id)]
        executor = get_global_func("tvm.graph_executor_debug.create")(
            self.graph_json, self.lib, *args
        )
        executor.set_params(self.params)
        return executor  # type: ignore[no-any-return]

    def _remove_params(self) -> GraphExecutorFactory:
        return GraphExecutorFactory(self.graph_json, {}, self.lib, self.libmod_name)

    # ------------------------------------------------------------------ TVM's Python methods

    def get_graph_json(self) -> str:
        """The graph JSON."""
        return self.graph_json

    def get_params(self) -> dict[str, NDArray]:
        """The parameters, by name."""
        return dict(self.params)

    def get_lib(self) -> Module:
        """The kernel library."""
        return self.lib

    def get_executor_config(self) -> str:
        """The graph JSON (TVM's name for the executor's configuration)."""
        return self.graph_json

    def __iter__(self) -> Iterator[Any]:
        """TVM's legacy unpacking: ``graph_json, lib, params = relay.build(...)``."""
        return iter((self.graph_json, self.lib, self.get_params()))

    def export_library(
        self,
        file_name: str | os.PathLike[str],
        fcompile: Callable[..., Any] | None = None,
        options: Sequence[str] | None = None,
        *,
        addons: Sequence[str] | None = None,
        workspace_dir: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Write one shared object with the kernels, the graph and the parameters.

        ``fcompile(output, [*addons, kernels, graph], **kwargs)`` replaces the system C
        compiler (cross compiling; ``options`` is passed on when given) and its result is
        returned; else ``options`` (default: the flags the kernels were built with) go to the
        system compiler. ``workspace_dir`` keeps the intermediate files (default: removed).
        A ``file_name`` ending in ``.tar`` (and no ``fcompile``) gets TVM's archive: the kernels
        (C source or object code) and the graph compiled to an object, linked by
        ``load_module``.
        """
        if self.artifact_path is not None:  # loaded from one: it already holds all three
            shutil.copyfile(self.artifact_path, file_name)
            return None
        write_tar = getattr(self.lib, "write_tar", None)  # C source for another target
        if callable(write_tar) and fcompile is None and os.fspath(file_name).endswith(".tar"):
            params = save_param_dict(self.params)
            write_tar(file_name, {"graph.json": self.graph_json.encode(), "graph.params": params})
            return None
        get_source = getattr(self.lib, "get_source", None)
        save = getattr(self.lib, "save", None)
        object_code = self.lib.type_key == "llvm" and callable(save)  # kernels LLVM compiled
        if not callable(get_source) and not object_code:
            raise TVMValueError(
                f"export_library: the library ({self.lib.type_key}) has no C source to rebuild "
                "with the graph; export the graph factory the compiler returned"
            )
        if self.lib.imported_modules:
            raise TVMValueError(
                f"export_library: the library imports {len(self.lib.imported_modules)} "
                "module(s); only a single C library can be linked with the graph here"
            )
        to_tar = fcompile is None and os.fspath(file_name).endswith(".tar")
        with tempfile.TemporaryDirectory(prefix="pytvm-export-") as scratch:
            tmp = workspace_dir if workspace_dir is not None else scratch
            # ELF assemblers include the parameters as a file (.incbin): fast for large models.
            # the parameters are streamed to a file, never held as one more copy in memory
            params_file = Path(tmp) / "graph.params"
            save_param_dict_to_file(self.params, params_file)
            blob = embedded_graph_c_source(
                self.graph_json,
                params_file,
                self.libmod_name,
                blob_dir=tmp if sys.platform.startswith(("linux", "freebsd")) else None,
            )
            graph = Path(tmp) / "graph.c"
            if object_code:  # the object code LLVM made, linked beside the graph
                kernels = Path(tmp) / "kernels.o"
                save(str(kernels), "o")  # type: ignore[misc]
            else:
                kernels = Path(tmp) / "kernels.c"
                kernels.write_text(get_source())  # type: ignore[misc]
            graph.write_text(blob)
            if to_tar:  # the graph as an object: its .incbin reads a file of this folder
                graph_object = Path(tmp) / "graph.o"
                create_shared(graph_object, [graph], options=["-c", *_EXPORT_FLAGS])
                tar(file_name, [*(addons or ()), str(kernels), str(graph_object)])
                return None
            files = [*(addons or ()), str(kernels), str(graph)]
            if fcompile is not None:
                if options is not None:
                    kwargs["options"] = options
                return fcompile(os.fspath(file_name), files, **kwargs)
            if kwargs:
                raise TVMValueError(
                    f"export_library: {sorted(kwargs)} are arguments of fcompile; pass fcompile"
                )
            flags = list(options) if options is not None else _export_flags(self.lib)
            staged = Path(tmp) / "out.so"
            compile_shared(list(map(Path, files)), staged, [*flags, "-lm"], Path(file_name).name)
            shutil.copyfile(staged, file_name)
            return None


#: TVM's name of the Python wrapper the graph compiler returns (the same class here).
GraphExecutorFactoryModule = GraphExecutorFactory


def _load_artifact(lib: LibraryModule) -> Module:
    """``runtime.module.loadfile_so`` for a shared object carrying a graph: its factory."""
    embedded = read_embedded_graph(lib)
    if embedded is None:
        return lib
    return GraphExecutorFactory(
        embedded.graph_json,
        load_param_dict(embedded.params, copy=False),  # views of the library's data
        lib,
        embedded.module_name,
        artifact_path=lib.path,
    )


def _factory_create(graph_json: str, lib: Module, module_name: str, *pairs: Any) -> Module:
    """TVM's ``tvm.graph_executor_factory.create(graph_json, lib, name, param, array, ...)``."""
    if len(pairs) % 2:
        raise TVMValueError("tvm.graph_executor_factory.create: expected (name, array) pairs")
    params = dict(zip(pairs[::2], pairs[1::2]))
    return GraphExecutorFactory(graph_json, params, lib, module_name)


register_func("runtime.graph_executor.load_artifact", _load_artifact, override=True)
register_func("tvm.graph_executor_factory.create", _factory_create, override=True)
