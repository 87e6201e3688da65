"""``<mod>_lib1.c``: the AOT run function, its static workspace and the linked constants.

``tvmgen_<mod>_run(inputs, outputs)`` calls each kernel directly, in the graph's order, with
pointers to its operands: the caller's inputs and outputs (from the structs), the constants
(``static const`` arrays), and intermediates in ``static uint8_t tvmgen_<mod>_workspace[N]``
at their planned offsets; the last argument is the workspace's scratch region. A kernel's
nonzero status is returned at once. An output that no kernel writes (an input, a constant, or
an entry already written to another output) is copied with ``memcpy`` after the calls. Nothing
is allocated at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...codegen.c.unpacked import UnpackedKernel
from ...ffi.errors import TVMValueError
from .constants import c_const_array
from .factory import TensorInfo
from .interface import header_name, run_function_name

__all__ = ["KernelCall", "RunFunctionSource", "run_function_source"]


@dataclass(frozen=True, slots=True)
class KernelCall:
    """One call of the run function: ``kernel`` with the entries ``args`` (inputs, then its
    ``num_outputs`` outputs; graph entry ids).
    """

    kernel: UnpackedKernel
    args: tuple[int, ...]
    num_outputs: int


@dataclass(frozen=True, slots=True)
class RunFunctionSource:
    """The parts of the run function's C file a caller needs to plan it."""

    mod_name: str
    inputs: Sequence[tuple[int, TensorInfo]]
    outputs: Sequence[tuple[int, TensorInfo]]
    #: Constant entry id -> (name, values).
    constants: Mapping[int, tuple[str, np.ndarray]]
    calls: Sequence[KernelCall]
    #: Intermediate entry id -> byte offset in the workspace (views included).
    offsets: Mapping[int, int]
    #: Entry id -> the entry whose memory it views (``__nop``).
    aliases: Mapping[int, int]
    scratch_offset: int
    workspace_bytes: int
    workspace_alignment: int = 16
    constant_alignment: int = 16


def run_function_source(src: RunFunctionSource) -> str:
    """The C text of ``<mod>_lib1.c``."""
    mod = src.mod_name
    ws = f"tvmgen_{mod}_workspace"
    lines = [
        f"// pytvm AOT executor of module {mod}: run function, workspace and constants",
        "#include <stdint.h>",
        "#include <stddef.h>",
        "#include <string.h>",
        "#include <math.h>",
        f'#include "{header_name(mod)}"',
        "",
    ]
    pointer: dict[int, str] = {}
    for eid, info in src.inputs:
        pointer[eid] = f"inputs->{info.c_name}"
    for eid, (name, values) in src.constants.items():
        symbol = f"tvmgen_{mod}_{name}"
        lines.append(c_const_array(symbol, values, src.constant_alignment))
        pointer[eid] = f"(void*)(uintptr_t){symbol}"  # the kernels only read it
    if src.workspace_bytes:
        lines.append(
            f"static uint8_t {ws}[{src.workspace_bytes}] "
            f"__attribute__((aligned({src.workspace_alignment})));"
        )
    for eid, offset in src.offsets.items():
        pointer[eid] = f"(void*)&{ws}[{offset}]"
    written = {eid for call in src.calls for eid in call.args[_num_inputs(call) :]}
    copies: list[tuple[str, str, int]] = []
    for eid, info in src.outputs:
        root = src.aliases.get(eid, eid)
        target = f"outputs->{info.c_name}"
        if root in written and root not in pointer:
            pointer[root] = target
            pointer[eid] = target
        else:
            copies.append((target, _source(pointer, root, eid), info.nbytes))
    declared: dict[str, None] = {}
    for call in src.calls:
        declared.setdefault(f"extern {call.kernel.prototype}", None)
    lines += ["", *declared, ""]
    run = run_function_name(mod)
    lines.append(
        f"int32_t {run}(struct tvmgen_{mod}_inputs* inputs, "
        f"struct tvmgen_{mod}_outputs* outputs) {{"
    )
    lines.append("  int32_t rc;")
    lines.append("  if (inputs == NULL || outputs == NULL) return -1;")
    scratch = f"&{ws}[{src.scratch_offset}]" if src.workspace_bytes else "NULL"
    for call in src.calls:
        args = []
        for eid, ctype in zip(call.args, call.kernel.param_types, strict=True):
            root = src.aliases.get(eid, eid)
            args.append(f"({ctype}*){_source(pointer, root, eid)}")
        args.append(f"{scratch}" if call.kernel.scratch_bytes else "NULL")
        lines.append(f"  rc = {call.kernel.symbol}({', '.join(args)});")
        lines.append("  if (rc != 0) return rc;")
    for target, source, nbytes in copies:
        lines.append(f"  (void)memcpy({target}, {source}, {nbytes}u);")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def _num_inputs(call: KernelCall) -> int:
    return len(call.args) - call.num_outputs


def _source(pointer: Mapping[int, str], root: int, eid: int) -> str:
    found = pointer.get(eid, pointer.get(root))
    if found is None:
        raise TVMValueError(f"AOT run function: graph entry {eid} has no memory (internal error)")
    return found
