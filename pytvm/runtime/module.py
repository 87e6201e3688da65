"""``Module``: a named collection of packed functions, with imports (seed 004's runtime.Module).

Kinds are told apart by ``type_key`` as in TVM: ``"library"`` for a shared object loaded with
:func:`load_module`, ``"rpc"`` for a module living on a remote server, and so on. Loading is
dispatched on the file extension to the global function ``runtime.module.loadfile_<ext>``, so new
formats plug in by registering one function.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from ..ffi import Device, Object, PackedFunc, register_object, tvm_ffi_abi
from ..ffi.c_function import CFunction
from ..ffi.elf_check import check_shared_object
from ..ffi.errors import TVMAttributeError, TVMOSError, TVMValueError
from ..ffi.function import as_packed_func
from ..ffi.host_library import runtime_library
from ..ffi.registry import get_global_func, register_func
from .time_evaluator import make_evaluator

__all__ = [
    "ENTRY_FUNC",
    "GRAPH_ARTIFACT_SYMBOL",
    "KERNEL_SYMBOL_PREFIX",
    "LibraryModule",
    "Module",
    "check_exportable",
    "export_with_fcompile",
    "load_module",
    "load_shared_object",
]

#: Symbol of a library's entry function, called by ``mod(...)`` (TVM's ``__tvm_main__``).
ENTRY_FUNC = "__tvm_main__"
_MODULE_CTX = "__tvm_module_ctx"
#: Prefix of the symbol of a kernel named after a C library function (``exp`` is exported as
#: ``pytvm_kernel_exp``, since ``exp`` is libm's); a library's function ``name`` is looked up
#: under ``KERNEL_SYMBOL_PREFIX + name`` first.
KERNEL_SYMBOL_PREFIX = "pytvm_kernel_"


@register_object("ffi.Module")
class Module(Object):
    """A module: look up functions by name, import other modules, save, time functions.

    Examples
    --------
    >>> mod = Module.from_functions("example", {"twice": lambda x: 2 * x})
    >>> mod["twice"](21), mod.type_key
    (42, 'example')
    """

    #: Name of the entry function in TVM 0.27 (``tvm.runtime.Module.entry_name``).
    entry_name: ClassVar[str] = "main"

    def __init__(self) -> None:
        self.imported_modules: list[Module] = []
        self._functions: dict[str, PackedFunc] = {}

    @property
    def type_key(self) -> str:
        """The module kind (``"library"``, ``"rpc"``, ...)."""
        return "module"

    @staticmethod
    def from_functions(kind: str, functions: dict[str, Any]) -> Module:
        """A module serving Python callables (useful for tests and host-side glue)."""
        return _FunctionTableModule(kind, functions)

    # ------------------------------------------------------------------ lookup

    def _get_own_function(self, name: str) -> PackedFunc | None:
        """The module's own function ``name``, or None; subclasses implement the lookup."""
        return self._functions.get(name)

    @overload
    def get_function(
        self, name: str, query_imports: bool = False, allow_missing: Literal[False] = False
    ) -> PackedFunc: ...
    @overload
    def get_function(
        self, name: str, query_imports: bool = False, *, allow_missing: bool
    ) -> PackedFunc | None: ...

    def get_function(
        self, name: str, query_imports: bool = False, allow_missing: bool = False
    ) -> PackedFunc | None:
        """The function ``name`` of this module (and its imports if ``query_imports``)."""
        func = self._get_own_function(name)
        if func is None and query_imports:
            for imported in self.imported_modules:
                func = imported.get_function(name, query_imports=True, allow_missing=True)
                if func is not None:
                    break
        if func is None and not allow_missing:
            raise TVMAttributeError(
                f"module {self.type_key!r} has no function {name!r}"
                + ("" if query_imports else " (imports not searched)")
            )
        return func

    def __getitem__(self, name: str) -> PackedFunc:
        if not isinstance(name, str):
            raise TVMValueError(f"module functions are looked up by str, got {name!r}")
        func = self.get_function(name)
        assert func is not None
        return func

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether ``get_function(name)`` would succeed."""
        return self.get_function(name, query_imports, allow_missing=True) is not None

    def __contains__(self, name: object) -> bool:
        """``name in mod``: whether this module has its own function ``name``."""
        return isinstance(name, str) and self.implements_function(name)

    def __call__(self, *args: Any) -> Any:
        """Call the module's entry function (``__tvm_main__``)."""
        return self[ENTRY_FUNC](*args)

    def import_module(self, module: Module) -> None:
        """Add ``module`` to this module's imports (searched by ``get_function``)."""
        if not isinstance(module, Module):
            raise TVMValueError(f"import_module expects a Module, got {type(module).__name__}")
        stack, seen = [module], {id(module)}
        while stack:  # as TVM: an import cycle would make lookups through imports recurse forever
            current = stack.pop()
            if current is self:
                raise TVMValueError(f"import_module: cyclic import of {module!r} into {self!r}")
            for child in current.imported_modules:
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)
        self.imported_modules.append(module)

    # ------------------------------------------------------------------ persistence

    def save(self, file_name: str | os.PathLike[str], fmt: str = "") -> None:
        """Write this module's own binary (for a library: the shared object) to a file."""
        raise TVMValueError(f"module {self.type_key!r} cannot be saved")

    def export_library(
        self,
        file_name: str | os.PathLike[str],
        *,
        fcompile: Callable[..., Any] | None = None,
        addons: Sequence[str] | None = None,
        workspace_dir: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Write a shared object that ``load_module`` loads back with the same functions.

        TVM's protocol: a module built by the compiler writes its code into ``workspace_dir``
        (default: a temporary directory), then ``fcompile(file_name, [*addons, *files],
        **kwargs)`` makes the library and its result is returned; without ``fcompile`` the
        system C compiler links it (``pytvm.support.cc.create_shared``).
        """
        del fcompile, addons, workspace_dir, kwargs
        raise TVMValueError(f"module {self.type_key!r} cannot be exported as a library")

    # ------------------------------------------------------------------ timing

    def time_evaluator(
        self,
        func_name: str,
        dev: Device,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: int = 0,
        limit_zero_time_iterations: int = 100,
        cooldown_interval_ms: int = 0,
        repeats_to_cooldown: int = 1,
        cache_flush_bytes: int = 0,
        f_preproc: str = "",
    ) -> Any:
        """A function that times ``func_name`` on ``dev`` and returns a ``BenchmarkResult``.

        The timing loop runs where the module lives (in C for compiled functions, on the server
        for a remote module); see ``runtime.RPCTimeEvaluator``.
        """
        return make_evaluator(
            self,
            func_name,
            dev,
            number,
            repeat,
            min_repeat_ms,
            limit_zero_time_iterations,
            cooldown_interval_ms,
            repeats_to_cooldown,
            cache_flush_bytes,
            f_preproc,
        )

    def evaluator_factory(self) -> PackedFunc:
        """The ``runtime.RPCTimeEvaluator`` of the process this module lives in."""
        return get_global_func("runtime.RPCTimeEvaluator")

    def global_function(self, name: str) -> PackedFunc:
        """The global function ``name`` of the process this module lives in (here; a remote
        module's server), e.g. ``tvm.graph_executor.create`` to build an executor beside it.
        """
        return get_global_func(name)

    def __repr__(self) -> str:
        return f"Module({self.type_key}, {id(self):#x})"


class _FunctionTableModule(Module):
    def __init__(self, kind: str, functions: dict[str, Any]) -> None:
        super().__init__()
        self._kind = kind
        for name, func in functions.items():
            self._functions[name] = as_packed_func(func, name)

    @property
    def type_key(self) -> str:
        return self._kind


class LibraryModule(Module):
    """Functions exported by a shared object (``dlopen``); ``type_key`` ``"library"``.

    Two conventions, told apart by the file's symbols:

    - pytvm's packed convention: a function ``name`` is the symbol ``name`` with the packed
      signature. The context symbol ``__tvm_module_ctx`` (when present) is set so kernels find
      functions of imported modules with ``TVMBackendGetFuncFromEnv``; each function receives
      the module as ``resource_handle``.
    - tvm-ffi's convention, of libraries built by Apache TVM 0.27: a function ``name`` is the
      symbol ``__tvm_ffi_<name>``, the entry function is ``main``; the library is bound to
      pytvm's tvm-ffi environment (see ``pytvm.ffi.tvm_ffi_abi``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        runtime_library()  # kernels resolve TVMBackend* against it
        self.path = Path(path).resolve()
        # The name as given (made absolute), not resolved: a /proc/self/fd/<n> name stays the
        # file open under that descriptor.
        given = os.path.abspath(path)  # noqa: PTH100 - lexical, not resolved
        #: ``"tvm-ffi"`` for a library built by Apache TVM 0.27, else ``"packed"``.
        self.convention = "tvm-ffi" if tvm_ffi_abi.is_tvm_ffi_library(given) else "packed"
        if self.convention == "tvm-ffi":
            self._lib = tvm_ffi_abi.load_tvm_ffi_library(given)
            others = [k for k in tvm_ffi_abi.embedded_module_kinds(self._lib) if k != "_lib"]
            if others:
                raise TVMValueError(
                    f"load_module: {self.path.name} embeds module(s) of kind "
                    f"{', '.join(others)}, which pytvm cannot run; export the kernels alone "
                    "(tvm.compile of the PrimFuncs, then export_library) to run them here"
                )
            tvm_ffi_abi.init_library_context(self._lib, self.handle)
            return
        # A damaged file raises here instead of crashing the loader (a tvm-ffi library is
        # checked by ``load_tvm_ffi_library``).
        check_shared_object(given)
        try:
            self._lib = ctypes.CDLL(given, mode=ctypes.RTLD_LOCAL)
        except OSError as err:
            raise TVMOSError(f"cannot load shared object {str(path)!r}: {err}") from None
        try:
            ctypes.c_void_p.in_dll(self._lib, _MODULE_CTX).value = self.handle
        except ValueError:
            pass  # a library with no module context

    @property
    def type_key(self) -> str:
        """``"library"``."""
        return "library"

    def _get_own_function(self, name: str) -> PackedFunc | None:
        func = self._functions.get(name)
        if func is not None:
            return func
        if self.convention == "tvm-ffi":
            # mod(...) asks for pytvm's entry symbol; a TVM library's entry is ``main``.
            symbol_name = self.entry_name if name == ENTRY_FUNC else name
            func = tvm_ffi_abi.safe_call_function(self._lib, symbol_name, owner=self)
            if func is not None:
                self._functions[name] = func
            return func
        try:  # a kernel named after a C library function first (else dlsym finds libm's)
            symbol = self._lib[KERNEL_SYMBOL_PREFIX + name]
        except AttributeError:
            symbol = None
        try:
            if symbol is None:  # item access: getattr refuses dunder names (__tvm_main__)
                symbol = self._lib[name]
        except AttributeError:
            if name != self.entry_name:
                return None
            try:  # a kernel named "main" is exported as the entry symbol (C reserves main)
                symbol = self._lib[ENTRY_FUNC]
            except AttributeError:
                return None
        address = ctypes.cast(symbol, ctypes.c_void_p).value or 0
        func = CFunction(address, resource=self.handle, owner=self, name=name)
        self._functions[name] = func
        return func

    def symbol_address(self, name: str) -> int:
        """Address of the data or function symbol ``name`` of a packed-convention library, 0
        when it has none (or the library follows tvm-ffi's convention).
        """
        if self.convention != "packed":
            return 0
        try:
            return ctypes.cast(self._lib[name], ctypes.c_void_p).value or 0
        except AttributeError:
            return 0

    def save(self, file_name: str | os.PathLike[str], fmt: str = "") -> None:
        """Copy the shared object to ``file_name``."""
        shutil.copyfile(self.path, file_name)

    def export_library(
        self,
        file_name: str | os.PathLike[str],
        *,
        fcompile: Callable[..., Any] | None = None,
        addons: Sequence[str] | None = None,
        workspace_dir: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Copy the shared object to ``file_name``; a module with imports cannot be exported.

        A loaded shared object has no code to give ``fcompile``: passing one (or ``addons``)
        raises ``TVMValueError``.
        """
        del workspace_dir, kwargs
        check_exportable(self, self.path.name)
        if fcompile is not None or addons:
            raise TVMValueError(
                f"export_library({os.fspath(file_name)!r}, fcompile=...): {self.path.name} is a "
                "loaded shared object with no object code or source to compile again; export it "
                "without fcompile (a copy), or export the module the compiler returned"
            )
        shutil.copyfile(self.path, file_name)
        return None


def check_exportable(module: Module, what: str) -> None:
    """Raise ``TVMValueError`` when ``module`` has imports (one library cannot hold them)."""
    if module.imported_modules:
        raise TVMValueError(
            f"export_library: {what} has {len(module.imported_modules)} imported "
            "module(s); linking imports into one shared object needs modules built by the "
            "compiler; load and import them at run time instead"
        )


def export_with_fcompile(
    file_name: str | os.PathLike[str],
    files: dict[str, bytes],
    fcompile: Callable[..., Any] | None,
    addons: Sequence[str] | None,
    workspace_dir: str | None,
    kwargs: dict[str, Any],
) -> Any:
    """TVM's last step of ``export_library``: write ``files`` (name -> bytes) into
    ``workspace_dir`` (default: a temporary directory, removed after), then return
    ``fcompile(file_name, [*addons, *paths], **kwargs)`` (default ``fcompile``:
    :func:`pytvm.support.tar.tar` for a ``.tar`` file name, else
    :func:`pytvm.support.cc.create_shared`).
    """
    from ..support.cc import create_shared
    from ..support.tar import tar

    if fcompile is not None:
        compile_func = fcompile
    else:
        compile_func = tar if os.fspath(file_name).endswith(".tar") else create_shared
    with tempfile.TemporaryDirectory(prefix="pytvm-export-") as tmp:
        folder = Path(workspace_dir) if workspace_dir is not None else Path(tmp)
        paths = []
        for name, data in files.items():
            (folder / name).write_bytes(data)
            paths.append(str(folder / name))
        return compile_func(os.fspath(file_name), [*(addons or ()), *paths], **kwargs)


#: Data symbol of a shared object that also carries a graph (``runtime.graph_executor.artifact``).
GRAPH_ARTIFACT_SYMBOL = "__pytvm_graph_json"


def load_shared_object(path: str) -> Module:
    """The module of the shared object ``path``: a library module, or a graph's factory when
    the library carries a graph (``runtime.module.loadfile_so``).
    """
    lib = LibraryModule(path)
    if lib.symbol_address(GRAPH_ARTIFACT_SYMBOL):  # a graph's factory, its kernels imported
        return get_global_func("runtime.graph_executor.load_artifact")(lib)  # type: ignore[no-any-return]
    return lib


for _ext in ("so", "dll", "dylib"):
    register_func(f"runtime.module.loadfile_{_ext}", load_shared_object)


def load_module(path: str | os.PathLike[str], fmt: str = "") -> Module:
    """Load a module from a file; the format is the extension unless ``fmt`` is given.

    ``.so`` (and ``.dll``/``.dylib``) load as library modules; ``.o`` and ``.tar`` are linked
    into one first (:mod:`pytvm.runtime.linked_library`); other formats are served by the
    global function ``runtime.module.loadfile_<fmt>``.
    """
    text = os.fspath(path)
    if not os.path.exists(text):  # noqa: PTH110 - any stat failure reads as a missing file
        raise TVMOSError(f"load_module: no such file {text!r}")
    fmt = fmt or Path(text).suffix.lstrip(".")
    loader = get_global_func(f"runtime.module.loadfile_{fmt}", allow_missing=True)
    if loader is None:
        raise TVMValueError(
            f"load_module: unknown module format {fmt!r} of {text!r}; register "
            f"a loader as 'runtime.module.loadfile_{fmt}'"
        )
    module = loader(text)
    if not isinstance(module, Module):
        raise TVMValueError(f"runtime.module.loadfile_{fmt} returned {type(module).__name__}")
    return module
