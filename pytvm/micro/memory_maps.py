"""Memory maps of boards: named flash and RAM regions that a memory report fills.

A map is a built-in name (:data:`BUILTIN_MAPS`: ``"mps2-an386"``, ``"stm32f4"``,
``"nrf52840"``), a dict, or the path of a JSON file holding the dict::

    {
      "name": "my-board",                       # optional; the file's stem by default
      "regions": [
        {"name": "flash", "kind": "flash", "origin": "0x08000000", "size": "1M"},
        {"name": "sram",  "kind": "ram",   "origin": "0x20000000", "size": 196608}
      ]
    }

``kind`` is ``"flash"`` (read-only memory: code, constants, the initial values of data) or
``"ram"`` (read-write: data, the workspace, I/O buffers, stack). ``origin`` and ``size`` are
integers or strings: decimal, ``0x`` hex, or with a ``K``/``M``/``G`` suffix (1024-based).
Names are unique; a map has at least one region of each kind; regions do not overlap.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMValueError

__all__ = ["BUILTIN_MAPS", "MemoryMap", "MemoryRegion", "load_memory_map"]

KINDS = ("flash", "ram")
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


@dataclass(frozen=True, slots=True)
class MemoryRegion:
    """One region of a board's memory: ``kind`` is ``"flash"`` or ``"ram"``."""

    name: str
    kind: str
    origin: int
    size: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TVMValueError(
                f"memory region {self.name!r} has kind {self.kind!r}; expected one of {KINDS}"
            )
        if self.size <= 0 or self.origin < 0:
            raise TVMValueError(
                f"memory region {self.name!r} has origin {self.origin} and size {self.size}; "
                "expected origin >= 0 and size > 0"
            )


@dataclass(frozen=True, slots=True)
class MemoryMap:
    """A board's memory: its regions in the order sections are placed into them."""

    name: str
    regions: tuple[MemoryRegion, ...]

    def __post_init__(self) -> None:
        names = [r.name for r in self.regions]
        if len(set(names)) != len(names):
            raise TVMValueError(f"memory map {self.name!r} names a region twice: {names}")
        for kind in KINDS:
            if not any(r.kind == kind for r in self.regions):
                raise TVMValueError(
                    f"memory map {self.name!r} has no {kind!r} region; a board needs flash and RAM"
                )
        ordered = sorted(self.regions, key=lambda r: r.origin)
        for a, b in itertools.pairwise(ordered):
            if a.origin + a.size > b.origin:
                raise TVMValueError(
                    f"memory map {self.name!r}: regions {a.name!r} "
                    f"[{a.origin:#x}, {a.origin + a.size:#x}) and {b.name!r} at "
                    f"{b.origin:#x} overlap"
                )

    def of_kind(self, kind: str) -> list[MemoryRegion]:
        """The regions of ``kind``, in the map's order."""
        return [r for r in self.regions if r.kind == kind]

    def total(self, kind: str) -> int:
        """The bytes of all regions of ``kind``."""
        return sum(r.size for r in self.of_kind(kind))


def _flash_ram(name: str, flash: tuple[int, int], ram: tuple[int, int]) -> MemoryMap:
    return MemoryMap(
        name,
        (MemoryRegion("flash", "flash", *flash), MemoryRegion("ram", "ram", *ram)),
    )


#: Built-in maps: QEMU's MPS2-AN386 (as pytvm/src/crt/boards/mps2-an386/board.ld), an
#: STM32F4 (STM32F407: 1 MiB flash, 192 KiB SRAM), a Nordic nRF52840 (1 MiB, 256 KiB).
BUILTIN_MAPS: dict[str, MemoryMap] = {
    "mps2-an386": _flash_ram("mps2-an386", (0x0, 4 * 2**20), (0x20000000, 4 * 2**20)),
    "stm32f4": _flash_ram("stm32f4", (0x08000000, 2**20), (0x20000000, 192 * 2**10)),
    "nrf52840": _flash_ram("nrf52840", (0x0, 2**20), (0x20000000, 256 * 2**10)),
}


def _number(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise TVMValueError(f"{what} is {value!r}; expected a number of bytes")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            return int(text, 16)
        match = re.fullmatch(r"(\d+)\s*([KMG]?)(?:i?B)?", text, re.IGNORECASE)
        if match is not None:
            return int(match[1]) * _UNITS[match[2].upper()]
    raise TVMValueError(
        f"{what} is {value!r}; expected an integer, '0x...' hex or a number with K/M/G"
    )


def _from_dict(data: Any, default_name: str) -> MemoryMap:
    if not isinstance(data, dict) or not isinstance(data.get("regions"), list):
        raise TVMValueError(
            f"memory map {default_name!r} must be an object with a 'regions' list, got "
            f"{type(data).__name__}: see pytvm.micro.memory_maps for the format"
        )
    name = str(data.get("name", default_name))
    regions = []
    for i, region in enumerate(data["regions"]):
        where = f"memory map {name!r} region {i}"
        if not isinstance(region, dict):
            raise TVMValueError(f"{where} is {region!r}; expected an object")
        missing = [k for k in ("name", "kind", "origin", "size") if k not in region]
        if missing:
            raise TVMValueError(f"{where} ({region}) lacks {missing}")
        regions.append(
            MemoryRegion(
                name=str(region["name"]),
                kind=str(region["kind"]),
                origin=_number(region["origin"], f"{where} origin"),
                size=_number(region["size"], f"{where} size"),
            )
        )
    return MemoryMap(name, tuple(regions))


def load_memory_map(memory_map: str | Path | dict[str, Any] | MemoryMap) -> MemoryMap:
    """The :class:`MemoryMap` of a built-in name, a JSON file's path, or a dict."""
    if isinstance(memory_map, MemoryMap):
        return memory_map
    if isinstance(memory_map, dict):
        return _from_dict(memory_map, "custom")
    if isinstance(memory_map, str) and memory_map in BUILTIN_MAPS:
        return BUILTIN_MAPS[memory_map]
    path = Path(memory_map)
    if not path.is_file():
        raise TVMValueError(
            f"memory map {str(memory_map)!r} is neither a built-in map "
            f"({', '.join(BUILTIN_MAPS)}) nor a JSON file"
        )
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TVMValueError(f"memory map {path}: not JSON: {err}") from None
    return _from_dict(data, path.stem)
