/*! \file func_registry.c \brief Lookup in a const TVMFuncRegistry (linear scan of the blob). */
#include "pytvm_crt/func_registry.h"

#include "crt_internal.h"

uint16_t TVMFuncRegistry_NumFuncs(const TVMFuncRegistry* reg) {
  if ((reg == NULL) || (reg->names == NULL)) {
    return 0U;
  }
  return (uint16_t)(uint8_t)reg->names[0];
}

tvm_crt_error_t TVMFuncRegistry_Lookup(const TVMFuncRegistry* reg, const char* name,
                                       tvm_function_index_t* out_index) {
  uint16_t count;
  uint16_t idx;
  const char* entry;
  if ((reg == NULL) || (reg->names == NULL) || (name == NULL) || (out_index == NULL)) {
    return kTvmErrorArgumentNull;
  }
  count = TVMFuncRegistry_NumFuncs(reg);
  entry = &reg->names[1];
  for (idx = 0U; (idx < count) && (*entry != '\0'); idx++) {
    /* The blob is registry data: every name is NUL-terminated (generated or written by Set). */
    size_t len = 0U;
    while (entry[len] != '\0') {
      len++;
    }
    if (pytvm_crt_str_equal(entry, name, len) != 0) {
      *out_index = idx;
      return kTvmErrorNoError;
    }
    entry = &entry[len + 1U];
  }
  return kTvmErrorFunctionNameNotFound;
}

tvm_crt_error_t TVMFuncRegistry_GetByIndex(const TVMFuncRegistry* reg, tvm_function_index_t index,
                                           TVMBackendPackedCFunc* out_func) {
  if ((reg == NULL) || (out_func == NULL)) {
    return kTvmErrorArgumentNull;
  }
  if ((reg->funcs == NULL) || (index >= TVMFuncRegistry_NumFuncs(reg))) {
    return kTvmErrorFunctionIndexInvalid;
  }
  if (reg->funcs[index] == NULL) {
    return kTvmErrorFunctionIndexInvalid;
  }
  *out_func = reg->funcs[index];
  return kTvmErrorNoError;
}
