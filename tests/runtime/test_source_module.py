"""``SourceModule``: C text for another target; saved, archived with a Makefile fragment,
compiled by a cross compiler, never run here.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from pytvm.contrib import cc
from pytvm.ffi.errors import TVMError, TVMValueError
from pytvm.runtime.module import Module
from pytvm.runtime.source_module import SourceModule, crt_include_dirs

ARM_GCC = shutil.which("arm-none-eabi-gcc")
needs_arm_gcc = pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed")
M4 = "c -mcpu=cortex-m4"
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
SOURCES = {
    "a.c": '#include "twice.h"\nint twice(int x) { return TWICE(x); }\n',
    "b.c": "float half(float x);\nfloat half(float x) { return x * 0.5f; }\n",
}
HEADERS = {"twice.h": "#define TWICE(x) (2 * (x))\nint twice(int x);\n"}


def _module() -> SourceModule:
    return SourceModule(SOURCES, M4, ["twice", "half"], HEADERS, [*M4_FLAGS, "-DPYTVM_CRT=1"])


def test_tvm_module_conventions() -> None:
    mod = _module()
    assert isinstance(mod, Module)
    assert (mod.type_key, mod.format, mod.is_runnable) == ("c", "c", False)
    assert mod.imported_modules == []
    assert mod.get_source() == SOURCES["a.c"] + SOURCES["b.c"]
    assert mod.get_source("c") == mod.get_source()
    with pytest.raises(TVMValueError, match="format 'c'"):
        mod.get_source("ll")


def test_functions_cannot_run_here_and_the_error_says_how() -> None:
    mod = _module()
    with pytest.raises(TVMError, match=r"cortex-m4.*cannot run on this host.*export_library"):
        mod["twice"]
    with pytest.raises(TVMError, match=r"pytvm\.micro"):
        mod.get_function("half", allow_missing=True)
    assert mod.get_function("missing", allow_missing=True) is None


def test_bad_file_names_are_refused() -> None:
    with pytest.raises(TVMValueError, match="plain name"):
        SourceModule({"src/a.c": ""}, M4, [])
    with pytest.raises(TVMValueError, match="no source files"):
        SourceModule({}, M4, [])


def test_save_writes_the_c(tmp_path: Path) -> None:
    _module().save(tmp_path / "k.c")
    assert (tmp_path / "k.c").read_text() == SOURCES["a.c"] + SOURCES["b.c"]


def test_tar_holds_sources_headers_and_makefile(tmp_path: Path) -> None:
    _module().export_library(tmp_path / "k.tar")
    with tarfile.open(tmp_path / "k.tar") as archive:
        names = set(archive.getnames())
        mk = archive.extractfile("module.mk")
        assert mk is not None
        text = mk.read().decode()
    assert {"src/a.c", "src/b.c", "include/twice.h", "module.mk"} <= names
    assert "PYTVM_MODULE_SRCS := $(PYTVM_MODULE_DIR)/src/a.c $(PYTVM_MODULE_DIR)/src/b.c" in text
    assert "PYTVM_MODULE_CFLAGS := -mcpu=cortex-m4 -mthumb" in text


def test_other_suffixes_need_a_compiler(tmp_path: Path) -> None:
    with pytest.raises(
        TVMValueError, match=r"cortex-m4.*fcompile=pytvm\.contrib\.cc\.cross_compiler"
    ):
        _module().export_library(tmp_path / "k.o")


@needs_arm_gcc
def test_module_mk_builds_with_make(tmp_path: Path) -> None:
    _module().export_library(tmp_path / "k.tar")
    out = tmp_path / "unpacked"
    out.mkdir()
    with tarfile.open(tmp_path / "k.tar") as archive:
        archive.extractall(out, filter="data")
    includes = " ".join(f"-I{d}" for d in crt_include_dirs())
    (tmp_path / "Makefile").write_text(
        f"include {out}/module.mk\n"
        "objs: $(PYTVM_MODULE_SRCS)\n"
        f"\t{ARM_GCC} -std=c99 -Wall -Wextra -Werror $(PYTVM_MODULE_CFLAGS) {includes} -c "
        "$(PYTVM_MODULE_SRCS)\n"
    )
    done = subprocess.run(
        ["make", "-s", "-C", str(tmp_path), "objs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "a.o").exists() and (tmp_path / "b.o").exists()


@needs_arm_gcc
def test_export_object_with_a_cross_compiler(tmp_path: Path) -> None:
    fcompile = cc.cross_compiler("arm-none-eabi-gcc", options=["-std=c99", "-Wall", "-Werror"])
    _module().export_library(tmp_path / "k.o", fcompile=fcompile)
    header = (tmp_path / "k.o").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and header[4] == 1  # 32-bit ELF
    assert int.from_bytes(header[18:20], "little") == 40  # EM_ARM
    nm = subprocess.run(
        ["arm-none-eabi-nm", "--defined-only", str(tmp_path / "k.o")],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert " twice" in nm and " half" in nm


def test_imported_source_modules_are_exported_together(tmp_path: Path) -> None:
    mod = _module()
    mod.import_module(SourceModule({"c.c": "int three(void) { return 3; }\n"}, M4, ["three"]))
    mod.export_library(tmp_path / "k.tar")
    with tarfile.open(tmp_path / "k.tar") as archive:
        assert "src/c.c" in archive.getnames()
