/*!
 * \file runtime_init.c
 * \brief TVMInitializeRuntime and the `runtime.SystemLib` global function.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Handle of the system lib once `runtime.SystemLib` has run; NULL before. */
static TVMModuleHandle g_system_lib = NULL;

/* `runtime.SystemLib`: the system lib's module handle, registering it on the first call. */
static int SystemLibFunc(TVMValue* args, int* type_codes, int num_args, TVMValue* ret_value,
                         int* ret_type_code, void* resource_handle) {
  tvm_crt_error_t err;
  (void)args;
  (void)type_codes;
  (void)resource_handle;
  if ((ret_value == NULL) || (ret_type_code == NULL)) {
    TVMCrtSetLastErrorf("ValueError: runtime.SystemLib: NULL return slot");
    return -1;
  }
  if (num_args != 0) {
    TVMCrtSetLastErrorf("TypeError: runtime.SystemLib takes no arguments, got %d", num_args);
    return -1;
  }
  if (g_system_lib == NULL) {
    const TVMModule* mod = TVMSystemLibEntryPoint();
    if (mod == NULL) {
      TVMCrtSetLastErrorf("RuntimeError: TVMSystemLibEntryPoint returned NULL");
      return -1;
    }
    TVM_CRT_DEBUG_LOG("pytvm CRT: system lib has %u functions\n",
                      (unsigned)TVMFuncRegistry_NumFuncs(mod->registry));
    err = TVMCrtModuleRegister(mod, &g_system_lib);
    if (err != kTvmErrorNoError) {
      g_system_lib = NULL;
      TVMCrtSetLastErrorf("RuntimeError: cannot register the system lib: %s",
                          TVMCrtErrorString((int)err));
      return -1;
    }
  }
  ret_value->v_handle = g_system_lib;
  *ret_type_code = kTVMModuleHandle;
  return 0;
}

int TVMInitializeRuntime(void) {
  tvm_crt_error_t err;
  TVMAPISetLastError("");
  TVMCrtMemoryReset();
  TVMCrtModuleTableReset();
  TVMCrtDeviceApiTableReset();
  g_system_lib = NULL;
  err = TVMCrtGlobalRegistryInit();
  if (err != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("RuntimeError: TVMInitializeRuntime: global registry: %s",
                        TVMCrtErrorString((int)err));
    return -1;
  }
  err = TVMCrtWorkspaceInit();
  if (err != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("MemoryError: TVMInitializeRuntime: cannot reserve %lu workspace bytes: "
                        "%s", (unsigned long)TVM_CRT_WORKSPACE_BYTES, TVMCrtErrorString((int)err));
    return -1;
  }
  if (TVMCrtRegisterDeviceAPI((int)kDLCPU, TVMCrtCpuDeviceAPI()) != (int)kTvmErrorNoError) {
    TVMCrtSetLastErrorf("RuntimeError: TVMInitializeRuntime: cannot register the CPU device API");
    return -1;
  }
  TVM_CRT_DEBUG_LOG("pytvm CRT: initialized (%lu-byte pool, %lu-byte pages)\n",
                    (unsigned long)TVM_CRT_MEMORY_POOL_BYTES, (unsigned long)TVM_CRT_PAGE_BYTES);
  return TVMCrtFuncRegisterGlobal("runtime.SystemLib", SystemLibFunc, 0);
}
