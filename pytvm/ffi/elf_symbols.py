"""The dynamic symbols of an ELF shared object, read from the file without loading it."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from .elf_layout import (
    ELFCLASS32,
    ELFCLASS64,
    SHT_DYNSYM,
    ElfLayoutError,
    header_size,
    parse_header,
    section_headers,
)

__all__ = ["DynamicSymbols", "read_dynamic_symbols"]

_SHN_UNDEF = 0
#: Per class: where ``st_name`` and ``st_shndx`` lie in a symbol, and the symbol's size.
_SYMBOL_LAYOUT = {ELFCLASS64: ("I2xH", 24), ELFCLASS32: ("I10xH", 16)}


@dataclass(frozen=True, slots=True)
class DynamicSymbols:
    """Names a shared object exports (``defined``) and expects from others (``undefined``)."""

    defined: frozenset[str]
    undefined: frozenset[str]


def read_dynamic_symbols(path: str | os.PathLike[str]) -> DynamicSymbols | None:
    """The dynamic symbol table of an ELF file; None for any other (or a damaged) file.

    Examples
    --------
    >>> import os
    >>> read_dynamic_symbols(os.devnull) is None
    True
    """
    with Path(path).open("rb") as f:
        start = f.read(64)
        try:
            header = parse_header(start[: header_size(start)])
            if header.shoff == 0:
                return None
            f.seek(header.shoff)
            table = f.read(header.shentsize * header.shnum)
            if len(table) < header.shentsize * header.shnum:
                return None
            sections = section_headers(header, table)
        except ElfLayoutError:
            return None
        fields, sym_size = _SYMBOL_LAYOUT[header.elf_class]
        sym_format = ">" + fields if header.big_endian else "<" + fields
        defined: set[str] = set()
        undefined: set[str] = set()
        for section in sections:
            if section.type != SHT_DYNSYM or section.entsize < sym_size:
                continue
            if section.link >= len(sections):
                continue
            f.seek(sections[section.link].offset)
            strtab = f.read(sections[section.link].size)
            f.seek(section.offset)
            symtab = f.read(section.size)
            last = len(symtab) - sym_size  # entry 0 is the null symbol: start at 1
            for pos in range(section.entsize, last + 1, section.entsize):
                st_name, st_shndx = struct.unpack_from(sym_format, symtab, pos)
                end = strtab.find(b"\0", st_name)
                name = strtab[st_name : end if end >= 0 else None].decode("utf-8", "replace")
                if name:
                    (undefined if st_shndx == _SHN_UNDEF else defined).add(name)
    return DynamicSymbols(frozenset(defined), frozenset(undefined))
