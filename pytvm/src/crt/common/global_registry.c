/*!
 * \file global_registry.c
 * \brief The global function namespace: a TVMMutableFuncRegistry in a static block, with
 *        TVMFuncGetGlobal, TVMFuncRegisterGlobal and pytvm_crt_func_register_global.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* The registry's block, aligned for the function pointers it ends with. */
static union {
  uint8_t bytes[TVM_CRT_MUTABLE_FUNC_REGISTRY_BYTES(TVM_CRT_MAX_REGISTERED_FUNCTIONS)];
  TVMBackendPackedCFunc align_func;
  void* align_ptr;
} g_global_block;

static TVMMutableFuncRegistry g_global_registry;
static int g_global_registry_ready = 0;

tvm_crt_error_t pytvm_crt_global_registry_init(void) {
  tvm_crt_error_t err =
      TVMMutableFuncRegistry_Create(&g_global_registry, g_global_block.bytes,
                                    sizeof(g_global_block.bytes));
  g_global_registry_ready = (err == kTvmErrorNoError) ? 1 : 0;
  return err;
}

TVMMutableFuncRegistry* pytvm_crt_global_registry(void) {
  return (g_global_registry_ready != 0) ? &g_global_registry : NULL;
}

int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out) {
  pytvm_crt_function_ref ref;
  tvm_crt_error_t err;
  if ((name == NULL) || (out == NULL)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncGetGlobal"));
    PYTVM_CRT_MSG_STR(msg, ": name and out must not be NULL");
    return -1;
  }
  *out = NULL;
  if (g_global_registry_ready == 0) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", "TVMFuncGetGlobal"));
    PYTVM_CRT_MSG_STR(msg, ": call TVMInitializeRuntime first");
    return -1;
  }
  ref.in_module = 0U;
  ref.module_index = 0U;
  err = TVMFuncRegistry_Lookup(&g_global_registry.registry, name, &ref.function_index);
  if (err == kTvmErrorFunctionNameNotFound) {
    return 0; /* TVM: not found is *out = NULL, not an error */
  }
  if (err == kTvmErrorNoError) {
    err = pytvm_crt_encode_function_handle(&ref, out);
  }
  if (err != kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("RuntimeError");
    PYTVM_CRT_MSG_STR(msg, ": TVMFuncGetGlobal(\"");
    PYTVM_CRT_MSG_STRN(msg, name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "\"): ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
    return -1;
  }
  return 0;
}

int pytvm_crt_func_register_global(const char* name, TVMBackendPackedCFunc func, int override) {
  tvm_crt_error_t err;
  if ((name == NULL) || (func == NULL)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "pytvm_crt_func_register_global"));
    PYTVM_CRT_MSG_STR(msg, ": name and func must not be NULL");
    return -1;
  }
  if (g_global_registry_ready == 0) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(
            PYTVM_CRT_ERROR_HEAD("RuntimeError", "pytvm_crt_func_register_global"));
    PYTVM_CRT_MSG_STR(msg, ": call TVMInitializeRuntime first");
    return -1;
  }
  err = TVMMutableFuncRegistry_Set(&g_global_registry, name, func, override);
  if (err == kTvmErrorNoError) {
    return 0;
  }
  if (err == kTvmErrorFunctionAlreadyDefined) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("KeyError");
    PYTVM_CRT_MSG_STR(msg, ": global function \"");
    PYTVM_CRT_MSG_STRN(msg, name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "\" is already registered; pass override=1 to replace it");
  } else if (err == kTvmErrorFunctionRegistryFull) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("MemoryError");
    PYTVM_CRT_MSG_STR(msg, ": global function registry full (");
    PYTVM_CRT_MSG_U64(msg, g_global_registry.max_functions);
    PYTVM_CRT_MSG_STR(msg, " functions, ");
    PYTVM_CRT_MSG_U64(msg, g_global_registry.names_capacity);
    PYTVM_CRT_MSG_STR(msg, " bytes); raise TVM_CRT_MAX_REGISTERED_FUNCTIONS");
  } else if (err == kTvmErrorFunctionNameTooLong) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
    PYTVM_CRT_MSG_STR(msg, ": function name \"");
    PYTVM_CRT_MSG_STRN(msg, name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "...\" is longer than TVM_CRT_MAX_STRLEN_FUNCTION_NAME (");
    PYTVM_CRT_MSG_I64(msg, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, ")");
  } else {
    pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
    PYTVM_CRT_MSG_STR(msg, ": cannot register global function \"");
    PYTVM_CRT_MSG_STRN(msg, name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "\": ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
  }
  return -1;
}

int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override) {
  pytvm_crt_function_ref ref;
  TVMBackendPackedCFunc func;
  if ((pytvm_crt_decode_function_handle(f, &ref) != kTvmErrorNoError) || (ref.in_module != 0U)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("TypeError", "TVMFuncRegisterGlobal"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_PTR(msg, f);
    PYTVM_CRT_MSG_STR(msg, " is not a global function handle of this runtime; register a C function with pytvm_crt_func_register_global");
    return -1;
  }
  if ((g_global_registry_ready == 0) ||
      (TVMFuncRegistry_GetByIndex(&g_global_registry.registry, ref.function_index, &func) !=
       kTvmErrorNoError)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncRegisterGlobal"));
    PYTVM_CRT_MSG_STR(msg, ": global function handle ");
    PYTVM_CRT_MSG_PTR(msg, f);
    PYTVM_CRT_MSG_STR(msg, " is not registered");
    return -1;
  }
  return pytvm_crt_func_register_global(name, func, override);
}
