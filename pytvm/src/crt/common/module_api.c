/*!
 * \file module_api.c
 * \brief TVMModGetFunction, TVMModFree and TVMBackendGetFuncFromEnv over the module table.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Handle of a function of the module at `index`, or NULL when `name` is not in it. */
static tvm_crt_error_t find_in_module(tvm_module_index_t index, const TVMModule* mod,
                                    const char* name, TVMFunctionHandle* out) {
  pytvm_crt_function_ref ref;
  tvm_crt_error_t err;
  *out = NULL;
  ref.in_module = 1U;
  ref.module_index = index;
  err = TVMFuncRegistry_Lookup(mod->registry, name, &ref.function_index);
  if (err == kTvmErrorFunctionNameNotFound) {
    return kTvmErrorNoError;
  }
  if (err != kTvmErrorNoError) {
    return err;
  }
  return pytvm_crt_encode_function_handle(&ref, out);
}

int TVMModGetFunction(TVMModuleHandle mod, const char* func_name, int query_imports,
                      TVMFunctionHandle* out) {
  tvm_module_index_t index;
  const TVMModule* module = NULL;
  tvm_crt_error_t err;
  (void)query_imports; /* CRT modules have no imports */
  if ((func_name == NULL) || (out == NULL)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMModGetFunction"));
    PYTVM_CRT_MSG_STR(msg, ": func_name and out must not be NULL");
    return -1;
  }
  *out = NULL;
  if ((pytvm_crt_decode_module_handle(mod, &index) != kTvmErrorNoError) ||
      (pytvm_crt_module_at(index, &module) != kTvmErrorNoError)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMModGetFunction"));
    PYTVM_CRT_MSG_STR(msg, ": invalid module handle ");
    PYTVM_CRT_MSG_PTR(msg, mod);
    return -1;
  }
  err = find_in_module(index, module, func_name, out);
  if (err != kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("RuntimeError");
    PYTVM_CRT_MSG_STR(msg, ": TVMModGetFunction(\"");
    PYTVM_CRT_MSG_STRN(msg, func_name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "\"): ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
    return -1;
  }
  return 0;
}

int TVMModFree(TVMModuleHandle mod) {
  const TVMModule* module = NULL;
  if (pytvm_crt_module_from_handle(mod, &module) != kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMModFree"));
    PYTVM_CRT_MSG_STR(msg, ": invalid module handle ");
    PYTVM_CRT_MSG_PTR(msg, mod);
    return -1;
  }
  return 0; /* modules are static */
}

int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name, TVMFunctionHandle* out) {
  size_t i;
  if ((func_name == NULL) || (out == NULL)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMBackendGetFuncFromEnv"));
    PYTVM_CRT_MSG_STR(msg, ": func_name and out must not be NULL");
    return -1;
  }
  *out = NULL;
  /* mod_node is the calling module's TVMModule* (NULL or unknown: globals only). */
  for (i = 0U; (mod_node != NULL) && (i < (size_t)TVM_CRT_MAX_REGISTERED_MODULES); i++) {
    const TVMModule* module = NULL;
    if ((pytvm_crt_module_at((tvm_module_index_t)i, &module) == kTvmErrorNoError) &&
        ((const void*)module == (const void*)mod_node)) {
      if (find_in_module((tvm_module_index_t)i, module, func_name, out) != kTvmErrorNoError) {
        *out = NULL;
      }
      break;
    }
  }
  if ((*out == NULL) && (TVMFuncGetGlobal(func_name, out) != 0)) {
    return -1;
  }
  if (*out == NULL) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("AttributeError");
    PYTVM_CRT_MSG_STR(msg, ": function \"");
    PYTVM_CRT_MSG_STRN(msg, func_name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "\" is neither in the module nor a global function");
    return -1;
  }
  return 0;
}
