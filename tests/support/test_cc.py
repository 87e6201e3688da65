"""TVM's compile functions (``tvm.support.cc``) and ``export_library(path, fcompile=...)``."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.ffi.errors import TVMError, TVMValueError
from pytvm.support import cc

pytestmark = pytest.mark.needs_cc

ADD = "int add(int a, int b) { return a + b; }\n"
MAIN = '#include <stdio.h>\nint add(int, int);\nint main(void) { printf("%d", add(2, 3)); }\n'


def test_create_shared_and_executable(tmp_path: Path) -> None:
    (tmp_path / "add.c").write_text(ADD)
    (tmp_path / "main.c").write_text(MAIN)
    cc.create_shared(str(tmp_path / "libadd.so"), [str(tmp_path / "add.c")])
    assert ctypes.CDLL(str(tmp_path / "libadd.so")).add(2, 3) == 5
    exe = tmp_path / "main"
    cc.create_executable(str(exe), [str(tmp_path / "main.c"), str(tmp_path / "add.c")])
    assert subprocess.run([exe], capture_output=True, text=True, check=True).stdout == "5"


def test_compile_error_names_the_command(tmp_path: Path) -> None:
    (tmp_path / "bad.c").write_text("int f( {\n")
    with pytest.raises(TVMError, match="Compilation failed") as err:
        cc.create_shared(str(tmp_path / "bad.so"), [str(tmp_path / "bad.c")])
    assert "Command line:" in str(err.value)


def test_create_staticlib(tmp_path: Path) -> None:
    (tmp_path / "add.c").write_text(ADD)
    cc.create_executable(str(tmp_path / "add.obj"), [str(tmp_path / "add.c")])  # -c
    cc.create_staticlib(str(tmp_path / "libadd.a"), [str(tmp_path / "add.obj")])
    assert "add" in cc.get_global_symbol_section_map(str(tmp_path / "libadd.a"))


def test_cross_compiler_adds_options_and_files(tmp_path: Path) -> None:
    calls = []

    def record(output: str, objects: list[str], options: list[str], **kwargs: object) -> str:
        calls.append((output, objects, options, kwargs))
        return "made"

    fcompile = cc.cross_compiler(record, options=["-O2"], add_files=["extra.o"])
    assert fcompile("out.so", ["a.o"], options=["-g"]) == "made"
    assert fcompile("out.so", "b.o") == "made"
    assert calls == [
        ("out.so", ["a.o", "extra.o"], ["-O2", "-g"], {}),
        ("out.so", ["b.o", "extra.o"], ["-O2"], {}),
    ]
    by_name = cc.cross_compiler("gcc")
    assert by_name.compile_func is cc.create_shared
    assert by_name.output_format == "so"


def _add_one() -> pytvm.tir.PrimFunc:
    a = te.placeholder((16,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
    return te.create_prim_func([a, b])


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_export_library_with_fcompile_loads_back(tmp_path: Path, target: str) -> None:
    built = pytvm.compile(_add_one(), target=target)
    path = tmp_path / "lib.so"
    built.export_library(str(path), fcompile=cc.create_shared)
    lib = pytvm.runtime.load_module(path)
    a = pytvm.nd.array(np.arange(16, dtype="float32"))
    b = pytvm.nd.array(np.zeros(16, "float32"))
    lib(a, b)
    np.testing.assert_allclose(b.numpy(), a.numpy() + 1)


def test_export_library_passes_the_object_to_fcompile(tmp_path: Path) -> None:
    seen: list[tuple[str, list[str], dict[str, object]]] = []

    def fcompile(output: str, files: list[str], **kwargs: object) -> str:
        seen.append((output, [Path(f).name for f in files], kwargs))
        return "result"

    built = pytvm.compile(_add_one(), target="llvm")
    out = str(tmp_path / "x.so")
    assert built.export_library(out, fcompile=fcompile, addons=["a.o"], cc="gcc") == "result"
    assert seen == [(out, ["a.o", "lib0.o"], {"cc": "gcc"})]


def test_a_loaded_library_has_nothing_to_compile(tmp_path: Path) -> None:
    pytvm.compile(_add_one(), target="llvm").export_library(str(tmp_path / "lib.so"))
    lib = pytvm.runtime.load_module(tmp_path / "lib.so")
    with pytest.raises(TVMValueError, match="no object code or source to compile again"):
        lib.export_library(str(tmp_path / "again.so"), fcompile=cc.create_shared)
