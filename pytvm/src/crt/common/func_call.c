/*!
 * \file func_call.c
 * \brief TVMFuncCall: resolve a bit-packed handle to its TVMBackendPackedCFunc and call it with
 *        resource_handle = the module (module functions) or NULL (global functions).
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Resolve a handle; sets the last error and returns -1 when it names no function. */
static int ResolveHandle(TVMFunctionHandle f, TVMBackendPackedCFunc* out_func,
                         void** out_resource) {
  TVMCrtFunctionRef ref;
  const TVMFuncRegistry* registry = NULL;
  const TVMModule* mod = NULL;
  if (TVMCrtDecodeFunctionHandle(f, &ref) != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: invalid function handle %p", f);
    return -1;
  }
  if (ref.in_module != 0U) {
    if (TVMCrtModuleAt(ref.module_index, &mod) != kTvmErrorNoError) {
      TVMCrtSetLastErrorf("ValueError: function handle %p names module %u, which is not "
                          "registered", f, (unsigned)ref.module_index);
      return -1;
    }
    registry = mod->registry;
  } else {
    TVMMutableFuncRegistry* globals = TVMCrtGlobalRegistry();
    if (globals == NULL) {
      TVMCrtSetLastErrorf("RuntimeError: TVMFuncCall: call TVMInitializeRuntime first");
      return -1;
    }
    registry = &globals->registry;
  }
  if (TVMFuncRegistry_GetByIndex(registry, ref.function_index, out_func) != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: function handle %p: no function at index %u", f,
                        (unsigned)ref.function_index);
    return -1;
  }
  /* resource_handle is a void* by ABI; the callee must treat the module as read-only. */
  *out_resource = (void*)(uintptr_t)mod;
  return 0;
}

int TVMFuncCall(TVMFunctionHandle func, TVMValue* args, int* arg_type_codes, int num_args,
                TVMValue* ret_val, int* ret_type_code) {
  TVMBackendPackedCFunc cfunc = NULL;
  void* resource = NULL;
  TVMValue unused_value;
  int unused_code = kTVMNullptr;
  if (num_args < 0) {
    TVMCrtSetLastErrorf("ValueError: TVMFuncCall: num_args is %d, expected >= 0", num_args);
    return -1;
  }
  if ((num_args > 0) && ((args == NULL) || (arg_type_codes == NULL))) {
    TVMCrtSetLastErrorf("ValueError: TVMFuncCall: %d arguments but args or type codes are NULL",
                        num_args);
    return -1;
  }
  if (ResolveHandle(func, &cfunc, &resource) != 0) {
    return -1;
  }
  if (ret_val == NULL) {
    ret_val = &unused_value;
  }
  if (ret_type_code == NULL) {
    ret_type_code = &unused_code;
  }
  ret_val->v_int64 = 0;
  *ret_type_code = kTVMNullptr;
  return cfunc(args, arg_type_codes, num_args, ret_val, ret_type_code, resource);
}

int TVMFuncFree(TVMFunctionHandle func) {
  TVMCrtFunctionRef ref;
  if (func == NULL) {
    return 0;
  }
  if (TVMCrtDecodeFunctionHandle(func, &ref) != kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: TVMFuncFree: invalid function handle %p", func);
    return -1;
  }
  return 0; /* handles name static table entries: nothing to release */
}

int TVMFuncRetain(TVMFunctionHandle func) {
  TVMCrtFunctionRef ref;
  if ((func != NULL) && (TVMCrtDecodeFunctionHandle(func, &ref) != kTvmErrorNoError)) {
    TVMCrtSetLastErrorf("ValueError: TVMFuncRetain: invalid function handle %p", func);
    return -1;
  }
  return 0;
}
