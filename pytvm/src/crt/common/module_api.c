/*!
 * \file module_api.c
 * \brief TVMModGetFunction, TVMModFree and TVMBackendGetFuncFromEnv over the module table.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Handle of a function of the module at `index`, or NULL when `name` is not in it. */
static tvm_crt_error_t FindInModule(tvm_module_index_t index, const TVMModule* mod,
                                    const char* name, TVMFunctionHandle* out) {
  TVMCrtFunctionRef ref;
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
  return TVMCrtEncodeFunctionHandle(&ref, out);
}

int TVMModGetFunction(TVMModuleHandle mod, const char* func_name, int query_imports,
                      TVMFunctionHandle* out) {
  tvm_module_index_t index;
  const TVMModule* module = NULL;
  tvm_crt_error_t err;
  (void)query_imports; /* CRT modules have no imports */
  if ((func_name == NULL) || (out == NULL)) {
    TVMCrtSetLastErrorf("ValueError: TVMModGetFunction: func_name and out must not be NULL");
    return -1;
  }
  *out = NULL;
  if ((TVMCrtDecodeModuleHandle(mod, &index) != kTvmErrorNoError) ||
      (TVMCrtModuleAt(index, &module) != kTvmErrorNoError)) {
    TVMCrtSetLastErrorf("ValueError: TVMModGetFunction: invalid module handle %p", mod);
    return -1;
  }
  err = FindInModule(index, module, func_name, out);
  if (err != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("RuntimeError: TVMModGetFunction(\"%.*s\"): %s",
                        TVM_CRT_MAX_STRLEN_FUNCTION_NAME, func_name,
                        TVMCrtErrorString((int)err));
    return -1;
  }
  return 0;
}

int TVMModFree(TVMModuleHandle mod) {
  const TVMModule* module = NULL;
  if (TVMCrtModuleFromHandle(mod, &module) != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: TVMModFree: invalid module handle %p", mod);
    return -1;
  }
  return 0; /* modules are static */
}

int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name, TVMFunctionHandle* out) {
  size_t i;
  if ((func_name == NULL) || (out == NULL)) {
    TVMCrtSetLastErrorf("ValueError: TVMBackendGetFuncFromEnv: func_name and out must not be "
                        "NULL");
    return -1;
  }
  *out = NULL;
  /* mod_node is the calling module's TVMModule* (NULL or unknown: globals only). */
  for (i = 0U; (mod_node != NULL) && (i < (size_t)TVM_CRT_MAX_REGISTERED_MODULES); i++) {
    const TVMModule* module = NULL;
    if ((TVMCrtModuleAt((tvm_module_index_t)i, &module) == kTvmErrorNoError) &&
        ((const void*)module == (const void*)mod_node)) {
      if (FindInModule((tvm_module_index_t)i, module, func_name, out) != kTvmErrorNoError) {
        *out = NULL;
      }
      break;
    }
  }
  if ((*out == NULL) && (TVMFuncGetGlobal(func_name, out) != 0)) {
    return -1;
  }
  if (*out == NULL) {
    TVMCrtSetLastErrorf("AttributeError: function \"%.*s\" is neither in the module nor a "
                        "global function", TVM_CRT_MAX_STRLEN_FUNCTION_NAME, func_name);
    return -1;
  }
  return 0;
}
