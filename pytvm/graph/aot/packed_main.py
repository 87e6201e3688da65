"""What TVM's packed AOT interface (``Executor("aot")``'s defaults: ``interface-api: packed``)
adds to ``<mod>_lib1.c``: ``tvmgen_<mod>___tvm_main__``, a packed function of the C runtime.

It takes the inputs then the outputs as ``DLTensor`` arguments (``kTVMDLTensorHandle`` or
``kTVMNDArrayHandle``), checks each one's dtype, shape and contiguity, and calls
``tvmgen_<mod>_run`` with their data pointers (the struct interface stays as it is). With
``Runtime("crt", {"system-lib": True})`` it is the system library's function of that name
(``TVMSystemLibEntryPoint``), so ``Session.get_system_lib()["tvmgen_default___tvm_main__"]``
finds it, as in TVM. The text is compiled only against the C runtime (``#if
defined(PYTVM_CRT)``): a build without it (a bundle, a host library) sees the struct
interface alone. A failed check sets the runtime's last error (``TVMAPISetLastError``) and
returns -1; the run function's own nonzero status is returned as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...codegen.c.module import system_lib_registry
from ...ffi.dtype import DataType
from .factory import TensorInfo
from .interface import run_function_name

__all__ = ["main_function_name", "packed_main_source"]


def main_function_name(mod_name: str) -> str:
    """``tvmgen_<mod_name>___tvm_main__`` (TVM's ``runtime::symbol::tvm_module_main``)."""
    return f"tvmgen_{mod_name}___tvm_main__"


def _dl_dtype(dtype: str) -> tuple[int, int, int]:
    t = DataType(dtype)
    return t.code, t.bits, t.lanes


def _c_text(name: str) -> str:
    """``name`` safe inside a C string literal: printable ASCII but quotes, backslashes and
    ``?`` (trigraphs); the rest become ``_``.
    """
    return "".join(c if " " <= c <= "~" and c not in '"\\?' else "_" for c in name)


def _check_tensor(fn: str, index: int, member: str, info: TensorInfo) -> list[str]:
    code, bits, lanes = _dl_dtype(info.dtype)
    dims = " || ".join(f"t->shape[{i}] != {d}" for i, d in enumerate(info.shape))
    shape_bad = f"t->shape == NULL || {dims}" if dims else "0"
    where = f"{fn}: argument {index} ({_c_text(info.name)})"
    return [
        f"  if (type_codes[{index}] != kTVMDLTensorHandle && "
        f"type_codes[{index}] != kTVMNDArrayHandle) {{",
        f'    TVMAPISetLastError("ValueError: {where} must be a tensor");',
        "    return -1;",
        "  }",
        f"  t = (const DLTensor*)args[{index}].v_handle;",
        f"  if (t == NULL || t->ndim != {len(info.shape)} || t->dtype.code != {code} || "
        f"t->dtype.bits != {bits} || t->dtype.lanes != {lanes}) {{",
        f'    TVMAPISetLastError("ValueError: {where} must be a {len(info.shape)}-d '
        f'{info.dtype} tensor");',
        "    return -1;",
        "  }",
        f"  if ({shape_bad}) {{",
        f'    TVMAPISetLastError("ValueError: {where} must have shape {list(info.shape)}");',
        "    return -1;",
        "  }",
        "  if (t->strides != NULL && !pytvm_aot_compact(t)) {",
        f'    TVMAPISetLastError("ValueError: {where} must be contiguous");',
        "    return -1;",
        "  }",
        f"  {member} = (void*)((uint8_t*)t->data + t->byte_offset);",
    ]


def packed_main_source(
    mod_name: str,
    inputs: Sequence[TensorInfo],
    outputs: Sequence[TensorInfo],
    system_lib: bool,
) -> str:
    """The ``#if defined(PYTVM_CRT)`` block of ``<mod>_lib1.c`` (see the module)."""
    fn = main_function_name(mod_name)
    count = len(inputs) + len(outputs)
    lines = [
        "",
        "#if defined(PYTVM_CRT)",
        '/* TVM\'s packed AOT interface (interface-api "packed"): the model as a packed function'
        " of DLTensor arguments, inputs then outputs. */",
        '#include "pytvm/c_runtime_api.h"',
        '#include "pytvm/c_backend_api.h"',
        "static int pytvm_aot_compact(const DLTensor* t) {",
        "  int64_t expected = 1;",
        "  int32_t i;",
        "  for (i = t->ndim - 1; i >= 0; --i) {",
        "    if (t->shape[i] != 1 && t->strides[i] != expected) return 0;",
        "    expected *= t->shape[i];",
        "  }",
        "  return 1;",
        "}",
        f"int {fn}(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, "
        "int* out_ret_tcode, void* resource_handle);",
        f"int {fn}(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, "
        "int* out_ret_tcode, void* resource_handle) {",
        f"  struct tvmgen_{mod_name}_inputs inputs;",
        f"  struct tvmgen_{mod_name}_outputs outputs;",
        "  const DLTensor* t;",
        "  (void)out_ret_value;",
        "  (void)resource_handle;",
        f"  if (num_args != {count} || args == NULL || type_codes == NULL) {{",
        f'    TVMAPISetLastError("ValueError: {fn} takes {len(inputs)} input and '
        f'{len(outputs)} output tensors");',
        "    return -1;",
        "  }",
    ]
    for i, info in enumerate(inputs):
        lines += _check_tensor(fn, i, f"inputs.{info.c_name}", info)
    for j, info in enumerate(outputs):
        lines += _check_tensor(fn, len(inputs) + j, f"outputs.{info.c_name}", info)
    lines += [
        "  if (out_ret_tcode != NULL) *out_ret_tcode = kTVMNullptr;",
        f"  return {run_function_name(mod_name)}(&inputs, &outputs);",
        "}",
    ]
    if system_lib:
        lines.append(system_lib_registry([fn], [fn]))
    lines += ["#endif  /* PYTVM_CRT */", ""]
    return "\n".join(lines)
