/*! \file func_handle.c \brief Packing and unpacking of bit-packed function and module handles. */
#include "pytvm_crt/func_handle.h"

tvm_crt_error_t pytvm_crt_encode_function_handle(const pytvm_crt_function_ref* ref, TVMFunctionHandle* out) {
  uint32_t value;
  if ((ref == NULL) || (out == NULL)) {
    return kTvmErrorArgumentNull;
  }
  if ((ref->module_index > TVM_CRT_HANDLE_MODULE_MASK) ||
      (ref->function_index > TVM_CRT_HANDLE_MAX_FUNCTION_INDEX) ||
      ((ref->in_module == 0U) && (ref->module_index != 0U))) {
    return kTvmErrorArgumentOutOfRange;
  }
  value = (uint32_t)ref->function_index + 1U;
  if (ref->in_module != 0U) {
    value |= (uint32_t)TVM_CRT_HANDLE_MODULE_VALID_BIT;
    value |= (uint32_t)ref->module_index << TVM_CRT_HANDLE_MODULE_SHIFT;
  }
  *out = (TVMFunctionHandle)(uintptr_t)value;
  return kTvmErrorNoError;
}

tvm_crt_error_t pytvm_crt_decode_function_handle(TVMFunctionHandle handle, pytvm_crt_function_ref* out) {
  uintptr_t raw = (uintptr_t)handle;
  uint32_t value;
  uint32_t field;
  uint32_t module_index;
  if (out == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (raw > (uintptr_t)0xFFFFFFFFUL) {
    return kTvmErrorFunctionCallInvalidHandle;
  }
  value = (uint32_t)raw;
  field = value & (uint32_t)TVM_CRT_HANDLE_FUNCTION_MASK;
  module_index = (value >> TVM_CRT_HANDLE_MODULE_SHIFT) & TVM_CRT_HANDLE_MODULE_MASK;
  if (field == 0U) {
    return kTvmErrorFunctionCallInvalidHandle;
  }
  if (((value & (uint32_t)TVM_CRT_HANDLE_MODULE_VALID_BIT) == 0U) && (module_index != 0U)) {
    return kTvmErrorFunctionCallInvalidHandle;
  }
  out->in_module =
      (uint8_t)(((value & (uint32_t)TVM_CRT_HANDLE_MODULE_VALID_BIT) != 0U) ? 1U : 0U);
  out->module_index = (tvm_module_index_t)module_index;
  out->function_index = (tvm_function_index_t)(field - 1U);
  return kTvmErrorNoError;
}

tvm_crt_error_t pytvm_crt_encode_module_handle(tvm_module_index_t module_index, TVMModuleHandle* out) {
  uint32_t value;
  if (out == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (module_index > TVM_CRT_HANDLE_MODULE_MASK) {
    return kTvmErrorArgumentOutOfRange;
  }
  value = (uint32_t)TVM_CRT_HANDLE_MODULE_VALID_BIT |
          ((uint32_t)module_index << TVM_CRT_HANDLE_MODULE_SHIFT);
  *out = (TVMModuleHandle)(uintptr_t)value;
  return kTvmErrorNoError;
}

tvm_crt_error_t pytvm_crt_decode_module_handle(TVMModuleHandle handle, tvm_module_index_t* out) {
  uintptr_t raw = (uintptr_t)handle;
  uint32_t value;
  if (out == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (raw > (uintptr_t)0xFFFFFFFFUL) {
    return kTvmErrorModuleInvalidHandle;
  }
  value = (uint32_t)raw;
  if (((value & (uint32_t)TVM_CRT_HANDLE_MODULE_VALID_BIT) == 0U) ||
      ((value & (uint32_t)TVM_CRT_HANDLE_FUNCTION_MASK) != 0U)) {
    return kTvmErrorModuleInvalidHandle;
  }
  *out = (tvm_module_index_t)((value >> TVM_CRT_HANDLE_MODULE_SHIFT) & TVM_CRT_HANDLE_MODULE_MASK);
  return kTvmErrorNoError;
}
