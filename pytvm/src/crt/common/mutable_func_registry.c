/*!
 * \file mutable_func_registry.c
 * \brief TVMMutableFuncRegistry: a names blob and a funcs array laid out in one caller block.
 *
 * Layout of the block: | names blob ... | pad | funcs[max_functions] |, funcs aligned to
 * sizeof(TVMBackendPackedCFunc) at the end, the names blob taking everything before it.
 */
#include <string.h>

#include "crt_internal.h"
#include "pytvm_crt/func_registry.h"

/* Largest count the one-byte count field holds. */
#define kMaxCount 255U

tvm_crt_error_t TVMMutableFuncRegistry_Create(TVMMutableFuncRegistry* reg, uint8_t* buffer,
                                              size_t buffer_size_bytes) {
  const size_t func_size = sizeof(TVMBackendPackedCFunc);
  const size_t per_func = func_size + (size_t)TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES + 1U;
  size_t capacity;
  size_t funcs_offset;
  uintptr_t funcs_addr;
  if ((reg == NULL) || (buffer == NULL)) {
    return kTvmErrorArgumentNull;
  }
  /* 2 bytes: count and final NUL; func_size: worst-case alignment padding. */
  if (buffer_size_bytes < (2U + func_size + per_func)) {
    return kTvmErrorBufferTooSmall;
  }
  capacity = (buffer_size_bytes - 2U - func_size) / per_func;
  if (capacity > kMaxCount) {
    capacity = kMaxCount;
  }
  funcs_offset = buffer_size_bytes - (capacity * func_size);
  funcs_addr = (uintptr_t)&buffer[funcs_offset];
  funcs_offset -= (size_t)(funcs_addr % func_size);

  reg->names_rw = (char*)buffer;
  reg->funcs_rw = (TVMBackendPackedCFunc*)(void*)&buffer[funcs_offset];
  reg->names_capacity = funcs_offset;
  reg->max_functions = capacity;
  reg->names_rw[0] = '\0'; /* count 0 */
  reg->names_rw[1] = '\0'; /* final NUL */
  (void)memset(reg->funcs_rw, 0, capacity * func_size);
  reg->registry.names = reg->names_rw;
  reg->registry.funcs = reg->funcs_rw;
  return kTvmErrorNoError;
}

/* Offset of the final NUL of the names blob (where the next name goes). */
static size_t names_end(const TVMMutableFuncRegistry* reg, size_t count) {
  size_t offset = 1U;
  size_t idx;
  for (idx = 0U; idx < count; idx++) {
    while ((offset < reg->names_capacity) && (reg->names_rw[offset] != '\0')) {
      offset++;
    }
    offset++; /* past this name's NUL */
  }
  return offset;
}

tvm_crt_error_t TVMMutableFuncRegistry_Set(TVMMutableFuncRegistry* reg, const char* name,
                                           TVMBackendPackedCFunc func, int override) {
  tvm_function_index_t idx;
  size_t count;
  size_t len;
  size_t end;
  tvm_crt_error_t err;
  if ((reg == NULL) || (name == NULL) || (func == NULL) || (reg->names_rw == NULL) ||
      (reg->funcs_rw == NULL)) {
    return kTvmErrorArgumentNull;
  }
  len = pytvm_crt_str_len(name, (size_t)TVM_CRT_MAX_STRLEN_FUNCTION_NAME + 1U);
  if (len == 0U) {
    return kTvmErrorFunctionNameEmpty;
  }
  if (len > (size_t)TVM_CRT_MAX_STRLEN_FUNCTION_NAME) {
    return kTvmErrorFunctionNameTooLong;
  }
  err = TVMFuncRegistry_Lookup(&reg->registry, name, &idx);
  if (err == kTvmErrorNoError) {
    if (override == 0) {
      return kTvmErrorFunctionAlreadyDefined;
    }
    reg->funcs_rw[idx] = func;
    return kTvmErrorNoError;
  }
  if (err != kTvmErrorFunctionNameNotFound) {
    return err;
  }
  count = (size_t)TVMFuncRegistry_NumFuncs(&reg->registry);
  if (count >= reg->max_functions) {
    return kTvmErrorFunctionRegistryFull;
  }
  end = names_end(reg, count);
  /* The name, its NUL and the new final NUL must fit. */
  if ((end >= reg->names_capacity) || ((reg->names_capacity - end) < (len + 2U))) {
    return kTvmErrorFunctionRegistryFull;
  }
  (void)memcpy(&reg->names_rw[end], name, len);
  reg->names_rw[end + len] = '\0';
  reg->names_rw[end + len + 1U] = '\0';
  reg->funcs_rw[count] = func;
  reg->names_rw[0] = (char)(uint8_t)(count + 1U);
  return kTvmErrorNoError;
}
