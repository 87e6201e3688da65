"""Checking a shared object before it is loaded, so a damaged file raises instead of crashing.

The dynamic loader trusts the file: it maps each ``LOAD`` segment's bytes and reads the dynamic
section, symbol and hash tables through those mappings. A truncated file makes that a read past
the end of the file (``SIGBUS``); a zeroed dynamic section or hash table makes it a read through
a null or garbage address (``SIGSEGV``, ``SIGFPE``). :func:`check_shared_object` reads the
headers (a few hundred bytes, never the whole file) and checks what the loader will rely on:

- the ELF magic, the class (32/64-bit), byte order and machine of this host, type ``ET_DYN``;
- the file header, the program header table and the section header table lie inside the file;
- every ``LOAD`` segment's file bytes (``p_offset + p_filesz``) lie inside the file;
- a ``DYNAMIC`` segment exists, lies inside the file and inside a ``LOAD`` segment, and its
  entries parse: ended by ``DT_NULL``, with ``DT_STRTAB`` and ``DT_SYMTAB``, and every table
  they point to (strings, symbols, hash tables, relocations, init/fini arrays) inside the file
  bytes of a ``LOAD`` segment; hash tables have buckets.

Segments are numbered by their index in the program header table, as ``readelf -l`` numbers
them. On a host whose own executable is not ELF (macOS, Windows) the check does nothing.

Examples
--------
>>> import tempfile
>>> with tempfile.NamedTemporaryFile(suffix=".so") as f:
...     try:
...         check_shared_object(f.name)
...     except SharedObjectError as err:
...         print(str(err).replace(f.name, "net.so"))
cannot load net.so: the file is empty (0 bytes; a failed copy or download?)
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from functools import cache

from .elf_layout import (
    ELF_MAGIC,
    ET_DYN,
    PT_DYNAMIC,
    PT_LOAD,
    ElfHeader,
    ElfLayoutError,
    ProgramHeader,
    dynamic_entries,
    header_size,
    parse_header,
    program_headers,
)
from .errors import SharedObjectError

__all__ = ["check_shared_object", "machine_name"]

_MACHINES = {
    2: "SPARC",
    3: "x86",
    8: "MIPS",
    20: "PowerPC",
    21: "PowerPC64",
    22: "S/390",
    40: "ARM",
    43: "SPARC V9",
    62: "x86-64",
    164: "Hexagon",
    183: "AArch64",
    243: "RISC-V",
    258: "LoongArch",
}
_TYPES = {
    1: "an ELF relocatable object (ET_REL), not a shared object; link it with `cc -shared`",
    2: "an ELF executable (ET_EXEC), not a shared object",
    4: "an ELF core dump (ET_CORE), not a shared object",
}
_DT_STRTAB, _DT_SYMTAB, _DT_STRSZ = 5, 6, 10
_DT_HASH, _DT_GNU_HASH = 4, 0x6FFFFEF5
#: Tags whose value is an offset into the string table.
_NAME_TAGS = {1: "DT_NEEDED", 14: "DT_SONAME", 15: "DT_RPATH", 29: "DT_RUNPATH"}
#: Tables the loader reads through their address: (address tag, its name, size tag or None).
_TABLES = (
    (_DT_STRTAB, "DT_STRTAB", _DT_STRSZ),
    (_DT_SYMTAB, "DT_SYMTAB", None),
    (_DT_HASH, "DT_HASH", None),
    (_DT_GNU_HASH, "DT_GNU_HASH", None),
    (7, "DT_RELA", 8),
    (17, "DT_REL", 18),
    (36, "DT_RELR", 35),
    (23, "DT_JMPREL", 2),
    (25, "DT_INIT_ARRAY", 27),
    (26, "DT_FINI_ARRAY", 28),
    (32, "DT_PREINIT_ARRAY", 33),
    (12, "DT_INIT", None),
    (13, "DT_FINI", None),
    (0x6FFFFFF0, "DT_VERSYM", None),
    (0x6FFFFFFC, "DT_VERDEF", None),
    (0x6FFFFFFE, "DT_VERNEED", None),
)
_SPACE = 0x20
_TEXT_CONTROLS = b"\t\n\r"
_PARTIAL = "(a partial copy or download?)"
_ZEROED = "(zeroed or overwritten?)"


def machine_name(machine: int) -> str:
    """A readable name of the ELF machine number ``machine`` (``62`` -> ``"x86-64"``)."""
    return _MACHINES.get(machine, f"ELF machine {machine}")


@cache
def _host() -> ElfHeader | None:
    """The ELF header of this process's executable; None where executables are not ELF."""
    for exe in (sys.executable, "/proc/self/exe"):
        try:
            with open(exe, "rb") as f:  # noqa: PTH123 - a path that may be a /proc link
                return parse_header(f.read(64))
        except (OSError, ElfLayoutError):
            continue
    return None


def check_shared_object(path: str | os.PathLike[str]) -> None:
    """Raise :class:`SharedObjectError` (a ``ValueError``) if ``path`` is not a shared object
    this host's dynamic loader can load safely; return None if it is.

    A file that cannot be opened, or is not a regular file, is left to the loader to report.
    """
    host = _host()
    if host is None:
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return
        fault = _fault(fd, info.st_size, host)
    finally:
        os.close(fd)
    if fault:
        raise SharedObjectError(f"cannot load {os.fspath(path)}: {fault}")


def _read(fd: int, offset: int, size: int) -> bytes:
    return os.pread(fd, size, offset)


def _truncated(size: int, what: str, end: int) -> str:
    return f"truncated: the file is {size} bytes but its {what} ends at byte {end} {_PARTIAL}"


def _fault(fd: int, size: int, host: ElfHeader) -> str:  # noqa: PLR0911 - one return per fault
    """What is wrong with the file open at ``fd`` (``size`` bytes), or ``""``."""
    start = _read(fd, 0, 64)
    if start[:4] != ELF_MAGIC:
        return _not_elf(start)
    if size < header_size(start):
        return _truncated(size, "ELF header", header_size(start))
    try:
        header = parse_header(start)
    except ElfLayoutError as err:
        return f"corrupt: {err}"
    ours = (host.machine, host.elf_class, host.big_endian)
    if (header.machine, header.elf_class, header.big_endian) != ours:
        return f"built for {_describe(header, host)}, this host is {_describe(host, header)}"
    if header.type != ET_DYN:
        return _TYPES.get(header.type, f"an ELF file of type {header.type}, not a shared object")
    if header.phnum == 0:
        return f"corrupt: it has no program headers {_ZEROED}"
    table_end = header.phoff + header.phnum * header.phentsize
    if table_end > size:
        return _truncated(size, "program header table", table_end)
    try:
        segments = program_headers(header, _read(fd, header.phoff, table_end - header.phoff))
    except ElfLayoutError as err:
        return f"corrupt: {err}"
    return _segment_fault(fd, size, header, segments)


def _segment_fault(fd: int, size: int, header: ElfHeader, segments: Sequence[ProgramHeader]) -> str:
    loads = [seg for seg in segments if seg.type == PT_LOAD]
    if not loads:
        return f"corrupt: its program headers name no LOAD segment {_ZEROED}"
    for seg in loads:
        if seg.offset + seg.filesz > size:
            return _truncated(size, f"LOAD segment {seg.number}", seg.offset + seg.filesz)
    sections_end = header.shoff + header.shnum * header.shentsize
    if header.shoff and sections_end > size:
        return _truncated(size, "section header table", sections_end)
    dynamic = [seg for seg in segments if seg.type == PT_DYNAMIC]
    if not dynamic:
        return f"corrupt: it has no DYNAMIC segment, which every shared object has {_ZEROED}"
    return _dynamic_fault(fd, size, header, loads, dynamic[0])


def _describe(header: ElfHeader, other: ElfHeader) -> str:
    """``ARM (ELFCLASS32)``, with the byte order when it differs from ``other``'s."""
    order = f", {header.byte_order}-endian" if header.big_endian != other.big_endian else ""
    return f"{machine_name(header.machine)} (ELFCLASS{header.bits}{order})"


def _not_elf(start: bytes) -> str:  # noqa: PLR0911 - one return per kind of file
    if not start:
        return "the file is empty (0 bytes; a failed copy or download?)"
    if start.startswith(b"!<arch>\n"):
        return "a static archive (ar), not a shared object; link it into one with `cc -shared`"
    if start.startswith(b"version https://git-lfs"):
        return "a Git LFS pointer, not the library itself; fetch it with `git lfs pull`"
    if start[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return "a Mach-O (macOS) binary, not an ELF shared object"
    if start.startswith(b"MZ"):
        return "a Windows (PE) binary, not an ELF shared object"
    if not start.strip(b"\0"):
        return f"not a shared object: its first {len(start)} bytes are all zero {_ZEROED}"
    if all(byte >= _SPACE or byte in _TEXT_CONTROLS for byte in start) and b"\x7f" not in start:
        text = start.decode("utf-8", "replace")
        return f"a text file, not a shared object (it starts with {text[:40]!r})"
    return f"not an ELF shared object: its first bytes are {start[:8].hex(' ')}, not 7f 45 4c 46"


def _file_offset(loads: Sequence[ProgramHeader], address: int, length: int) -> int | None:
    """The file offset of ``length`` bytes at ``address``, if a LOAD segment's file bytes hold
    them all.
    """
    for seg in loads:
        if seg.vaddr <= address and address + length <= seg.vaddr + seg.filesz:
            return seg.offset + address - seg.vaddr
    return None


def _dynamic_fault(  # noqa: PLR0911 - one return per fault
    fd: int, size: int, header: ElfHeader, loads: Sequence[ProgramHeader], dynamic: ProgramHeader
) -> str:
    if dynamic.offset + dynamic.filesz > size:
        return _truncated(
            size, f"DYNAMIC segment {dynamic.number}", dynamic.offset + dynamic.filesz
        )
    if _file_offset(loads, dynamic.vaddr, dynamic.filesz) is None:
        return f"corrupt: its DYNAMIC segment {dynamic.number} lies in no LOAD segment"
    try:
        entries = dynamic_entries(header, _read(fd, dynamic.offset, dynamic.filesz))
    except ElfLayoutError as err:
        return f"corrupt: {err} {_ZEROED}"
    if not entries:
        return f"corrupt: its dynamic section is empty {_ZEROED}"
    values = {entry.tag: entry.value for entry in entries}
    for tag, name, size_tag in _TABLES:
        if tag not in values:
            if tag in (_DT_STRTAB, _DT_SYMTAB):
                return f"corrupt: its dynamic section has no {name} entry {_ZEROED}"
            continue
        length = values.get(size_tag, 0) if size_tag is not None else 1
        if _file_offset(loads, values[tag], length) is None:
            return (
                f"corrupt: its {name} table (address {values[tag]:#x}, {length} bytes) lies "
                f"outside the file bytes of its LOAD segments {_ZEROED}"
            )
    for entry in entries:
        tag_name = _NAME_TAGS.get(entry.tag)
        if tag_name and entry.value >= values.get(_DT_STRSZ, 0):
            return (
                f"corrupt: its {tag_name} entry names string {entry.value}, past its string table"
            )
    return _hash_fault(fd, header, loads, values)


def _hash_fault(
    fd: int, header: ElfHeader, loads: Sequence[ProgramHeader], values: dict[int, int]
) -> str:
    """A hash table with no buckets (lookups divide by their number) or whose bucket arrays
    leave the file's segments.
    """
    word = header.bits // 8
    order = header.byte_order
    for tag, name in ((_DT_GNU_HASH, "GNU hash"), (_DT_HASH, "DT_HASH")):
        if tag not in values:
            continue
        offset = _file_offset(loads, values[tag], 16)
        if offset is None:
            return f"corrupt: its {name} table lies outside the file bytes of its LOAD segments"
        head = _read(fd, offset, 16)
        nbuckets = int.from_bytes(head[0:4], order)
        if nbuckets == 0:
            return f"corrupt: its {name} table has no buckets {_ZEROED}"
        if tag == _DT_GNU_HASH:
            bloom = int.from_bytes(head[8:12], order)
            if bloom == 0 or bloom & (bloom - 1):
                return (
                    f"corrupt: its {name} table has a bloom filter of {bloom} words, not a "
                    f"power of two {_ZEROED}"
                )
            table = 16 + bloom * word + nbuckets * 4
        else:
            table = 8 + (nbuckets + int.from_bytes(head[4:8], order)) * 4
        if _file_offset(loads, values[tag], table) is None:
            return f"corrupt: its {name} table ({table} bytes) runs past its LOAD segment"
    return ""
