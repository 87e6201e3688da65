"""``tvmgen_<mod>.h``: the C interface of an AOT-compiled model, as TVM v0.18 writes it
(``src/target/source/interface_c.cc``).

The header defines the size macros of every input and output
(``TVMGEN_DEFAULT_INPUT_SIZE``), ``struct tvmgen_<mod>_inputs`` / ``_outputs`` (one ``void*``
per tensor, by its C name), the prototype of ``tvmgen_<mod>_run`` and
``TVMGEN_<MOD>_WORKSPACE_SIZE``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .factory import TensorInfo

__all__ = ["header_name", "interface_header", "run_function_name"]


def header_name(mod_name: str) -> str:
    """``tvmgen_<mod_name>.h``."""
    return f"tvmgen_{mod_name}.h"


def run_function_name(mod_name: str) -> str:
    """``tvmgen_<mod_name>_run``."""
    return f"tvmgen_{mod_name}_run"


def _brief(mod_name: str, text: str) -> str:
    return f'/*!\n * \\brief {text} for TVM module "{mod_name}" \n */\n'


def _struct(mod_name: str, suffix: str, tensors: Sequence[TensorInfo]) -> str:
    fields = "".join(f"  void* {t.c_name};\n" for t in tensors)
    return f"struct tvmgen_{mod_name}_{suffix} {{\n{fields}}};\n\n"


def interface_header(
    mod_name: str,
    inputs: Sequence[TensorInfo],
    outputs: Sequence[TensorInfo],
    workspace_bytes: int,
) -> str:
    """The text of ``tvmgen_<mod_name>.h``."""
    guard = f"TVMGEN_{mod_name.upper()}_H_"
    macro = f"TVMGEN_{mod_name.upper()}"
    parts = [
        f"#ifndef {guard}\n#define {guard}\n#include <stdint.h>\n\n"
        '#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
    ]
    for kind, tensors in (("Input", inputs), ("Output", outputs)):
        for t in tensors:
            parts.append(_brief(mod_name, f"{kind} tensor {t.c_name} size (in bytes)"))
            parts.append(f"#define {macro}_{t.c_name.upper()}_SIZE {t.nbytes}\n")
    parts.append(_brief(mod_name, "Input tensor pointers"))
    parts.append(_struct(mod_name, "inputs", inputs))
    parts.append(_brief(mod_name, "Output tensor pointers"))
    parts.append(_struct(mod_name, "outputs", outputs))
    parts.append(
        "/*!\n"
        f' * \\brief entrypoint function for TVM module "{mod_name}"\n'
        " * \\param inputs Input tensors for the module \n"
        " * \\param outputs Output tensors for the module \n"
        " * \\return 0 on success, nonzero on error\n"
        " */\n"
        f"int32_t {run_function_name(mod_name)}(\n"
        f"  struct tvmgen_{mod_name}_inputs* inputs,\n"
        f"  struct tvmgen_{mod_name}_outputs* outputs\n);\n"
    )
    parts.append(_brief(mod_name, "Workspace size"))
    parts.append(f"#define {macro}_WORKSPACE_SIZE {workspace_bytes}\n")
    parts.append(f"\n#ifdef __cplusplus\n}}\n#endif\n\n#endif // {guard}\n")
    return "".join(parts)
