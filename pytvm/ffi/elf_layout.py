"""The layout of an ELF file: its file header, program headers, section headers, dynamic entries.

Each function decodes bytes the caller read (a few hundred at most for the headers), for 32- and
64-bit files of either byte order, and raises :class:`ElfLayoutError` with the reason when the
bytes are not what the ELF format says they must be.

Examples
--------
>>> header = parse_header(ELF_MAGIC + bytes([ELFCLASS64, 1, 1]) + bytes(57))
>>> header.bits, header.byte_order
(64, 'little')
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = [
    "ELFCLASS32",
    "ELFCLASS64",
    "ELF_MAGIC",
    "ET_DYN",
    "PT_DYNAMIC",
    "PT_LOAD",
    "SHT_DYNSYM",
    "DynamicEntry",
    "ElfHeader",
    "ElfLayoutError",
    "ProgramHeader",
    "SectionHeader",
    "dynamic_entries",
    "header_size",
    "parse_header",
    "program_headers",
    "section_headers",
]

ELF_MAGIC = b"\x7fELF"
ELFCLASS32 = 1
ELFCLASS64 = 2
_ELFDATA2LSB = 1
_ELFDATA2MSB = 2
#: ``e_type`` of a shared object (and of a position-independent executable).
ET_DYN = 3
PT_LOAD = 1
PT_DYNAMIC = 2
SHT_DYNSYM = 11
#: Bytes of ``e_ident``, the identification every ELF file starts with.
_IDENT_SIZE = 16
#: Per class: the file header after ``e_ident``, a program header, a section header and a
#: dynamic entry, as struct formats without the byte-order character.
_FORMATS = {
    ELFCLASS32: ("HHIIIIIHHHHHH", "IIIIIIII", "IIIIIIIIII", "iI"),
    ELFCLASS64: ("HHIQQQIHHHHHH", "IIQQQQQQ", "IIQQQQIIQQ", "qQ"),
}


class ElfLayoutError(ValueError):
    """The bytes break the ELF format; the message says how."""


@dataclass(frozen=True, slots=True)
class ElfHeader:
    """The fields of an ELF file header that locate the rest of the file."""

    elf_class: int
    big_endian: bool
    type: int
    machine: int
    phoff: int
    shoff: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int

    @property
    def bits(self) -> int:
        """32 or 64."""
        return 32 if self.elf_class == ELFCLASS32 else 64

    @property
    def byte_order(self) -> Literal["little", "big"]:
        """``"little"`` or ``"big"``."""
        return "big" if self.big_endian else "little"

    def struct_format(self, kind: int) -> str:
        """The struct format of this file's ``kind`` (0: header after ``e_ident``, 1: program
        header, 2: section header, 3: dynamic entry).
        """
        return (">" if self.big_endian else "<") + _FORMATS[self.elf_class][kind]


class ProgramHeader(NamedTuple):
    """One program header (a segment): where its bytes lie in the file and in memory."""

    number: int
    type: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int


class SectionHeader(NamedTuple):
    """One section header."""

    type: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


class DynamicEntry(NamedTuple):
    """One entry of the dynamic section: a ``DT_*`` tag and its value."""

    tag: int
    value: int


def header_size(ident: bytes) -> int:
    """Size of the file header of the class that ``ident`` (the file's first bytes) names."""
    elf_class = ELFCLASS32 if ident[4:5] == bytes([ELFCLASS32]) else ELFCLASS64
    return _IDENT_SIZE + struct.calcsize("<" + _FORMATS[elf_class][0])


def parse_header(data: bytes) -> ElfHeader:
    """The file header at the start of ``data`` (the file's first 64 bytes hold it)."""
    if data[:4] != ELF_MAGIC:
        raise ElfLayoutError("it does not start with the ELF magic number")
    if len(data) < _IDENT_SIZE:
        raise ElfLayoutError(f"its ELF header is cut short ({len(data)} of {_IDENT_SIZE}+ bytes)")
    elf_class, encoding = data[4], data[5]
    if elf_class not in _FORMATS or encoding not in (_ELFDATA2LSB, _ELFDATA2MSB):
        raise ElfLayoutError("its ELF identification (class and byte order) is invalid")
    if len(data) < header_size(data):
        raise ElfLayoutError(
            f"its ELF header is cut short ({len(data)} of {header_size(data)} bytes)"
        )
    big_endian = encoding == _ELFDATA2MSB
    fmt = (">" if big_endian else "<") + _FORMATS[elf_class][0]
    fields = struct.unpack_from(fmt, data, _IDENT_SIZE)
    e_type, machine, _version, _entry, phoff, shoff, _flags = fields[:7]
    _ehsize, phentsize, phnum, shentsize, shnum, _shstrndx = fields[7:]
    return ElfHeader(
        elf_class, big_endian, e_type, machine, phoff, shoff, phentsize, phnum, shentsize, shnum
    )


def _entries(
    header: ElfHeader, kind: int, table: bytes, what: str = "", declared: int = 0
) -> Iterator[tuple[int, ...]]:
    """The records of ``kind`` in ``table``, each a tuple of its fields; ``declared`` is the
    record size the file header states for ``what`` (checked unless ``what`` is empty).
    """
    fmt = header.struct_format(kind)
    size = struct.calcsize(fmt)
    if what and declared != size:
        raise ElfLayoutError(
            f"its {what} are {declared} bytes each, not {size} as in every ELF{header.bits} file"
        )
    return struct.iter_unpack(fmt, table[: len(table) - len(table) % size])


def program_headers(header: ElfHeader, table: bytes) -> list[ProgramHeader]:
    """The program headers in ``table``, the bytes at ``header.phoff``."""
    records = _entries(header, 1, table, "program headers", header.phentsize)
    if header.elf_class == ELFCLASS64:  # type flags offset vaddr paddr filesz memsz align
        return [ProgramHeader(i, r[0], r[2], r[3], r[5], r[6]) for i, r in enumerate(records)]
    # type offset vaddr paddr filesz memsz flags align
    return [ProgramHeader(i, r[0], r[1], r[2], r[4], r[5]) for i, r in enumerate(records)]


def section_headers(header: ElfHeader, table: bytes) -> list[SectionHeader]:
    """The section headers in ``table``, the bytes at ``header.shoff``."""
    records = _entries(header, 2, table, "section headers", header.shentsize)
    # name type flags addr offset size link info addralign entsize
    return [SectionHeader(r[1], r[3], r[4], r[5], r[6], r[9]) for r in records]


def dynamic_entries(header: ElfHeader, data: bytes) -> list[DynamicEntry]:
    """The entries of the dynamic section ``data`` up to (not including) its ``DT_NULL``."""
    out: list[DynamicEntry] = []
    for tag, value in _entries(header, 3, data):
        if tag == 0:
            return out
        out.append(DynamicEntry(tag, value))
    raise ElfLayoutError("its dynamic section has no DT_NULL entry to end it")
