/*!
 * \file runtime_init.c
 * \brief TVMInitializeRuntime and the globals `runtime.SystemLib` and
 *        `tvm.rpc.server.ModuleGetFunction` (what an RPC client needs to call system-lib kernels).
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Handle of the system lib once `runtime.SystemLib` has run; NULL before. */
static TVMModuleHandle g_system_lib = NULL;

/* `runtime.SystemLib`: the system lib's module handle, registering it on the first call.
 * Globals are called through TVMFuncCall, which always passes return slots. */
static int system_lib_func(TVMValue* args, int* type_codes, int num_args, TVMValue* ret_value,
                         int* ret_type_code, void* resource_handle) {
  tvm_crt_error_t err;
  (void)args;
  (void)type_codes;
  (void)resource_handle;
  if (num_args != 0) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("TypeError");
    PYTVM_CRT_MSG_STR(msg, ": runtime.SystemLib takes no arguments, got ");
    PYTVM_CRT_MSG_I64(msg, num_args);
    return -1;
  }
  if (g_system_lib == NULL) {
    const TVMModule* mod = TVMSystemLibEntryPoint();
    if (mod == NULL) {
      pytvm_crt_text* msg = pytvm_crt_error_begin("RuntimeError");
      PYTVM_CRT_MSG_STR(msg, ": TVMSystemLibEntryPoint returned NULL");
      return -1;
    }
    TVM_CRT_DEBUG_LOG("pytvm CRT: system lib has %u functions\n",
                      (unsigned)TVMFuncRegistry_NumFuncs(mod->registry));
    err = pytvm_crt_module_register(mod, &g_system_lib);
    if (err != kTvmErrorNoError) {
      g_system_lib = NULL;
      {
        pytvm_crt_text* msg =
            pytvm_crt_error_begin(
                PYTVM_CRT_ERROR_HEAD("RuntimeError", "cannot register the system lib"));
        PYTVM_CRT_MSG_STR(msg, ": ");
        PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
      }
      return -1;
    }
  }
  ret_value->v_handle = g_system_lib;
  *ret_type_code = kTVMModuleHandle;
  return 0;
}

/* `tvm.rpc.server.ModuleGetFunction(module, name, query_imports)`: how an RPC client looks a
 * function up in a module of this device (the system lib); None when the module lacks it. */
static int module_get_function(TVMValue* args, int* type_codes, int num_args, TVMValue* ret_value,
                               int* ret_type_code, void* resource_handle) {
  TVMFunctionHandle func = NULL;
  (void)resource_handle;
  if ((num_args != 3) || (type_codes[0] != (int)kTVMModuleHandle) ||
      (type_codes[1] != (int)kTVMStr)) {
    (void)pytvm_crt_error_begin(
        PYTVM_CRT_ERROR_HEAD("TypeError", "ModuleGetFunction(module, name, imports)"));
    return -1;
  }
  if (TVMModGetFunction(args[0].v_handle, args[1].v_str, 0, &func) != 0) {
    return -1;
  }
  ret_value->v_handle = func;
  *ret_type_code = (func != NULL) ? (int)kTVMPackedFuncHandle : (int)kTVMNullptr;
  return 0;
}

int TVMInitializeRuntime(void) {
  tvm_crt_error_t err;
  TVMAPISetLastError("");
  pytvm_crt_memory_reset();
  pytvm_crt_module_table_reset();
  pytvm_crt_device_api_table_reset();
  g_system_lib = NULL;
  err = pytvm_crt_global_registry_init();
  if (err != kTvmErrorNoError) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", "TVMInitializeRuntime"));
    PYTVM_CRT_MSG_STR(msg, ": global registry: ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
    return -1;
  }
  err = pytvm_crt_workspace_init();
  if (err != kTvmErrorNoError) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("MemoryError", "TVMInitializeRuntime"));
    PYTVM_CRT_MSG_STR(msg, ": cannot reserve ");
    PYTVM_CRT_MSG_U64(msg, TVM_CRT_WORKSPACE_BYTES);
    PYTVM_CRT_MSG_STR(msg, " workspace bytes: ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
    return -1;
  }
  if (pytvm_crt_register_device_api((int)kDLCPU, pytvm_crt_cpu_device_api()) != (int)kTvmErrorNoError) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", "TVMInitializeRuntime"));
    PYTVM_CRT_MSG_STR(msg, ": cannot register the CPU device API");
    return -1;
  }
  TVM_CRT_DEBUG_LOG("pytvm CRT: initialized (%lu-byte pool, %lu-byte pages)\n",
                    (unsigned long)TVM_CRT_MEMORY_POOL_BYTES, (unsigned long)TVM_CRT_PAGE_BYTES);
  if (pytvm_crt_func_register_global("tvm.rpc.server.ModuleGetFunction", module_get_function, 0) !=
      0) {
    return -1;
  }
  return pytvm_crt_func_register_global("runtime.SystemLib", system_lib_func, 0);
}
