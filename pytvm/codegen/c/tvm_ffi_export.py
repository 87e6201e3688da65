"""Exports for Apache TVM 0.27: ``__tvm_ffi_<name>`` adapters over each packed function.

TVM 0.27 loads a library's functions by these symbols (tvm-ffi's safe-call signature). The
adapter copies the arguments into packed values (the type indices are the same), turns a tensor
object into its ``DLTensor`` (which follows the 24-byte object header), and calls the packed
function; a scalar it returns (an int, bool or float) becomes the result, and errors go
through ``TVMFFIErrorSetRaisedFromCStr`` (see the prelude). So one library runs on pytvm and on
a stock TVM 0.27 server after ``remote.upload`` + ``remote.load_module``.
"""

from __future__ import annotations

from ..abi import (
    ENTRY_SYMBOL,
    FFI_OBJECT_HEADER_BYTES,
    FFI_TENSOR_TYPE_INDEX,
    MSG_ARGUMENTS,
    PACKED_LIBRARY_MARKER,
    TVM_FFI_ENTRY_SYMBOL,
    tvm_ffi_symbol,
)

__all__ = ["TVM_FFI_HEAD", "entry_functions_c", "tvm_ffi_adapter"]

TVM_FFI_HEAD = f"""
#if !defined(PYTVM_CRT)
/* One tvm-ffi value: the type index beside an 8-byte payload. */
typedef struct {{
  int32_t type_index;
  uint32_t zero_padding;
  union {{ int64_t v_int64; double v_float64; void* v_ptr; }} v;
}} pytvm_ffi_any;
/* Size of tvm-ffi's object header, which a tensor object's DLTensor follows. */
#define PYTVM_FFI_OBJECT_HEADER {FFI_OBJECT_HEADER_BYTES}
#define PYTVM_FFI_TENSOR {FFI_TENSOR_TYPE_INDEX}
/* Tells pytvm's loader to call the packed functions (the __tvm_ffi_ exports serve TVM). */
TVM_DLL const int {PACKED_LIBRARY_MARKER} = 1;
#endif
"""


def tvm_ffi_adapter(name: str, symbol: str, num_params: int) -> str:
    """The ``__tvm_ffi_<name>`` adapter calling the packed function ``symbol``."""
    n = max(1, num_params)
    return f"""#if !defined(PYTVM_CRT)
TVM_DLL int {tvm_ffi_symbol(name)}(void* self, const pytvm_ffi_any* args, int32_t num_args,
                             pytvm_ffi_any* result) {{
  TVMValue values[{n}];
  int codes[{n}];
  TVMValue ret;
  int ret_code = 0;
  int rc;
  int32_t i;
  (void)self;
  if (num_args != {num_params}) {{
    return pytvm_count_error("{name}", {num_params}, num_args, "{MSG_ARGUMENTS}");
  }}
  for (i = 0; i < num_args; ++i) {{
    codes[i] = args[i].type_index;
    values[i].v_int64 = args[i].v.v_int64;
    if (codes[i] == PYTVM_FFI_TENSOR && args[i].v.v_ptr != NULL) {{
      values[i].v_handle = (char*)args[i].v.v_ptr + PYTVM_FFI_OBJECT_HEADER;
      codes[i] = kTVMDLTensorHandle;
    }}
  }}
  result->type_index = 0;
  result->zero_padding = 0;
  result->v.v_int64 = 0;
  ret.v_int64 = 0;
  rc = {symbol}(values, codes, num_args, &ret, &ret_code, NULL);
  if (rc == 0 && ret_code >= kTVMArgInt && ret_code <= kTVMArgFloat) {{
    result->type_index = ret_code; /* a scalar result: int, bool or float */
    result->v.v_int64 = ret.v_int64;
  }}
  return rc;
}}
#endif"""


def entry_functions_c(name: str, symbol: str | None = None) -> str:
    """The library's entry functions, both calling kernel ``name`` (exported as ``symbol``,
    default ``name``): ``__tvm_main__`` (the packed convention's, for pytvm) and
    ``__tvm_ffi_main`` (tvm-ffi's, for TVM 0.27). Weak, as TVM's, so objects of several
    one-kernel libraries still link into one program.
    """
    return f"""#if !defined(PYTVM_CRT)
/* The library's entry function (mod(...)): its only kernel, {name}. */
TVM_DLL __attribute__((weak)) int32_t {ENTRY_SYMBOL}(TVMValue* args, int* type_codes, int num_args,
    TVMValue* out_ret_value, int* out_ret_tcode, void* resource_handle) {{
  return {symbol or name}(args, type_codes, num_args, out_ret_value, out_ret_tcode,
      resource_handle);
}}
TVM_DLL __attribute__((weak)) int {TVM_FFI_ENTRY_SYMBOL}(void* self, const pytvm_ffi_any* args,
    int32_t num_args, pytvm_ffi_any* result) {{
  return {tvm_ffi_symbol(name)}(self, args, num_args, result);
}}
#endif"""
