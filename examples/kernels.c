/* Two packed C kernels: every function has the same packed signature, so Python, C and the RPC
 * wire can call it. Compile with pytvm's headers on the include path (see 01_packed_kernel.py). */
#include "pytvm/c_backend_api.h"

/* c[i] = a[i] + b[i] on 1-d float32 arrays */
TVM_DLL int vadd(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* res) {
  if (n != 3 || codes[0] != kTVMDLTensorHandle || codes[1] != kTVMDLTensorHandle ||
      codes[2] != kTVMDLTensorHandle) {
    TVMAPISetLastError("TypeError: vadd(a, b, c) expects three arrays");
    return -1;
  }
  DLTensor *a = args[0].v_handle, *b = args[1].v_handle, *c = args[2].v_handle;
  if (a->ndim != 1 || b->ndim != 1 || c->ndim != 1 || a->shape[0] != b->shape[0] ||
      a->shape[0] != c->shape[0]) {
    TVMAPISetLastError("ValueError: vadd: a, b and c must be 1-d arrays of one length");
    return -1;
  }
  for (int64_t i = 0; i < a->shape[0]; ++i)
    ((float*)c->data)[i] = ((float*)a->data)[i] + ((float*)b->data)[i];
  *ret_code = kTVMNullptr;
  (void)ret; (void)res;
  return 0;
}

/* call_python(name, args...): look up a global function (a Python one registered with
 * pytvm.register_func, say) and call it with the remaining arguments; returns its result. */
TVM_DLL int call_python(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code,
                        void* res) {
  (void)res;
  if (n < 1 || codes[0] != kTVMStr) {
    TVMAPISetLastError("TypeError: call_python(name, ...) expects a function name first");
    return -1;
  }
  TVMFunctionHandle f = NULL;
  if (TVMFuncGetGlobal(args[0].v_str, &f) != 0) return -1;
  if (f == NULL) {
    TVMAPISetLastError("AttributeError: call_python: no such global function");
    return -1;
  }
  int rc = TVMFuncCall(f, args + 1, codes + 1, n - 1, ret, ret_code);
  TVMFuncFree(f);
  return rc;
}
