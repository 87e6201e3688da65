"""The dynamic symbols of an ELF shared object, read from the file without loading it."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DynamicSymbols", "read_dynamic_symbols"]

_SHT_DYNSYM = 11
_SHN_UNDEF = 0
_ELFCLASS64 = 2
_ELFDATA2LSB = 1
#: Sizes of the ELF64 file header, of a section header and of a symbol (``Elf64_Sym``).
_EHDR_SIZE = 64
_SHDR_SIZE = 64
_SYM_SIZE = 24


@dataclass(frozen=True, slots=True)
class DynamicSymbols:
    """Names a shared object exports (``defined``) and expects from others (``undefined``)."""

    defined: frozenset[str]
    undefined: frozenset[str]


def read_dynamic_symbols(path: str | os.PathLike[str]) -> DynamicSymbols | None:
    """The dynamic symbol table of a 64-bit little-endian ELF file; None for any other file.

    Examples
    --------
    >>> import os
    >>> read_dynamic_symbols(os.devnull) is None
    True
    """
    with Path(path).open("rb") as f:
        header = f.read(_EHDR_SIZE)
        if (
            len(header) < _EHDR_SIZE
            or header[:4] != b"\x7fELF"
            or header[4] != _ELFCLASS64
            or header[5] != _ELFDATA2LSB
        ):
            return None
        (shoff,) = struct.unpack_from("<Q", header, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", header, 0x3A)
        if shoff == 0 or shentsize < _SHDR_SIZE:
            return None
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        if len(table) < shentsize * shnum:
            return None
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        defined: set[str] = set()
        undefined: set[str] = set()
        for _name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
            if sh_type != _SHT_DYNSYM or entsize < _SYM_SIZE or link >= shnum:
                continue
            f.seek(sections[link][4])
            strtab = f.read(sections[link][5])
            f.seek(offset)
            symtab = f.read(size)
            last = len(symtab) - _SYM_SIZE  # entry 0 is the null symbol: start at 1
            for pos in range(entsize, last + 1, entsize):
                st_name, _st_info, _other, st_shndx = struct.unpack_from("<IBBH", symtab, pos)
                end = strtab.find(b"\0", st_name)
                name = strtab[st_name : end if end >= 0 else None].decode("utf-8", "replace")
                if name:
                    (undefined if st_shndx == _SHN_UNDEF else defined).add(name)
    return DynamicSymbols(frozenset(defined), frozenset(undefined))
