"""Will it fit: a compiled model's flash and RAM per section against a board's memory map.

``pytvm.micro.memory_report(module, "stm32f4")`` measures an AOT executor factory (or a Model
Library Format archive, or what :func:`read_model_library_format` returned) by compiling its
C for the target (``arm-none-eabi-gcc`` for bare-metal Arm, the host ``cc`` for the host;
the module's cflags, ``-Os``) and reading ``size -A``. Sections:

==============  ======  =============================================================
section         memory  what
==============  ======  =============================================================
code            flash   the model's ``.text`` (kernels and the run function)
weights         flash   the model's ``.rodata``: the constants (``constant_bytes``)
data            both    the model's ``.data`` (initial values in flash, copied to RAM)
workspace       ram     the model's ``.bss``: the static workspace (``workspace_bytes``)
io              ram     the input and output buffers (``io_bytes``)
stack           ram     the deepest call chain: the model's run function and kernels,
                        plus the runtime's from ``main`` (GCC's ``-fcallgraph-info``; C
                        library frames and calls through pointers not counted)
crt code        flash   the C runtime's device image: ``.text``/``.rodata``/``.data``
crt data        ram     the runtime's ``.data``/``.bss`` (its pool, RPC buffers)
==============  ======  =============================================================

The runtime is the CRT's device image (MinRPC, serial framing and the AOT executor; config
``"minimal"`` by default, a microcontroller's, or ``"full"``), built once per compiler and
cached; ``crt=None`` leaves it out (a standalone bundle). Sections go whole into the regions
of their memory in the map's order, largest first. With ``check=True`` a model that does not
fit raises :class:`MemoryMapError` naming the region, the bytes needed and the bytes over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMError, TVMTypeError
from ._object_sizes import measure_crt_image, measure_sources
from .memory_maps import MemoryMap, MemoryRegion, load_memory_map

__all__ = ["MemoryMapError", "MemoryReport", "RegionUse", "Section", "memory_report"]


class MemoryMapError(TVMError):
    """A model does not fit a board's memory map (the message names the region and bytes)."""


@dataclass(frozen=True, slots=True)
class Section:
    """Bytes a model needs in one kind of memory (``"flash"`` or ``"ram"``)."""

    name: str
    memory: str
    nbytes: int
    note: str = ""


@dataclass
class RegionUse:
    """One region of the map with the sections placed in it."""

    region: MemoryRegion
    sections: list[Section] = field(default_factory=list)

    @property
    def used(self) -> int:
        """Bytes of the sections placed here."""
        return sum(s.nbytes for s in self.sections)

    @property
    def free(self) -> int:
        """Bytes left (negative: over)."""
        return self.region.size - self.used


@dataclass
class MemoryReport:
    """Sections of a model and where they go in a memory map; ``print(report)`` is a table."""

    model: str
    target: str
    memory_map: MemoryMap
    sections: list[Section]
    regions: list[RegionUse]
    unplaced: list[Section]

    @property
    def fits(self) -> bool:
        """Whether every section has a place."""
        return not self.unplaced

    def needed(self, memory: str) -> int:
        """The bytes all sections of ``memory`` (``"flash"``/``"ram"``) need."""
        return sum(s.nbytes for s in self.sections if s.memory == memory)

    def problems(self) -> list[str]:
        """One sentence per memory that does not fit (empty when the model fits)."""
        out = []
        for memory in ("flash", "ram"):
            missing = [s for s in self.unplaced if s.memory == memory]
            if not missing:
                continue
            need, has = self.needed(memory), self.memory_map.total(memory)
            names = [r.name for r in self.memory_map.of_kind(memory)]
            where = memory if names == [memory] else f"{memory} ({'+'.join(names)})"
            parts = ", ".join(
                f"{s.name} {s.nbytes:,}"
                for s in sorted(self.sections, key=lambda s: -s.nbytes)
                if s.memory == memory
            )
            if need > has:
                out.append(
                    f"{self.memory_map.name}: {where} needs {need:,} bytes, has "
                    f"{has:,}: {need - has:,} bytes over ({parts})"
                )
            else:
                out.append(
                    f"{self.memory_map.name}: {where} has {has:,} bytes for "
                    f"{need:,}, but {', '.join(s.name for s in missing)} fits in no single "
                    f"region ({parts})"
                )
        return out

    def __str__(self) -> str:
        lines = [f"memory report: {self.model} for '{self.target}' on {self.memory_map.name}"]
        lines.append(f"  {'section':<11} {'memory':<6} {'bytes':>12}  note")
        for s in self.sections:
            lines.append(f"  {s.name:<11} {s.memory:<6} {s.nbytes:>12,}  {s.note}")
        lines.append(
            f"  {'region':<11} {'kind':<6} {'origin':>12} {'size':>12} {'used':>12} "
            f"{'free':>12}  use"
        )
        for use in self.regions:
            r = use.region
            pct = 100.0 * use.used / r.size
            lines.append(
                f"  {r.name:<11} {r.kind:<6} {r.origin:>#12x} {r.size:>12,} {use.used:>12,} "
                f"{use.free:>12,}  {pct:5.1f}%"
            )
        for s in self.unplaced:
            lines.append(f"  {s.name:<11} {s.memory:<6} {s.nbytes:>12,}  placed in no region")
        lines.append("  fits" if self.fits else "  DOES NOT FIT: " + "; ".join(self.problems()))
        return "\n".join(lines)


def _place(memory_map: MemoryMap, sections: list[Section]) -> tuple[list[RegionUse], list[Section]]:
    uses = [RegionUse(r) for r in memory_map.regions]
    unplaced = []
    for s in sorted(sections, key=lambda s: -s.nbytes):
        spot = next((u for u in uses if u.region.kind == s.memory and u.free >= s.nbytes), None)
        if spot is None:
            unplaced.append(s)
        else:
            spot.sections.append(s)
    for u in uses:
        u.sections.sort(key=sections.index)
    return uses, unplaced


def _as_model(module: Any) -> Any:
    if isinstance(module, (str, Path)):
        from .model_library_format_reader import read_model_library_format

        return read_model_library_format(module)
    if not hasattr(module, "workspace_bytes") or not hasattr(module, "lib"):
        raise TVMTypeError(
            f"memory_report takes an AOT executor factory (relay.build with "
            f"Executor('aot')), a Model Library Format tar or its reader's result; got "
            f"{type(module).__name__} (a graph executor keeps its weights in RAM at run time: "
            "build with the AOT executor)"
        )
    return module


def _sections(model: Any, crt: str | None) -> list[Section]:
    lib = model.lib
    measured = measure_sources(dict(lib.sources), dict(lib.headers), list(lib.cflags), model.target)
    run = f"tvmgen_{model.mod_name}_run"
    model_stack = measured.deepest(run) or measured.stack
    sections = [
        Section("code", "flash", measured.text, f"{len(model.kernels)} kernels + {run}"),
        Section("weights", "flash", measured.rodata, f"constants {model.constant_bytes:,} B"),
        Section("data", "flash", measured.data, "initial values of .data"),
        Section("data", "ram", measured.data, ".data"),
        Section("workspace", "ram", measured.bss, f"workspace {model.workspace_bytes:,} B"),
        Section("io", "ram", int(model.io_bytes), "input and output buffers"),
    ]
    if crt is None:
        sections.append(Section("stack", "ram", model_stack, f"{run} and its kernels"))
    else:
        image = measure_crt_image(model.target, crt)
        sections += [
            Section(
                "stack",
                "ram",
                model_stack + image.stack,
                f"model {model_stack:,} + runtime "
                f"{image.stack:,} (deepest chains; C library not counted)",
            ),
            Section(
                "crt code",
                "flash",
                image.text + image.rodata + image.data,
                f"CRT image ({crt}) .text/.rodata/.data",
            ),
            Section("crt data", "ram", image.data + image.bss, f"CRT image ({crt}) .data/.bss"),
        ]
    return [s for s in sections if s.nbytes > 0 or s.name in ("code", "weights", "workspace")]


def memory_report(
    module: Any,
    memory_map: str | Path | dict[str, Any] | MemoryMap,
    *,
    check: bool = True,
    crt: str | None = "minimal",
) -> MemoryReport:
    """Measure ``module`` and place its sections in ``memory_map``.

    Parameters
    ----------
    module : AOTExecutorFactoryModule, MLF tar path, or ``read_model_library_format``'s result
    memory_map : a built-in name (``"mps2-an386"``, ``"stm32f4"``, ``"nrf52840"``), a JSON
        file's path, a dict (see :mod:`pytvm.micro.memory_maps`) or a ``MemoryMap``
    check : raise :class:`MemoryMapError` when the model does not fit (default)
    crt : the C runtime image counted beside the model: ``"minimal"``, ``"full"`` or None

    Examples
    --------
    >>> report = pytvm.micro.memory_report(factory, "stm32f4", check=False)  # doctest: +SKIP
    >>> report.fits, report.regions[0].free  # doctest: +SKIP
    (True, 921344)
    """
    mmap = load_memory_map(memory_map)
    model = _as_model(module)
    sections = _sections(model, crt)
    regions, unplaced = _place(mmap, sections)
    report = MemoryReport(
        model=str(model.mod_name),
        target=str(model.target),
        memory_map=mmap,
        sections=sections,
        regions=regions,
        unplaced=unplaced,
    )
    if check and not report.fits:
        raise MemoryMapError("; ".join(report.problems()))
    return report
