"""``pytvm.build`` for a target that is not this machine returns C source (never loads it);
the C compiles for a Cortex-M4 with the module's flags.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import pytvm
from pytvm import te
from pytvm.contrib import cc
from pytvm.ffi.errors import TVMError, TVMValueError
from pytvm.runtime.source_module import SourceModule

needs_arm_gcc = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc is not installed"
)
M4 = "c -mcpu=cortex-m4 -mtriple=thumbv7em-none-eabihf --system-lib"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Os"]


def _vadd() -> tuple[te.Schedule, list[te.Tensor]]:
    a = te.placeholder((64,), name="A")
    b = te.placeholder((64,), name="B")
    c = te.compute((64,), lambda i: a[i] + b[i], name="C")
    return te.create_schedule(c.op), [a, b, c]


@pytest.mark.parametrize("target", [M4, "c -mcpu=cortex-m4", "llvm -mtriple=aarch64-linux-gnu"])
def test_cross_build_is_a_source_module(target: str) -> None:
    s, args = _vadd()
    mod = pytvm.build(s, args, target=target, name="vadd")
    assert isinstance(mod, SourceModule)
    assert mod.function_names == ["vadd"] and list(mod.sources) == ["vadd.c"]
    assert mod.target == str(pytvm.target.Target(target))
    with pytest.raises(TVMError, match="cannot run on this host"):
        mod["vadd"]


def test_system_lib_source_defines_the_crt_entry_point() -> None:
    s, args = _vadd()
    mod = pytvm.build(s, args, target=M4, name="vadd")
    assert isinstance(mod, SourceModule)
    assert "TVMSystemLibEntryPoint" in mod.get_source()
    assert mod.cflags[-1] == "-DPYTVM_CRT=1"


def test_gpu_targets_are_still_refused() -> None:
    s, args = _vadd()
    with pytest.raises(TVMValueError, match="no cuda code generator"):
        pytvm.build(s, args, target="cuda", name="vadd")


@needs_arm_gcc
def test_cross_compiled_object_is_arm_and_needs_only_the_crt(tmp_path: Path) -> None:
    s, args = _vadd()
    mod = pytvm.build(s, args, target=M4, name="vadd")
    mod.export_library(tmp_path / "k.o", fcompile=cc.cross_compiler("arm-none-eabi-gcc", STRICT))
    undefined = subprocess.run(
        ["arm-none-eabi-nm", "-u", str(tmp_path / "k.o")],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    assert "TVMBackendParallelLaunch" not in undefined
    assert {u for u in undefined if u != "U"} <= {"TVMAPISetLastError", "__aeabi_uldivmod"}


@needs_arm_gcc
def test_build_cc_is_the_default_export_compiler(tmp_path: Path) -> None:
    s, args = _vadd()
    mod = pytvm.build(s, args, target=M4, name="vadd", cc="arm-none-eabi-gcc", options=STRICT)
    assert isinstance(mod, SourceModule)
    assert mod.cflags[-len(STRICT) :] == STRICT
    mod.export_library(tmp_path / "k.o")
    assert (tmp_path / "k.o").read_bytes()[18] == 40  # EM_ARM
