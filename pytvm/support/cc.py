r"""Shared objects, executables and static libraries made with the system C compiler (TVM's
``tvm.support.cc``), for ``Module.export_library(path, fcompile=...)`` and by hand.

The compiler is pytvm's (:func:`pytvm.ffi.libinfo.find_cc`: ``$CC``, else cc, gcc, clang) unless
``cc=`` names another. A compile function is called as ``fcompile(output, objects, options=None,
**kwargs)``; :func:`cross_compiler` makes one with fixed options and extra files, carrying TVM's
attributes ``output_format`` and ``get_target_triple``.

Examples
--------
>>> import os, tempfile
>>> from pytvm.support import cc
>>> work = tempfile.mkdtemp()
>>> src = os.path.join(work, "add.c")
>>> with open(src, "w") as f:
...     _ = f.write("int add(int a, int b) { return a + b; }\\n")
>>> cc.create_shared(os.path.join(work, "libadd.so"), [src])  # doctest: +SKIP
>>> sorted(os.listdir(work))  # doctest: +SKIP
['add.c', 'libadd.so']
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMError, TVMValueError
from ..ffi.libinfo import find_cc

__all__ = [
    "CompileFunction",
    "create_executable",
    "create_shared",
    "create_staticlib",
    "cross_compiler",
    "get_cc",
    "get_global_symbol_section_map",
    "get_target_by_dump_machine",
]

Objects = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def get_cc() -> str | None:
    """The system C compiler pytvm uses (``$CC``, else cc, gcc, clang on ``PATH``), or None."""
    return find_cc()


def _run(cmd: list[str], cwd: str | None, env: Mapping[str, str] | None, what: str) -> None:
    done = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False
    )
    if done.returncode != 0:
        out = done.stdout.decode("utf-8", errors="replace")
        raise TVMError(f"{what} failed:\n{out}\nCommand line: {shlex.join(cmd)}")


def _compile(
    output: str | os.PathLike[str],
    objects: Objects,
    options: Sequence[str] | None,
    cc: str | None,
    cwd: str | None,
    ccache_env: Mapping[str, str] | None,
    shared: bool,
) -> None:
    if sys.platform == "win32":
        raise TVMValueError("pytvm.support.cc: Windows is not supported; compile on a POSIX host")
    compiler = cc or get_cc()
    if not compiler:
        raise TVMError(
            "no C compiler found (looked for $CC, else cc, gcc, clang): install gcc or clang, "
            "or pass cc="
        )
    out = os.fspath(output)
    cmd = shlex.split(compiler)
    relocatable = "-r" in (options or ())  # a relocatable object (ld -r): never shared
    if (shared or out.endswith((".so", ".dylib"))) and not relocatable:
        cmd += ["-shared", "-fPIC"]
        if sys.platform == "darwin":
            cmd += ["-undefined", "dynamic_lookup"]
    elif out.endswith(".obj"):
        cmd.append("-c")
    cmd += ["-o", out, *(options or ())]
    cmd += (
        [os.fspath(objects)]
        if isinstance(objects, str | os.PathLike)
        else [os.fspath(o) for o in objects]
    )
    env = None
    if ccache_env is not None:
        if shutil.which("ccache") is None:
            raise TVMValueError("ccache_env was given but ccache is not on PATH; install it")
        cmd.insert(0, "ccache")
        env = {**os.environ, **ccache_env}
    _run(cmd, cwd, env, "Compilation")


def create_shared(
    output: str | os.PathLike[str],
    objects: Objects,
    options: Sequence[str] | None = None,
    cc: str | None = None,
    cwd: str | None = None,
    ccache_env: Mapping[str, str] | None = None,
) -> None:
    """Compile and link ``objects`` (sources, objects, libraries) into the shared object
    ``output``: ``<cc> -shared -fPIC -o output <options> <objects>``.

    ``cwd`` is the compiler's working directory; ``ccache_env`` runs it under ``ccache`` with
    those environment variables. Raises ``TVMError`` with the compiler's output on failure.
    """
    _compile(output, objects, options, cc, cwd, ccache_env, shared=True)


def create_executable(
    output: str | os.PathLike[str],
    objects: Objects,
    options: Sequence[str] | None = None,
    cc: str | None = None,
    cwd: str | None = None,
    ccache_env: Mapping[str, str] | None = None,
) -> None:
    """Compile and link ``objects`` into the executable ``output`` (parameters as
    :func:`create_shared`).
    """
    _compile(output, objects, options, cc, cwd, ccache_env, shared=False)


def create_staticlib(
    output: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]], ar: str | None = None
) -> None:
    """Archive the object files ``inputs`` into the static library ``output`` (``ar -crs``).

    The archive is written as ``lib<name>`` in a temporary directory, then moved to ``output``.
    """
    name = Path(output).name
    with tempfile.TemporaryDirectory(prefix="pytvm-ar-") as tmp:
        staged = Path(tmp) / (name if name.startswith("lib") else f"lib{name}")
        _run([ar or "ar", "-crs", str(staged), *(os.fspath(i) for i in inputs)], None, None, "ar")
        shutil.move(staged, output)


def get_global_symbol_section_map(
    path: str | os.PathLike[str], *, nm: str | None = None
) -> dict[str, str]:
    """Each global symbol ``path`` defines -> its section letter, from ``nm -g --defined-only``
    (TVM's ``nm -gU``; GNU nm reads ``-U`` as another option).
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"{os.fspath(path)} does not exist")
    cmd = [nm or "nm", "-g", "--defined-only", os.fspath(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TVMError(f"nm failed:\n{done.stdout}{done.stderr}\nCommand line: {shlex.join(cmd)}")
    symbols = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == len(("address", "section", "symbol")):
            symbols[fields[2]] = fields[1]
    return symbols


def get_target_by_dump_machine(compiler: str | None) -> Callable[[], str | None]:
    """A function returning ``compiler -dumpmachine`` (the target triple), or None on failure."""

    def get_target_triple() -> str | None:
        if not compiler:
            return None
        try:
            done = subprocess.run(
                [*shlex.split(compiler), "-dumpmachine"],
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None

    return get_target_triple


class CompileFunction:
    """``compile_func`` with options and files added to every call (what :func:`cross_compiler`
    returns): ``fcompile(output, objects, options=None, **kwargs)`` runs
    ``compile_func(output, [*objects, *add_files], options=[*options, *call options], ...)``.

    Carries TVM's attributes: ``output_format`` (the library suffix export_library uses),
    ``get_target_triple`` and ``need_system_lib`` (the objects must define a system library).
    """

    def __init__(
        self,
        compile_func: Callable[..., Any],
        options: Sequence[str] = (),
        add_files: Sequence[str | os.PathLike[str]] = (),
        output_format: str = "so",
        get_target_triple: Callable[[], str | None] | None = None,
        need_system_lib: bool = False,
        name: str = "fcompile",
        **fixed: Any,
    ) -> None:
        self.compile_func = compile_func
        self.options = list(options)
        self.add_files = [os.fspath(f) for f in add_files]
        self.output_format = output_format
        self.get_target_triple = get_target_triple
        self.need_system_lib = need_system_lib
        self.__name__ = name
        self._fixed = fixed

    def __call__(
        self,
        output: str | os.PathLike[str],
        objects: Objects,
        options: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run ``compile_func`` on ``objects`` plus the added files, with the added options."""
        if isinstance(objects, str | os.PathLike):
            objects = [objects]
        return self.compile_func(
            output,
            [*(os.fspath(o) for o in objects), *self.add_files],
            options=[*self.options, *(options or ())],
            **{**self._fixed, **kwargs},
        )

    def __repr__(self) -> str:
        return f"<compile function {self.__name__} of {self.compile_func!r}>"


def cross_compiler(
    compile_func: str | Callable[..., Any],
    options: Sequence[str] | None = None,
    output_format: str | None = None,
    get_target_triple: Callable[[], str | None] | None = None,
    add_files: Sequence[str | os.PathLike[str]] | None = None,
) -> CompileFunction:
    """``compile_func`` (a compile function, or a compiler command for :func:`create_shared`)
    specialised with ``options`` and ``add_files``; see :class:`CompileFunction`.

    Examples
    --------
    >>> from pytvm.support import cc
    >>> fcompile = cc.cross_compiler("aarch64-linux-gnu-gcc", options=["-O2"])
    >>> fcompile.output_format, fcompile.options
    ('so', ['-O2'])
    """
    fixed: dict[str, Any] = {}
    if isinstance(compile_func, str):
        fixed["cc"] = compile_func
        compile_func = create_shared
    return CompileFunction(
        compile_func,
        options or (),
        add_files or (),
        output_format or getattr(compile_func, "output_format", None) or "so",
        get_target_triple or getattr(compile_func, "get_target_triple", None),
        **fixed,
    )


def _host_target_triple() -> str | None:
    """``-dumpmachine`` of pytvm's compiler, looked up when asked (not at import)."""
    return get_target_by_dump_machine(find_cc())()


# TVM's attributes of its default compile function.
setattr(create_shared, "output_format", "dll" if sys.platform == "win32" else "so")
setattr(create_shared, "get_target_triple", _host_target_triple)
