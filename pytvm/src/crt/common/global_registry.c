/*!
 * \file global_registry.c
 * \brief The global function namespace: a TVMMutableFuncRegistry in a static block, with
 *        TVMFuncGetGlobal, TVMFuncRegisterGlobal and TVMCrtFuncRegisterGlobal.
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

tvm_crt_error_t TVMCrtGlobalRegistryInit(void) {
  tvm_crt_error_t err =
      TVMMutableFuncRegistry_Create(&g_global_registry, g_global_block.bytes,
                                    sizeof(g_global_block.bytes));
  g_global_registry_ready = (err == kTvmErrorNoError) ? 1 : 0;
  return err;
}

TVMMutableFuncRegistry* TVMCrtGlobalRegistry(void) {
  return (g_global_registry_ready != 0) ? &g_global_registry : NULL;
}

int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out) {
  TVMCrtFunctionRef ref;
  tvm_crt_error_t err;
  if ((name == NULL) || (out == NULL)) {
    TVMCrtSetLastErrorf("ValueError: TVMFuncGetGlobal: name and out must not be NULL");
    return -1;
  }
  *out = NULL;
  if (g_global_registry_ready == 0) {
    TVMCrtSetLastErrorf("RuntimeError: TVMFuncGetGlobal: call TVMInitializeRuntime first");
    return -1;
  }
  ref.in_module = 0U;
  ref.module_index = 0U;
  err = TVMFuncRegistry_Lookup(&g_global_registry.registry, name, &ref.function_index);
  if (err == kTvmErrorFunctionNameNotFound) {
    return 0; /* TVM: not found is *out = NULL, not an error */
  }
  if (err == kTvmErrorNoError) {
    err = TVMCrtEncodeFunctionHandle(&ref, out);
  }
  if (err != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("RuntimeError: TVMFuncGetGlobal(\"%.*s\"): %s",
                        TVM_CRT_MAX_STRLEN_FUNCTION_NAME, name, TVMCrtErrorString((int)err));
    return -1;
  }
  return 0;
}

int TVMCrtFuncRegisterGlobal(const char* name, TVMBackendPackedCFunc func, int override) {
  tvm_crt_error_t err;
  if ((name == NULL) || (func == NULL)) {
    TVMCrtSetLastErrorf("ValueError: TVMCrtFuncRegisterGlobal: name and func must not be NULL");
    return -1;
  }
  if (g_global_registry_ready == 0) {
    TVMCrtSetLastErrorf("RuntimeError: TVMCrtFuncRegisterGlobal: call TVMInitializeRuntime first");
    return -1;
  }
  err = TVMMutableFuncRegistry_Set(&g_global_registry, name, func, override);
  if (err == kTvmErrorNoError) {
    return 0;
  }
  if (err == kTvmErrorFunctionAlreadyDefined) {
    TVMCrtSetLastErrorf("KeyError: global function \"%.*s\" is already registered; pass override=1 "
                        "to replace it", TVM_CRT_MAX_STRLEN_FUNCTION_NAME, name);
  } else if (err == kTvmErrorFunctionRegistryFull) {
    TVMCrtSetLastErrorf("MemoryError: global function registry full (%u functions, %u bytes); "
                        "raise TVM_CRT_MAX_REGISTERED_FUNCTIONS",
                        (unsigned)g_global_registry.max_functions,
                        (unsigned)g_global_registry.names_capacity);
  } else if (err == kTvmErrorFunctionNameTooLong) {
    TVMCrtSetLastErrorf("ValueError: function name \"%.*s...\" is longer than "
                        "TVM_CRT_MAX_STRLEN_FUNCTION_NAME (%d)",
                        TVM_CRT_MAX_STRLEN_FUNCTION_NAME, name, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
  } else {
    TVMCrtSetLastErrorf("ValueError: cannot register global function \"%.*s\": %s",
                        TVM_CRT_MAX_STRLEN_FUNCTION_NAME, name, TVMCrtErrorString((int)err));
  }
  return -1;
}

int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override) {
  TVMCrtFunctionRef ref;
  TVMBackendPackedCFunc func;
  if ((TVMCrtDecodeFunctionHandle(f, &ref) != kTvmErrorNoError) || (ref.in_module != 0U)) {
    TVMCrtSetLastErrorf("TypeError: TVMFuncRegisterGlobal: %p is not a global function handle of "
                        "this runtime; register a C function with TVMCrtFuncRegisterGlobal", f);
    return -1;
  }
  if ((g_global_registry_ready == 0) ||
      (TVMFuncRegistry_GetByIndex(&g_global_registry.registry, ref.function_index, &func) !=
       kTvmErrorNoError)) {
    TVMCrtSetLastErrorf("ValueError: TVMFuncRegisterGlobal: global function handle %p is not "
                        "registered", f);
    return -1;
  }
  return TVMCrtFuncRegisterGlobal(name, func, override);
}
