"""A damaged or foreign shared object raises an error naming the file and the fault; the process
loading it survives. Each file is loaded in a child process, so a loader crash (SIGBUS, SIGSEGV)
fails the test instead of ending the test run.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytvm.ffi.elf_check import check_shared_object
from pytvm.ffi.errors import SharedObjectError
from pytvm.ffi.libinfo import compile_shared, find_cc

pytestmark = pytest.mark.needs_cc

SOURCE = r"""
#include <stdint.h>
static int64_t table[4096] = {1, 2, 3};  /* some data, so the segments have weight */
int64_t lookup(int i) { return table[i & 4095]; }
"""
PARTIAL = "(a partial copy or download?)"
LOAD_SCRIPT = r"""
import sys
import pytvm
try:
    pytvm.runtime.load_module(sys.argv[1])
except ValueError as err:
    print(f"{type(err).__name__}: {err}")
else:
    print("loaded")
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("elf")
    (folder / "lib.c").write_text(SOURCE)
    return compile_shared([folder / "lib.c"], folder / "lib.so")


def _loads(tmp_path: Path) -> str:
    """What ``load_module`` of ``tmp_path/net.so`` does in a fresh process: its last line."""
    result = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, str(tmp_path / "net.so")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"the process died ({result.returncode}): {result.stderr}"
    return result.stdout.strip().splitlines()[-1]


def _loads_segments(data: bytes) -> list[tuple[int, int, int]]:
    """``(index, p_offset, p_filesz)`` of each LOAD program header of a 64-bit ELF file."""
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        p_type, _, offset, _, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            out.append((i, offset, filesz))
    return out


def _header_only(data: bytes) -> tuple[bytes, str]:
    return data[
        :40
    ], f"truncated: the file is 40 bytes but its ELF header ends at byte 64 {PARTIAL}"


def _mid_program_headers(data: bytes) -> tuple[bytes, str]:
    phnum = struct.unpack_from("<H", data, 0x38)[0]
    cut = 64 + 56 + 20
    end = 64 + 56 * phnum
    return data[:cut], (
        f"truncated: the file is {cut} bytes but its program header table ends at byte {end} "
        + PARTIAL
    )


def _mid_segment(data: bytes) -> tuple[bytes, str]:
    index, offset, filesz = _loads_segments(data)[1]
    cut = offset + filesz // 2
    return data[:cut], (
        f"truncated: the file is {cut} bytes but its LOAD segment {index} ends at byte "
        f"{offset + filesz} {PARTIAL}"
    )


def _second_half_zeroed(data: bytes) -> tuple[bytes, str]:
    half = len(data) // 2
    return data[:half] + bytes(len(data) - half), (
        "corrupt: its dynamic section is empty (zeroed or overwritten?)"
    )


def _garbage(data: bytes) -> tuple[bytes, str]:
    noise = bytes((i * 151 + 7) % 256 for i in range(len(data)))
    first = noise[:8].hex(" ")
    return noise, f"not an ELF shared object: its first bytes are {first}, not 7f 45 4c 46"


def _text(data: bytes) -> tuple[bytes, str]:
    del data
    return b"INPUT(-lfoo)\n", "a text file, not a shared object (it starts with 'INPUT(-lfoo)\\n')"


DAMAGES: dict[str, Callable[[bytes], tuple[bytes, str]]] = {
    "header_only": _header_only,
    "mid_program_headers": _mid_program_headers,
    "mid_segment": _mid_segment,
    "second_half_zeroed": _second_half_zeroed,
    "garbage": _garbage,
    "text": _text,
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_library_raises_naming_the_file_and_the_fault(
    library: Path, tmp_path: Path, damage: str
) -> None:
    data, fault = DAMAGES[damage](library.read_bytes())
    (tmp_path / "net.so").write_bytes(data)
    assert _loads(tmp_path) == f"SharedObjectError: cannot load {tmp_path / 'net.so'}: {fault}"


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the expected text names x86-64")
def test_a_library_for_another_machine_names_both_machines(library: Path, tmp_path: Path) -> None:
    data = library.read_bytes()
    (tmp_path / "net.so").write_bytes(data[:18] + struct.pack("<H", 183) + data[20:])  # AArch64
    assert _loads(tmp_path) == (
        f"SharedObjectError: cannot load {tmp_path / 'net.so'}: built for AArch64 (ELFCLASS64), "
        "this host is x86-64 (ELFCLASS64)"
    )


def test_a_whole_library_passes_the_check_and_loads(library: Path, tmp_path: Path) -> None:
    shutil.copyfile(library, tmp_path / "net.so")
    check_shared_object(tmp_path / "net.so")
    assert _loads(tmp_path) == "loaded"


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="expected texts name an x86-64 host")
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_an_object_built_for_arm_names_its_machine(tmp_path: Path) -> None:
    (tmp_path / "k.c").write_text("int twice(int x) { return 2 * x; }\n")
    subprocess.run(
        ["arm-none-eabi-gcc", "-c", str(tmp_path / "k.c"), "-o", str(tmp_path / "net.so")],
        check=True,
    )
    assert _loads(tmp_path) == (
        f"SharedObjectError: cannot load {tmp_path / 'net.so'}: built for ARM (ELFCLASS32), "
        "this host is x86-64 (ELFCLASS64)"
    )


def test_every_truncation_of_a_library_is_caught(library: Path, tmp_path: Path) -> None:
    data = library.read_bytes()
    path = tmp_path / "cut.so"
    for cut in range(0, len(data), 97):
        path.write_bytes(data[:cut])
        with pytest.raises(SharedObjectError, match=f"cannot load {path}: "):
            check_shared_object(path)


def test_an_empty_file_and_an_object_file_are_not_shared_objects(tmp_path: Path) -> None:
    (tmp_path / "empty.so").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty.so: the file is empty \(0 bytes"):
        check_shared_object(tmp_path / "empty.so")
    (tmp_path / "k.c").write_text("int f(void) { return 1; }\n")
    cc = find_cc()
    assert cc is not None
    subprocess.run([cc, "-c", str(tmp_path / "k.c"), "-o", str(tmp_path / "k.so")], check=True)
    with pytest.raises(
        ValueError, match=re.escape("an ELF relocatable object (ET_REL), not a shared")
    ):
        check_shared_object(tmp_path / "k.so")
