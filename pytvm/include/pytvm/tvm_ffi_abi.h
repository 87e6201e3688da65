/*!
 * \file pytvm/tvm_ffi_abi.h
 * \brief The tvm-ffi calling convention of libraries built by Apache TVM 0.27, as pytvm runs them.
 *
 * Such a library exports `int __tvm_ffi_<name>(void* self, const TVMFFIAny* args, int32_t
 * num_args, TVMFFIAny* result)` and calls back into tvm-ffi's C API (TVMFFIErrorSetRaised...,
 * TVMBackendAllocWorkspace, ...). pytvm's tvm-ffi environment library provides those C symbols
 * on pytvm's runtime, and an adapter that presents a `__tvm_ffi_` function as a packed function.
 * Layout and type indices follow tvm-ffi's c_api.h (the same numbering as TVMArgTypeCode).
 */
#ifndef PYTVM_TVM_FFI_ABI_H_
#define PYTVM_TVM_FFI_ABI_H_

#include "pytvm/c_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Type indices of tvm-ffi that pytvm's packed values do not use. */
enum {
  kPyTVMFFISmallStr = 11,   /* up to 7 bytes inline in v_bytes, length in small_str_len */
  kPyTVMFFISmallBytes = 12, /* the same for bytes */
  kPyTVMFFIStaticObjectBegin = 64
};

/*! \brief One tvm-ffi value: 16 bytes, the type index beside an 8-byte payload. */
typedef struct {
  int32_t type_index;
  union {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} PyTVMFFIAny;

/*! \brief Signature of a function exported as `__tvm_ffi_<name>` (tvm-ffi's safe call). */
typedef int (*PyTVMFFISafeCall)(void* self, const PyTVMFFIAny* args, int32_t num_args,
                                PyTVMFFIAny* result);

/*! \brief What the adapter calls: the safe-call function, its `self` and its name (errors). */
typedef struct {
  PyTVMFFISafeCall func;
  void* self;
  const char* name;
} PyTVMFFIBinding;

/*!
 * \brief Packed-function adapter (a TVMPackedCFunc): resource_handle is a PyTVMFFIBinding*.
 *
 * Arguments are copied into TVMFFIAny slots (same type indices); object arguments are refused.
 * Plain results come back as packed values; a failure with no error set gets a message naming
 * the function.
 */
TVM_DLL int PyTVMFFIAdapterCall(TVMValue* args, int* type_codes, int num_args,
                                TVMValue* out_ret_value, int* out_ret_tcode, void* resource_handle);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_TVM_FFI_ABI_H_ */
