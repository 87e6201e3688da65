"""The fixed head of every generated C file: includes, runtime hooks, error-message helpers.

Generated code calls the runtime through small static helpers that find it wherever the library
is loaded: pytvm's host runtime (its private ``pytvm_`` names), a stock Apache TVM 0.27 process
(the ``__TVM...`` context pointers its loader fills, or its exported names), or the C runtime
linked statically into a device binary (``PYTVM_CRT``: the standard names). Messages are built
without ``printf`` (the C runtime has none): ``ValueError: f: argument A: expected ...``.
"""

from __future__ import annotations

__all__ = ["INTEGER_HELPERS", "PRELUDE", "UNPACKED_PRELUDE"]

_RUNTIME_HELPERS = r"""#define PYTVM_HELPER static __attribute__((unused))
#define PYTVM_INLINE static inline __attribute__((unused))
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include "pytvm/c_runtime_api.h"
#include "pytvm/c_backend_api.h"

#if defined(PYTVM_CRT)
PYTVM_HELPER void pytvm_set_error(const char* msg) { TVMAPISetLastError(msg); }
PYTVM_HELPER void* pytvm_ws_alloc(int dev_id, uint64_t nbytes, int code, int bits) {
  return TVMBackendAllocWorkspace(1, dev_id, nbytes, code, bits);
}
PYTVM_HELPER int pytvm_ws_free(int dev_id, void* ptr) {
  return TVMBackendFreeWorkspace(1, dev_id, ptr);
}
PYTVM_HELPER int pytvm_parallel(FTVMParallelLambda f, void* cdata) {
  return TVMBackendParallelLaunch(f, cdata, 0);
}
/* A packed call: the function found once (the system library, then the globals). */
PYTVM_HELPER int pytvm_call_packed(TVMFunctionHandle* cache, const char* name, TVMValue* args,
                                   int* codes, int n, TVMValue* ret, int* ret_code) {
  if (*cache == NULL && TVMBackendGetFuncFromEnv(NULL, name, cache) != 0) return -1;
  return TVMFuncCall(*cache, args, codes, n, ret, ret_code);
}
#else
/* pytvm's host runtime: private names, found when the library is loaded by pytvm. */
extern void pytvm_TVMAPISetLastError(const char*) __attribute__((weak));
extern void* pytvm_TVMBackendAllocWorkspace(int, int, uint64_t, int, int) __attribute__((weak));
extern int pytvm_TVMBackendFreeWorkspace(int, int, void*) __attribute__((weak));
extern int pytvm_TVMBackendParallelLaunch(FTVMParallelLambda, void*, int) __attribute__((weak));
extern int pytvm_TVMBackendGetFuncFromEnv(void*, const char*, TVMFunctionHandle*)
    __attribute__((weak));
extern int pytvm_TVMFuncCall(TVMFunctionHandle, TVMValue*, int*, int, TVMValue*, int*)
    __attribute__((weak));
extern int pytvm_TVMFuncFree(TVMFunctionHandle) __attribute__((weak));
/* The module the library is loaded as (set by pytvm's loader): packed calls look there first. */
TVM_DLL void* __tvm_module_ctx = NULL;
/* Apache TVM 0.27: its loader fills these context pointers of a library it loads. */
TVM_DLL void* __TVMFFIErrorSetRaisedFromCStr = NULL;
TVM_DLL void* __TVMBackendAllocWorkspace = NULL;
TVM_DLL void* __TVMBackendFreeWorkspace = NULL;
TVM_DLL void* __TVMBackendParallelLaunch = NULL;
typedef void (*pytvm_raise_fn)(const char*, const char*);
typedef void* (*pytvm_alloc_fn)(int, int, uint64_t, int, int);
typedef int (*pytvm_free_fn)(int, int, void*);
typedef int (*pytvm_launch_fn)(FTVMParallelLambda, void*, int);

PYTVM_HELPER void pytvm_set_error(const char* msg) {
  if (pytvm_TVMAPISetLastError != NULL) {
    pytvm_TVMAPISetLastError(msg);
  } else if (__TVMFFIErrorSetRaisedFromCStr != NULL) {
    char kind[32];
    size_t i = 0;
    const char* text = msg;
    while (msg[i] != '\0' && msg[i] != ':' && i + 1 < sizeof(kind)) { kind[i] = msg[i]; ++i; }
    kind[i] = '\0';
    if (msg[i] == ':') { text = msg + i + 1; while (*text == ' ') ++text; }
    else { kind[0] = '\0'; }
    ((pytvm_raise_fn)__TVMFFIErrorSetRaisedFromCStr)(kind[0] ? kind : "RuntimeError", text);
  }
}
PYTVM_HELPER void* pytvm_ws_alloc(int dev_id, uint64_t nbytes, int code, int bits) {
  if (pytvm_TVMBackendAllocWorkspace != NULL)
    return pytvm_TVMBackendAllocWorkspace(1, dev_id, nbytes, code, bits);
  if (__TVMBackendAllocWorkspace != NULL)
    return ((pytvm_alloc_fn)__TVMBackendAllocWorkspace)(1, dev_id, nbytes, code, bits);
  return NULL;
}
PYTVM_HELPER int pytvm_ws_free(int dev_id, void* ptr) {
  if (pytvm_TVMBackendFreeWorkspace != NULL) return pytvm_TVMBackendFreeWorkspace(1, dev_id, ptr);
  if (__TVMBackendFreeWorkspace != NULL)
    return ((pytvm_free_fn)__TVMBackendFreeWorkspace)(1, dev_id, ptr);
  return -1;
}
/* A packed call: the function found once per call site (TVMBackendGetFuncFromEnv on the
 * module: its functions, its imports, the globals), kept in *cache; then TVMFuncCall. */
PYTVM_HELPER int pytvm_call_packed(TVMFunctionHandle* cache, const char* name, TVMValue* args,
                                   int* codes, int n, TVMValue* ret, int* ret_code) {
  TVMFunctionHandle f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    TVMFunctionHandle expected = NULL;
    if (pytvm_TVMBackendGetFuncFromEnv == NULL || pytvm_TVMFuncCall == NULL) {
      pytvm_set_error("RuntimeError: a kernel calling a packed function needs pytvm's runtime");
      return -1;
    }
    if (pytvm_TVMBackendGetFuncFromEnv(__tvm_module_ctx, name, &f) != 0) return -1;
    if (!__atomic_compare_exchange_n(cache, &expected, f, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
      (void)pytvm_TVMFuncFree(f); /* another thread found it first */
      f = expected;
    }
  }
  return pytvm_TVMFuncCall(f, args, codes, n, ret, ret_code);
}
PYTVM_HELPER int pytvm_parallel(FTVMParallelLambda f, void* cdata) {
  if (pytvm_TVMBackendParallelLaunch != NULL) return pytvm_TVMBackendParallelLaunch(f, cdata, 0);
  if (__TVMBackendParallelLaunch != NULL)
    return ((pytvm_launch_fn)__TVMBackendParallelLaunch)(f, cdata, 0);
  {
    TVMParallelGroupEnv env;
    env.sync_handle = NULL;
    env.num_task = 1;
    return f(0, &env, cdata);
  }
}
#endif

/* A message built without printf. */
typedef struct { char text[320]; size_t len; } pytvm_msg;
PYTVM_HELPER void pytvm_msg_str(pytvm_msg* m, const char* s) {
  while (*s != '\0' && m->len + 1 < sizeof(m->text)) m->text[m->len++] = *s++;
  m->text[m->len] = '\0';
}
PYTVM_HELPER void pytvm_msg_i64(pytvm_msg* m, int64_t v) {
  char digits[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do { digits[n++] = (char)('0' + (int)(u % 10u)); u /= 10u; } while (u != 0u && n < 22);
  if (v < 0) digits[n++] = '-';
  while (n > 0 && m->len + 1 < sizeof(m->text)) m->text[m->len++] = digits[--n];
  m->text[m->len] = '\0';
}
PYTVM_HELPER void pytvm_msg_shape(pytvm_msg* m, const int64_t* shape, int ndim) {
  int i;
  pytvm_msg_str(m, "(");
  for (i = 0; i < ndim; ++i) {
    if (i > 0) pytvm_msg_str(m, ", ");
    pytvm_msg_i64(m, shape[i]);
  }
  pytvm_msg_str(m, ndim == 1 ? ",)" : ")");
}
PYTVM_HELPER int pytvm_arg_error(const char* kind, const char* where, const char* what,
                           const char* detail) {
  pytvm_msg m;
  m.len = 0;
  pytvm_msg_str(&m, kind);
  pytvm_msg_str(&m, ": ");
  pytvm_msg_str(&m, where);
  pytvm_msg_str(&m, what);
  pytvm_msg_str(&m, detail);
  pytvm_set_error(m.text);
  return -1;
}
PYTVM_HELPER int pytvm_shape_error(const char* where, const int64_t* expected, const int64_t* got,
                             int ndim) {
  pytvm_msg m;
  m.len = 0;
  pytvm_msg_str(&m, "ValueError: ");
  pytvm_msg_str(&m, where);
  pytvm_msg_str(&m, ": expected shape ");
  pytvm_msg_shape(&m, expected, ndim);
  pytvm_msg_str(&m, ", got ");
  pytvm_msg_shape(&m, got, ndim);
  pytvm_set_error(m.text);
  return -1;
}
PYTVM_HELPER int pytvm_count_error(const char* where, int64_t expected, int64_t got,
                                   const char* what) {
  pytvm_msg m;
  m.len = 0;
  pytvm_msg_str(&m, "TypeError: ");
  pytvm_msg_str(&m, where);
  pytvm_msg_str(&m, ": expected ");
  pytvm_msg_i64(&m, expected);
  pytvm_msg_str(&m, what);
  pytvm_msg_str(&m, ", got ");
  pytvm_msg_i64(&m, got);
  pytvm_set_error(m.text);
  return -1;
}
/* "<kind>: <where><text><value><tail>" as the last error; returns -1. */
PYTVM_HELPER int pytvm_value_error(const char* kind, const char* where, const char* text,
                                   int64_t value, const char* tail) {
  pytvm_msg m;
  m.len = 0;
  pytvm_msg_str(&m, kind);
  pytvm_msg_str(&m, ": ");
  pytvm_msg_str(&m, where);
  pytvm_msg_str(&m, text);
  pytvm_msg_i64(&m, value);
  pytvm_msg_str(&m, tail);
  pytvm_set_error(m.text);
  return -1;
}
"""

#: Floor division and modulo of signed integers, as the loop IR defines them.
INTEGER_HELPERS = r"""PYTVM_INLINE int32_t pytvm_floordiv_i32(int32_t a, int32_t b) {
  int32_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
PYTVM_INLINE int64_t pytvm_floordiv_i64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
PYTVM_INLINE int32_t pytvm_floormod_i32(int32_t a, int32_t b) {
  int32_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
PYTVM_INLINE int64_t pytvm_floormod_i64(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
"""

PRELUDE = _RUNTIME_HELPERS + INTEGER_HELPERS

#: The head of a C file of unpacked kernels (``unpacked``): the C library's headers only.
UNPACKED_PRELUDE = (
    "#define PYTVM_INLINE static inline __attribute__((unused))\n"
    "#include <stdint.h>\n"
    "#include <stddef.h>\n"
    "#include <string.h>\n"
    "#include <math.h>\n" + INTEGER_HELPERS
)
