/*!
 * \file tvm_ffi_env.c
 * \brief tvm-ffi's C API, as libraries built by Apache TVM 0.27 call it, on pytvm's runtime.
 *
 * This library exports the standard tvm-ffi names (TVMFFIErrorSetRaisedFromCStrParts,
 * TVMBackendAllocWorkspace, ...). It is never loaded into the global symbol scope, so it cannot
 * take the place of another TVM runtime in the same process: pytvm binds a TVM-built library to
 * it alone (see pytvm/ffi/tvm_ffi_abi.py). Everything forwards to pytvm's host runtime library
 * (its private pytvm_* names): errors land in pytvm's last error as "Kind: message", workspace
 * and parallel launches use pytvm's allocator and thread pool, functions looked up from a
 * kernel are pytvm function handles.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pytvm/c_backend_api.h"
#include "pytvm/tvm_ffi_abi.h"

#define STACK_ARGS 16

_Static_assert(sizeof(PyTVMFFIAny) == 16, "TVMFFIAny is 16 bytes");

/* Errors raised on this thread through this library (or by a call it forwarded), so a failing
 * function that set none can be told from one that did. */
static _Thread_local unsigned long tls_raised = 0;

static void raise_text(const char* text) {
  TVMAPISetLastError(text);
  ++tls_raised;
}

static void raise_parts(const char* kind, const char** parts, int32_t num_parts) {
  size_t len = strlen(kind != NULL ? kind : "RuntimeError") + 3;
  int32_t i;
  char* text;
  for (i = 0; i < num_parts; ++i) len += parts[i] != NULL ? strlen(parts[i]) : 0;
  text = (char*)malloc(len);
  if (text == NULL) {
    raise_text("MemoryError: cannot allocate an error message");
    return;
  }
  (void)snprintf(text, len, "%s: ", kind != NULL ? kind : "RuntimeError");
  for (i = 0; i < num_parts; ++i) {
    if (parts[i] != NULL) strcat(text, parts[i]);
  }
  raise_text(text);
  free(text);
}

static void raise_fmt(const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  (void)vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  raise_text(text);
}

/* ------------------------------------------------------------------ standard names */

/* Each function below has a private C name and is exported under tvm-ffi's name. */
#define STD_NAME(name) __asm__(PYTVM_API_STR_(__USER_LABEL_PREFIX__) #name)

TVM_DLL void env_error_parts(const char* kind, const char** parts, int32_t num_parts)
    STD_NAME(TVMFFIErrorSetRaisedFromCStrParts);
void env_error_parts(const char* kind, const char** parts, int32_t num_parts) {
  raise_parts(kind, parts, num_parts);
}

TVM_DLL void env_error(const char* kind, const char* message) STD_NAME(TVMFFIErrorSetRaisedFromCStr);
void env_error(const char* kind, const char* message) { raise_parts(kind, &message, 1); }

TVM_DLL void* env_alloc_workspace(int device_type, int device_id, uint64_t nbytes, int code_hint,
                                  int bits_hint) STD_NAME(TVMBackendAllocWorkspace);
void* env_alloc_workspace(int device_type, int device_id, uint64_t nbytes, int code_hint,
                          int bits_hint) {
  void* ptr = TVMBackendAllocWorkspace(device_type, device_id, nbytes, code_hint, bits_hint);
  if (ptr == NULL) ++tls_raised;
  return ptr;
}

TVM_DLL int env_free_workspace(int device_type, int device_id, void* ptr)
    STD_NAME(TVMBackendFreeWorkspace);
int env_free_workspace(int device_type, int device_id, void* ptr) {
  int rc = TVMBackendFreeWorkspace(device_type, device_id, ptr);
  if (rc != 0) ++tls_raised;
  return rc;
}

TVM_DLL int env_parallel_launch(FTVMParallelLambda flambda, void* cdata, int num_task)
    STD_NAME(TVMBackendParallelLaunch);
int env_parallel_launch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  int rc = TVMBackendParallelLaunch(flambda, cdata, num_task);
  if (rc != 0) ++tls_raised;
  return rc;
}

TVM_DLL int env_parallel_barrier(int task_id, TVMParallelGroupEnv* penv)
    STD_NAME(TVMBackendParallelBarrier);
int env_parallel_barrier(int task_id, TVMParallelGroupEnv* penv) {
  return TVMBackendParallelBarrier(task_id, penv);
}

/* The library context is the pytvm module; the handle is a pytvm function handle whose one
 * reference stays with the kernel's cache (tvm-ffi lends it from the module: both live as long
 * as the loaded library). */
TVM_DLL int env_lookup_from_imports(void* library_ctx, const char* func_name, void** out)
    STD_NAME(TVMFFIEnvModLookupFromImports);
int env_lookup_from_imports(void* library_ctx, const char* func_name, void** out) {
  int rc = TVMBackendGetFuncFromEnv(library_ctx, func_name, out);
  if (rc != 0) ++tls_raised;
  return rc;
}

static int any_to_value(const PyTVMFFIAny* in, TVMValue* value, int* code, char small[8]) {
  if (in->type_index == kPyTVMFFISmallStr) {
    uint32_t len = in->small_str_len < 8 ? in->small_str_len : 7;
    memcpy(small, in->v_bytes, len);
    small[len] = '\0';
    value->v_str = small;
    *code = kTVMStr;
    return 0;
  }
  if (in->type_index >= kPyTVMFFIStaticObjectBegin || in->type_index == kPyTVMFFISmallBytes ||
      in->type_index > kTVMBytes) {
    return -1;
  }
  value->v_int64 = in->v_int64;
  *code = in->type_index;
  return 0;
}

/* A packed result as a tvm-ffi value; object results are refused (the caller's cell would have
 * to release them with tvm-ffi's object API). */
static int value_to_any(TVMValue value, int code, PyTVMFFIAny* out) {
  if (code >= kPyTVMFFIStaticObjectBegin || code > kTVMBytes) return -1;
  out->type_index = code;
  out->zero_padding = 0;
  out->v_int64 = value.v_int64;
  return 0;
}

TVM_DLL int env_function_call(void* func, PyTVMFFIAny* args, int32_t num_args,
                              PyTVMFFIAny* result) STD_NAME(TVMFFIFunctionCall);
int env_function_call(void* func, PyTVMFFIAny* args, int32_t num_args, PyTVMFFIAny* result) {
  TVMValue stack_values[STACK_ARGS];
  int stack_codes[STACK_ARGS];
  char stack_small[STACK_ARGS][8];
  TVMValue* values = stack_values;
  int* codes = stack_codes;
  char(*small)[8] = stack_small;
  TVMValue ret;
  int ret_code = kTVMNullptr;
  int32_t i;
  int rc = 0;
  if (num_args > STACK_ARGS) {
    values = (TVMValue*)malloc(sizeof(TVMValue) * (size_t)num_args);
    codes = (int*)malloc(sizeof(int) * (size_t)num_args);
    small = (char(*)[8])malloc(8 * (size_t)num_args);
    if (values == NULL || codes == NULL || small == NULL) {
      raise_text("MemoryError: TVMFFIFunctionCall: cannot allocate the arguments");
      rc = -1;
      goto done;
    }
  }
  for (i = 0; i < num_args; ++i) {
    if (any_to_value(&args[i], &values[i], &codes[i], small[i]) != 0) {
      raise_fmt("TypeError: TVMFFIFunctionCall: argument %ld has type index %ld, which a "
                "function built by TVM cannot pass to pytvm (plain values only)",
                (long)i, (long)args[i].type_index);
      rc = -1;
      goto done;
    }
  }
  ret.v_int64 = 0;
  rc = TVMFuncCall(func, values, codes, num_args, &ret, &ret_code);
  if (rc != 0) {
    ++tls_raised;
    goto done;
  }
  if (value_to_any(ret, ret_code, result) != 0) {
    if (ret_code == kTVMPackedFuncHandle) (void)TVMFuncFree(ret.v_handle);
    raise_fmt("TypeError: TVMFFIFunctionCall: the function returned type index %ld, which a "
              "function built by TVM cannot receive from pytvm (plain values only)",
              (long)ret_code);
    rc = -1;
  }
done:
  if (values != stack_values) free(values);
  if (codes != stack_codes) free(codes);
  if (small != stack_small) free(small);
  return rc;
}

static pthread_mutex_t g_init_once_mutex = PTHREAD_MUTEX_INITIALIZER;

TVM_DLL int env_handle_init_once(void** handle_addr, int (*init_func)(void** result))
    STD_NAME(TVMFFIHandleInitOnce);
int env_handle_init_once(void** handle_addr, int (*init_func)(void** result)) {
  void* result = NULL;
  int rc = 0;
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) != NULL) return 0;
  pthread_mutex_lock(&g_init_once_mutex);
  if (*handle_addr == NULL) {
    rc = init_func(&result);
    if (rc == 0 && result == NULL) {
      raise_text("RuntimeError: TVMFFIHandleInitOnce: init_func returned a NULL handle");
      rc = -1;
    }
    if (rc == 0) __atomic_store_n(handle_addr, result, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_init_once_mutex);
  return rc;
}

/* CPU kernels run on the default stream. */
TVM_DLL void* env_get_stream(int32_t device_type, int32_t device_id) STD_NAME(TVMFFIEnvGetStream);
void* env_get_stream(int32_t device_type, int32_t device_id) {
  (void)device_type;
  (void)device_id;
  return NULL;
}

/* Signals are checked by Python between calls. */
TVM_DLL int env_check_signals(void) STD_NAME(TVMFFIEnvCheckSignals);
int env_check_signals(void) { return 0; }

/* ------------------------------------------------------------------ the packed adapter */

int PyTVMFFIAdapterCall(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value,
                        int* out_ret_tcode, void* resource_handle) {
  static _Thread_local char small_str[8];
  static _Thread_local char small_data[8];
  static _Thread_local TVMByteArray small_bytes;
  const PyTVMFFIBinding* binding = (const PyTVMFFIBinding*)resource_handle;
  PyTVMFFIAny stack_anys[STACK_ARGS];
  PyTVMFFIAny* anys = stack_anys;
  PyTVMFFIAny result;
  unsigned long raised = tls_raised;
  int i;
  int rc;
  if (num_args > STACK_ARGS) {
    anys = (PyTVMFFIAny*)malloc(sizeof(PyTVMFFIAny) * (size_t)num_args);
    if (anys == NULL) {
      raise_fmt("MemoryError: %s: cannot allocate %ld arguments", binding->name, (long)num_args);
      return -1;
    }
  }
  for (i = 0; i < num_args; ++i) {
    if (type_codes[i] >= kPyTVMFFIStaticObjectBegin) {
      raise_fmt("TypeError: %s: argument %ld is a pytvm object (type index %ld); a function "
                "built by TVM takes NDArray, int, float, bool, str, bytes, DataType, Device, "
                "None here",
                binding->name, (long)i, (long)type_codes[i]);
      if (anys != stack_anys) free(anys);
      return -1;
    }
    anys[i].type_index = type_codes[i];
    anys[i].zero_padding = 0;
    anys[i].v_int64 = args[i].v_int64;
  }
  result.type_index = kTVMNullptr;
  result.zero_padding = 0;
  result.v_int64 = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push /* the first num_args slots are set above; the callee reads no more */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
  rc = binding->func(binding->self, anys, num_args, &result);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  if (anys != stack_anys) free(anys);
  if (rc != 0) {
    if (tls_raised == raised) {
      raise_fmt("RuntimeError: %s returned %ld without setting an error", binding->name, (long)rc);
    }
    return -1;
  }
  *out_ret_tcode = result.type_index;
  out_ret_value->v_int64 = result.v_int64;
  if (result.type_index == kPyTVMFFISmallStr) {
    uint32_t len = result.small_str_len < 8 ? result.small_str_len : 7;
    memcpy(small_str, result.v_bytes, len);
    small_str[len] = '\0';
    out_ret_value->v_str = small_str;
    *out_ret_tcode = kTVMStr;
  } else if (result.type_index == kPyTVMFFISmallBytes) {
    small_bytes.data = small_data;
    small_bytes.size = result.small_str_len < 8 ? result.small_str_len : 8;
    memcpy(small_data, result.v_bytes, small_bytes.size);
    out_ret_value->v_handle = &small_bytes;
    *out_ret_tcode = kTVMBytes;
  } else if (result.type_index >= kPyTVMFFIStaticObjectBegin || result.type_index > kTVMBytes) {
    *out_ret_tcode = kTVMNullptr;
    raise_fmt("TypeError: %s returned a value of type index %ld, which pytvm cannot receive from "
              "a function built by TVM (plain values only)",
              binding->name, (long)result.type_index);
    return -1;
  }
  return 0;
}
