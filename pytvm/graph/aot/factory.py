"""``AOTExecutorFactoryModule``: what an AOT build returns (TVM's
``relay.backend.executor_factory.AOTExecutorFactoryModule``), and the records it lists.

The factory holds the generated C (``lib``, a :class:`~pytvm.runtime.source_module.SourceModule`
with ``<mod>_lib0.c`` = the kernels, ``<mod>_lib1.c`` = the run function, its workspace and
constants, and the header ``tvmgen_<mod>.h``), the linked constants (``params``), the model's
interface (``inputs``, ``outputs``) and its memory figures: ``workspace_bytes`` (the one static
workspace: intermediates at the arena planner's offsets, then the largest kernel scratch),
``constant_bytes`` (the const arrays), ``io_bytes`` (inputs and outputs), ``memory_plan`` (each
buffer of the workspace) and ``kernels`` (in call order, with the scratch each needs).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ...runtime.source_module import SourceModule
from ...target import Target

__all__ = ["AOTExecutorFactoryModule", "KernelInfo", "PlannedBuffer", "TensorInfo", "c_identifier"]


def c_identifier(name: str) -> str:
    """``name`` as a C identifier, as TVM's ``SanitizeName``: every character other than a
    letter or digit becomes ``_`` (and a leading digit gets a ``_`` before it).
    """
    out = "".join(c if c.isascii() and c.isalnum() else "_" for c in name)
    return "_" + out if not out or out[0].isdigit() else out


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """An input or output of the model: its graph ``name``, ``shape``, ``dtype`` and size in
    bytes; ``c_name`` is its member of the ``tvmgen_<mod>_inputs``/``_outputs`` struct
    (by default ``name`` sanitized).
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    c_name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        if not self.c_name:
            object.__setattr__(self, "c_name", c_identifier(self.name))


@dataclass(frozen=True, slots=True)
class PlannedBuffer:
    """A buffer in the static workspace: ``nbytes`` at byte ``offset``, alive from step
    ``first_step`` to ``last_step`` (kernel calls, inclusive); ``kind`` is ``"intermediate"``
    (a value between kernels) or ``"scratch"`` (a kernel's own temporary memory).
    """

    name: str
    offset: int
    nbytes: int
    first_step: int
    last_step: int
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in ("intermediate", "scratch"):
            raise TVMValueError(
                f"PlannedBuffer {self.name}: kind {self.kind!r} must be 'intermediate' or 'scratch'"
            )


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """A kernel call of the run function: the C function ``name`` and the scratch bytes of the
    workspace it uses.
    """

    name: str
    scratch_bytes: int


class AOTExecutorFactoryModule:
    """An ahead-of-time compiled model (see the module docstring); ``export_library("m.tar")``
    writes ``src/``, ``include/`` and ``module.mk``, as a source module.
    """

    def __init__(
        self,
        *,
        mod_name: str,
        target: Target,
        executor: Any,
        runtime: Any,
        lib: SourceModule,
        params: Mapping[str, np.ndarray],
        inputs: Sequence[TensorInfo],
        outputs: Sequence[TensorInfo],
        workspace_bytes: int,
        constant_bytes: int,
        memory_plan: Sequence[PlannedBuffer],
        kernels: Sequence[KernelInfo],
        ir_text: str,
    ) -> None:
        self.mod_name = mod_name
        self.target = target
        self.executor = executor
        self.runtime = runtime
        self.lib = lib
        self.params: dict[str, np.ndarray] = dict(params)
        self.inputs: list[TensorInfo] = list(inputs)
        self.outputs: list[TensorInfo] = list(outputs)
        self.workspace_bytes = workspace_bytes
        self.constant_bytes = constant_bytes
        self.memory_plan: list[PlannedBuffer] = list(memory_plan)
        self.kernels: list[KernelInfo] = list(kernels)
        self.ir_text = ir_text

    @property
    def io_bytes(self) -> int:
        """Bytes of the inputs and outputs together (the caller's buffers)."""
        return sum(t.nbytes for t in (*self.inputs, *self.outputs))

    @property
    def libmod_name(self) -> str:
        """TVM's name for ``mod_name``."""
        return self.mod_name

    def get_params(self) -> dict[str, np.ndarray]:
        """The constants linked into ``<mod>_lib1.c``, by name."""
        return dict(self.params)

    def get_lib(self) -> SourceModule:
        """The generated C (``lib``)."""
        return self.lib

    def get_executor_config(self) -> str:
        """The executor's configuration: the fused graph (TVM returns the AOT function's IR)."""
        return self.ir_text

    def get_source(self, fmt: str = "") -> str:
        """The C of every source file, in order."""
        return self.lib.get_source(fmt)

    def export_library(self, file_name: str | os.PathLike[str], **kwargs: Any) -> Any:
        """``lib.export_library``: ``*.tar`` → ``src/``, ``include/``, ``module.mk``; another
        name is compiled with ``fcompile`` (see :meth:`SourceModule.export_library`).
        """
        return self.lib.export_library(file_name, **kwargs)

    def __getitem__(self, key: str) -> Any:
        raise TVMValueError(
            f"AOTExecutorFactoryModule {self.mod_name!r}: the AOT executor is C code "
            f"(tvmgen_{self.mod_name}_run) that runs where it is compiled; there is no "
            f"{key!r} function to call here. Export it (export_library('model.tar'), "
            "pytvm.micro.export_model_library_format) or run it on a device through "
            "pytvm.micro (generate_project, Session.create_aot_executor())"
        )

    def __repr__(self) -> str:
        return (
            f"AOTExecutorFactoryModule({self.mod_name!r}, target={str(self.target)!r}, "
            f"{len(self.kernels)} kernel calls, workspace {self.workspace_bytes} B, "
            f"constants {self.constant_bytes} B, io {self.io_bytes} B)"
        )
