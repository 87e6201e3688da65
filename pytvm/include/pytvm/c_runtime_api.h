/*!
 * \file pytvm/c_runtime_api.h
 * \brief The packed-function C ABI: values, type indices and the runtime calls around them.
 *
 * Type indices follow tvm-ffi's numbering, the same numbers Python and the RPC wire use.
 * Every packed function has one signature (TVMPackedCFunc); resource_handle is always passed.
 */
#ifndef PYTVM_C_RUNTIME_API_H_
#define PYTVM_C_RUNTIME_API_H_

#include "pytvm/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TVM_DLL
#define TVM_DLL __attribute__((visibility("default")))
#endif

/*
 * On a host the runtime API lives in pytvm's host runtime library under private symbol names
 * (pytvm_TVMFuncCall, ...), bound to the standard names below with asm labels. A kernel built
 * against these headers therefore calls pytvm's runtime even in a process that has also loaded
 * another TVM runtime exporting the standard names. The device C runtime (PYTVM_CRT) provides
 * the standard names themselves.
 */
#if defined(PYTVM_CRT)
#define PYTVM_API_SYMBOL(name)
#else
#define PYTVM_API_STR2_(x) #x
#define PYTVM_API_STR_(x) PYTVM_API_STR2_(x)
#define PYTVM_API_SYMBOL(name) __asm__(PYTVM_API_STR_(__USER_LABEL_PREFIX__) "pytvm_" #name)
#endif

/*! \brief Type index of a value in a packed call (tvm-ffi numbering). */
typedef enum {
  kTVMNullptr = 0,
  kTVMArgInt = 1,
  kTVMArgBool = 2,
  kTVMArgFloat = 3,
  kTVMOpaqueHandle = 4,
  kTVMDataType = 5,
  kDLDeviceTypeCode = 6,
  kTVMDLTensorHandle = 7,
  kTVMStr = 8,
  kTVMBytes = 9,
  kTVMObjectHandle = 64,
  kTVMStrObject = 65,
  kTVMBytesObject = 66,
  kTVMPackedFuncHandle = 68,
  kTVMShapeHandle = 69,
  kTVMNDArrayHandle = 70,
  kTVMModuleHandle = 73,
  kTVMDynObjectBegin = 128
} TVMArgTypeCode;

/*! \brief One packed value; its meaning is given by the type index beside it. */
typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} TVMValue;

/*! \brief Bytes passed by pointer (type index kTVMBytes). */
typedef struct {
  const char* data;
  size_t size;
} TVMByteArray;

typedef void* TVMFunctionHandle;
typedef void* TVMModuleHandle;
typedef void* TVMObjectHandle;
typedef void* TVMStreamHandle;

/*!
 * \brief The one packed function signature.
 *
 * Ownership: argument handles are borrowed for the duration of the call (TVMFuncRetain one to
 * keep it); a function handle written to out_ret_value carries one reference that the caller
 * now owns.
 * \return 0 on success; non-zero after TVMAPISetLastError on failure.
 */
typedef int (*TVMPackedCFunc)(TVMValue* args, int* type_codes, int num_args,
                              TVMValue* out_ret_value, int* out_ret_tcode,
                              void* resource_handle);

/*! \brief Called when a function handle made by TVMFuncCreateFromCFunc is freed. */
typedef void (*TVMPackedCFuncFinalizer)(void* resource_handle);

/*! \brief Set the calling thread's last error ("Kind: message" keeps the error kind). */
TVM_DLL void TVMAPISetLastError(const char* msg)
    PYTVM_API_SYMBOL(TVMAPISetLastError);

/*! \brief The calling thread's last error message. */
TVM_DLL const char* TVMGetLastError(void)
    PYTVM_API_SYMBOL(TVMGetLastError);

/*! \brief Look up a global function; *out is NULL when none is registered under name.
 *  A non-NULL handle holds a reference the caller releases with TVMFuncFree. */
TVM_DLL int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out)
    PYTVM_API_SYMBOL(TVMFuncGetGlobal);

/*! \brief Register a function handle as a global function. */
TVM_DLL int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override)
    PYTVM_API_SYMBOL(TVMFuncRegisterGlobal);

/*! \brief Call a function handle. */
TVM_DLL int TVMFuncCall(TVMFunctionHandle func, TVMValue* args, int* arg_type_codes,
                        int num_args, TVMValue* ret_val, int* ret_type_code)
    PYTVM_API_SYMBOL(TVMFuncCall);

/*! \brief Wrap a C function as a function handle (one reference, owned by the caller). */
TVM_DLL int TVMFuncCreateFromCFunc(TVMPackedCFunc func, void* resource_handle,
                                   TVMPackedCFuncFinalizer fin, TVMFunctionHandle* out)
    PYTVM_API_SYMBOL(TVMFuncCreateFromCFunc);

/*! \brief Take one more reference to a function handle. */
TVM_DLL int TVMFuncRetain(TVMFunctionHandle func)
    PYTVM_API_SYMBOL(TVMFuncRetain);

/*! \brief Release one reference to a function handle. */
TVM_DLL int TVMFuncFree(TVMFunctionHandle func)
    PYTVM_API_SYMBOL(TVMFuncFree);

/*! \brief Get a function of a module (imports searched when query_imports is non-zero). */
TVM_DLL int TVMModGetFunction(TVMModuleHandle mod, const char* func_name, int query_imports,
                              TVMFunctionHandle* out)
    PYTVM_API_SYMBOL(TVMModGetFunction);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_C_RUNTIME_API_H_ */
