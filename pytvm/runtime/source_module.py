r"""``SourceModule``: C source for a target that is not this machine (TVM's ``CSourceModule``).

``pytvm.build`` returns one for a cross target (``c -mcpu=cortex-m4``, a foreign ``-mtriple``):
the kernels as C text that is compiled for the target elsewhere, never loaded here. It holds
text only (sources, headers, the compiler flags the target implies) and imports nothing from
the compiler. ``export_library("k.tar")`` writes the sources, headers and a Makefile fragment
(``module.mk``); ``export_library("k.o", fcompile=cross_compiler("arm-none-eabi-gcc"))``
compiles them with the module's ``cflags``.

Examples
--------
>>> mod = SourceModule({"f.c": "int f(void) { return 1; }\n"}, "c -mcpu=cortex-m4", ["f"])
>>> mod.type_key, mod.is_runnable, mod.function_names
('c', False, ['f'])
>>> mod.get_source()
'int f(void) { return 1; }\n'
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload

from ..ffi import PackedFunc
from ..ffi.errors import TVMError, TVMValueError
from ..ffi.libinfo import include_dir, source_dir
from .module import Module

__all__ = ["SourceModule", "crt_include_dirs", "module_makefile"]

_SOURCE_FORMATS = ("", "c", "cc")


def crt_include_dirs() -> list[Path]:
    """The folders C of a source module is compiled against: pytvm's C API headers and the C
    runtime's (``-I`` each).
    """
    return [include_dir(), source_dir() / "crt" / "include"]


def module_makefile(target: str, sources: Sequence[str], cflags: Sequence[str]) -> str:
    """``module.mk`` of an exported source module: ``PYTVM_MODULE_SRCS`` (paths under the
    folder the archive is unpacked in, ``PYTVM_MODULE_DIR``) and ``PYTVM_MODULE_CFLAGS`` (the
    target's flags and ``-I`` of the module's ``include/``). The includer adds ``-I`` of pytvm's
    headers (``pytvm/include``, ``pytvm/src/crt/include``).
    """
    srcs = " ".join(f"$(PYTVM_MODULE_DIR)/src/{name}" for name in sources)
    flags = " ".join([*cflags, "-I$(PYTVM_MODULE_DIR)/include"])
    return (
        f"# C source of a pytvm module built for target: {target}\n"
        "PYTVM_MODULE_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))\n"
        f"PYTVM_MODULE_SRCS := {srcs}\n"
        f"PYTVM_MODULE_CFLAGS := {flags}\n"
    )


class SourceModule(Module):
    """C source of kernels for a target other than this machine; ``type_key`` ``"c"``.

    Parameters
    ----------
    sources:
        File name -> C text, in compilation order (``{"<name>.c": ...}`` for ``pytvm.build``).
    target:
        The target text the code was generated for.
    function_names:
        The functions the code defines (packed functions, or an executor's entry points).
    headers:
        File name -> header text the sources include (may be empty).
    cflags:
        Flags a C compiler needs for the target (``-mcpu=cortex-m4 -mthumb ...
        -DPYTVM_CRT=1``).
    cc:
        The compiler ``pytvm.build(..., cc=...)`` named: ``export_library`` of a non-``.tar``
        file uses it when no ``fcompile`` is given.
    """

    def __init__(
        self,
        sources: Mapping[str, str],
        target: str,
        function_names: Sequence[str],
        headers: Mapping[str, str] | None = None,
        cflags: Sequence[str] = (),
        cc: str | None = None,
    ) -> None:
        super().__init__()
        if not sources:
            raise TVMValueError(f"SourceModule for target {target!r}: no source files given")
        for name in [*sources, *(headers or {})]:
            if not name or "/" in name or name.startswith("."):
                raise TVMValueError(
                    f"SourceModule for target {target!r}: file name {name!r} must be a plain "
                    "name (no folder, not hidden), e.g. 'kernels.c'"
                )
        #: File name -> C text.
        self.sources: dict[str, str] = dict(sources)
        #: File name -> header text.
        self.headers: dict[str, str] = dict(headers or {})
        #: The target text the code was generated for.
        self.target = str(target)
        #: The functions the code defines.
        self.function_names: list[str] = list(function_names)
        #: Compiler flags the target implies.
        self.cflags: list[str] = list(cflags)
        self.cc = cc

    @property
    def type_key(self) -> str:
        """``"c"`` (TVM's C source module)."""
        return "c"

    @property
    def format(self) -> str:
        """The source format, ``"c"``."""
        return "c"

    @property
    def is_runnable(self) -> bool:
        """False: the code is for another machine (TVM's ``Module.is_runnable``)."""
        return False

    def _not_runnable(self, name: str) -> TVMError:
        return TVMError(
            f"module of type 'c' is C source for target '{self.target}' and cannot run on this "
            f"host (asked for function {name!r}); save it (mod.save('kernels.c')), export it "
            "(mod.export_library('kernels.tar'), or 'kernels.o' with fcompile="
            "pytvm.contrib.cc.cross_compiler('arm-none-eabi-gcc')), or run it on a device "
            "through pytvm.micro (generate_project, Session.get_system_lib())"
        )

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
        """Raise ``TVMError``: source for another target has no function to call here (with
        ``allow_missing``, a name the module does not define gives None).
        """
        del query_imports
        if allow_missing and name not in self.function_names:
            return None
        raise self._not_runnable(name)

    def get_source(self, fmt: str = "") -> str:
        """The C text: every ``.c`` file, in order (``fmt`` ``""``, ``"c"`` or ``"cc"``)."""
        if fmt not in _SOURCE_FORMATS:
            raise TVMValueError(
                f"get_source: a C source module for '{self.target}' has source of format 'c', "
                f"not {fmt!r}"
            )
        return "".join(self.sources.values())

    def save(self, file_name: str | os.PathLike[str], fmt: str = "") -> None:
        """Write the C text (:meth:`get_source`) to ``file_name``."""
        Path(file_name).write_text(self.get_source(fmt))

    def all_sources(self) -> dict[str, str]:
        """The sources of this module and of the source modules it imports, by file name."""
        out = dict(self.sources)
        for imported in self.imported_modules:
            if not isinstance(imported, SourceModule):
                raise TVMValueError(
                    f"export_library: a C source module for '{self.target}' imports a module "
                    f"of type {imported.type_key!r}; only source modules can be exported with it"
                )
            for name, text in imported.all_sources().items():
                if name in out and out[name] != text:
                    raise TVMValueError(
                        f"export_library: two imported source modules both define {name!r}"
                    )
                out[name] = text
        return out

    def export_library(
        self,
        file_name: str | os.PathLike[str],
        *,
        fcompile: Callable[..., Any] | None = None,
        addons: Sequence[str] | None = None,
        workspace_dir: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Write the module for the target's own build.

        ``*.tar`` (without ``fcompile``): a gzip tar of ``src/<sources>``,
        ``include/<headers>`` and ``module.mk`` (:func:`module_makefile`). Any other name is
        compiled: ``fcompile(file_name, [*addons, *sources], options=[*cflags, *options,
        -I<headers>], **kwargs)`` (``fcompile`` defaults to a compiler passed to
        ``pytvm.build(cc=...)``); a ``.o`` is one relocatable object (``-r -nostdlib``).
        """
        text = os.fspath(file_name)
        sources = self.all_sources()
        if fcompile is None and not addons and text.endswith(".tar"):
            self.write_tar(text)
            return None
        if fcompile is None and self.cc is not None:
            from ..support.cc import cross_compiler

            fcompile = cross_compiler(self.cc)
        if fcompile is None:
            raise TVMValueError(
                f"export_library({text!r}): this module is C source for target '{self.target}'"
                ", which the host compiler cannot build; export a '.tar' of the sources, or pass"
                " fcompile=pytvm.contrib.cc.cross_compiler('<compiler for the target>')"
            )
        if getattr(fcompile, "need_system_lib", False) and "--system-lib" not in self.target:
            raise TVMValueError(
                f"export_library: {getattr(fcompile, '__name__', fcompile)!r} needs a system "
                f"library; this module was built for '{self.target}': add --system-lib"
            )
        options = kwargs.pop("options", None) or []
        options = [options] if isinstance(options, str) else list(options)
        with tempfile.TemporaryDirectory(prefix="pytvm-source-") as tmp:
            folder = Path(workspace_dir) if workspace_dir is not None else Path(tmp)
            for name, body in {**self.headers, **sources}.items():
                (folder / name).write_text(body)
            if text.endswith(".o") and "-r" not in options:  # one relocatable object
                options += ["-r", "-nostdlib"]
            includes = [f"-I{folder}", *(f"-I{d}" for d in crt_include_dirs())]
            files = [*(addons or ()), *(str(folder / name) for name in sources)]
            return fcompile(text, files, options=[*self.cflags, *options, *includes], **kwargs)

    def write_tar(
        self, path: str | os.PathLike[str], extra_files: Mapping[str, bytes] | None = None
    ) -> None:
        """Write the gzip tar ``export_library("*.tar")`` makes: ``src/<sources>`` (with those
        of imported source modules), ``include/<headers>``, ``module.mk`` and ``extra_files``
        (name -> bytes, at the top: a graph factory adds ``graph.json`` and ``graph.params``).
        """
        sources = self.all_sources()
        members = {f"src/{name}": body.encode() for name, body in sources.items()}
        members |= {f"include/{name}": body.encode() for name, body in self.headers.items()}
        members["module.mk"] = module_makefile(self.target, list(sources), self.cflags).encode()
        for name, data in (extra_files or {}).items():
            if not name or "/" in name or name in members:
                raise TVMValueError(f"write_tar: extra file name {name!r} is not a free plain name")
            members[name] = bytes(data)
        now = time.time()
        with tarfile.open(os.fspath(path), "w:gz") as archive:
            for folder in ("src", "include"):
                info = tarfile.TarInfo(folder)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
                archive.addfile(info)
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, now
                archive.addfile(info, io.BytesIO(data))

    def __repr__(self) -> str:
        return f"SourceModule({self.target!r}, {', '.join(self.sources)})"
