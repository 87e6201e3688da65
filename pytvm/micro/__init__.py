"""TVM v0.18's ``tvm.micro``: models on microcontrollers.

Model Library Format export, memory reports against a board's memory map, project templates
that build, flash and connect a board (``host``: a process over pipes; ``qemu-cortex-m4``: an
emulated MPS2-AN386 board over its UART), and ``Session`` over a board's transport.
"""

from __future__ import annotations

from .memory_maps import BUILTIN_MAPS, MemoryMap, MemoryRegion, load_memory_map
from .memory_report import MemoryMapError, MemoryReport, memory_report
from .model_library_format import (
    UnsupportedInModelLibraryFormatError,
    export_model_library_format,
    read_model_library_format,
)
from .project import (
    GeneratedProject,
    TemplateProject,
    generate_project,
    generate_project_from_mlf,
    get_microtvm_template_projects,
)
from .session import Session, SessionTerminatedError, create_local_aot_executor
from .standalone_crt import get_standalone_crt_dir
from .transport import TransportTimeouts

__all__: list[str] = [
    "BUILTIN_MAPS",
    "GeneratedProject",
    "MemoryMap",
    "MemoryMapError",
    "MemoryRegion",
    "MemoryReport",
    "Session",
    "SessionTerminatedError",
    "TemplateProject",
    "TransportTimeouts",
    "UnsupportedInModelLibraryFormatError",
    "create_local_aot_executor",
    "export_model_library_format",
    "generate_project",
    "generate_project_from_mlf",
    "get_microtvm_template_projects",
    "get_standalone_crt_dir",
    "load_memory_map",
    "memory_report",
    "read_model_library_format",
]
