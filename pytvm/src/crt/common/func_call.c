/*!
 * \file func_call.c
 * \brief TVMFuncCall: resolve a bit-packed handle to its TVMBackendPackedCFunc and call it with
 *        resource_handle = the module (module functions) or NULL (global functions).
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Resolve a handle; sets the last error and returns -1 when it names no function. */
static int resolve_handle(TVMFunctionHandle f, TVMBackendPackedCFunc* out_func,
                         void** out_resource) {
  pytvm_crt_function_ref ref;
  const TVMFuncRegistry* registry = NULL;
  const TVMModule* mod = NULL;
  if (pytvm_crt_decode_function_handle(f, &ref) != kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
    PYTVM_CRT_MSG_STR(msg, ": invalid function handle ");
    PYTVM_CRT_MSG_PTR(msg, f);
    return -1;
  }
  if (ref.in_module != 0U) {
    if (pytvm_crt_module_at(ref.module_index, &mod) != kTvmErrorNoError) {
      pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
      PYTVM_CRT_MSG_STR(msg, ": function handle ");
      PYTVM_CRT_MSG_PTR(msg, f);
      PYTVM_CRT_MSG_STR(msg, " names module ");
      PYTVM_CRT_MSG_U64(msg, ref.module_index);
      PYTVM_CRT_MSG_STR(msg, ", which is not registered");
      return -1;
    }
    registry = mod->registry;
  } else {
    TVMMutableFuncRegistry* globals = pytvm_crt_global_registry();
    if (globals == NULL) {
      pytvm_crt_text* msg =
          pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", "TVMFuncCall"));
      PYTVM_CRT_MSG_STR(msg, ": call TVMInitializeRuntime first");
      return -1;
    }
    registry = &globals->registry;
  }
  if (TVMFuncRegistry_GetByIndex(registry, ref.function_index, out_func) != kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
    PYTVM_CRT_MSG_STR(msg, ": function handle ");
    PYTVM_CRT_MSG_PTR(msg, f);
    PYTVM_CRT_MSG_STR(msg, ": no function at index ");
    PYTVM_CRT_MSG_U64(msg, ref.function_index);
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
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncCall"));
    PYTVM_CRT_MSG_STR(msg, ": num_args is ");
    PYTVM_CRT_MSG_I64(msg, num_args);
    PYTVM_CRT_MSG_STR(msg, ", expected >= 0");
    return -1;
  }
  if ((num_args > 0) && ((args == NULL) || (arg_type_codes == NULL))) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncCall"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_I64(msg, num_args);
    PYTVM_CRT_MSG_STR(msg, " arguments but args or type codes are NULL");
    return -1;
  }
  if (resolve_handle(func, &cfunc, &resource) != 0) {
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
  pytvm_crt_function_ref ref;
  if (func == NULL) {
    return 0;
  }
  if (pytvm_crt_decode_function_handle(func, &ref) != kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncFree"));
    PYTVM_CRT_MSG_STR(msg, ": invalid function handle ");
    PYTVM_CRT_MSG_PTR(msg, func);
    return -1;
  }
  return 0; /* handles name static table entries: nothing to release */
}

int TVMFuncRetain(TVMFunctionHandle func) {
  pytvm_crt_function_ref ref;
  if ((func != NULL) && (pytvm_crt_decode_function_handle(func, &ref) != kTvmErrorNoError)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncRetain"));
    PYTVM_CRT_MSG_STR(msg, ": invalid function handle ");
    PYTVM_CRT_MSG_PTR(msg, func);
    return -1;
  }
  return 0;
}
