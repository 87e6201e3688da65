/*! \file cpu_device_api.c \brief The kDLCPU device API: page allocator memory, memcpy copies. */
#include <string.h>

#include "pytvm_crt/crt.h"

static int cpu_alloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out) {
  int err;
  (void)hint;
  if (out == NULL) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "CPU alloc"));
    PYTVM_CRT_MSG_STR(msg, ": out is NULL");
    return -1;
  }
  *out = NULL;
  if (alignment > TVM_CRT_PAGE_BYTES) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "CPU alloc"));
    PYTVM_CRT_MSG_STR(msg, ": alignment ");
    PYTVM_CRT_MSG_U64(msg, alignment);
    PYTVM_CRT_MSG_STR(msg, " exceeds the page size ");
    PYTVM_CRT_MSG_U64(msg, TVM_CRT_PAGE_BYTES);
    return -1;
  }
  err = TVMPlatformMemoryAllocate(nbytes, dev, out);
  if (err != (int)kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("MemoryError");
    PYTVM_CRT_MSG_STR(msg, ": CPU alloc of ");
    PYTVM_CRT_MSG_U64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes failed: ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string(err));
    return -1;
  }
  return 0;
}

static int cpu_free(DLDevice dev, void* ptr) {
  int err = TVMPlatformMemoryFree(ptr, dev);
  if (err != (int)kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
    PYTVM_CRT_MSG_STR(msg, ": CPU free of ");
    PYTVM_CRT_MSG_PTR(msg, ptr);
    PYTVM_CRT_MSG_STR(msg, " failed: ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string(err));
    return -1;
  }
  return 0;
}

static int cpu_copy(const DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  size_t nbytes = 0U;
  (void)stream;
  if ((from == NULL) || (to == NULL) || (from->device.device_type != (int32_t)kDLCPU) ||
      (to->device.device_type != (int32_t)kDLCPU)) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "CPU copy"));
    PYTVM_CRT_MSG_STR(msg, ": both tensors must be on the CPU");
    return -1;
  }
  if (pytvm_crt_tensor_num_bytes(from, &nbytes) != (int)kTvmErrorNoError) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "CPU copy"));
    PYTVM_CRT_MSG_STR(msg, ": bad source tensor");
    return -1;
  }
  if (nbytes > 0U) {
    (void)memmove((uint8_t*)to->data + to->byte_offset,
                  (const uint8_t*)from->data + from->byte_offset, nbytes);
  }
  return 0;
}

static int cpu_sync(DLDevice dev, TVMStreamHandle stream) {
  (void)dev;
  (void)stream;
  return 0; /* CPU work is synchronous */
}

static int cpu_get_attr(DLDevice dev, int kind, TVMValue* out, int* out_code) {
  pytvm_crt_memory_stats stats;
  (void)dev;
  if ((out == NULL) || (out_code == NULL)) {
    return -1;
  }
  *out_code = kTVMNullptr; /* unknown kinds: None, as TVM */
  if (kind == TVM_CRT_DEVICE_ATTR_DEVICE_NAME) {
    out->v_str = "cpu";
    *out_code = kTVMStr;
  } else if ((kind == TVM_CRT_DEVICE_ATTR_TOTAL_GLOBAL_MEMORY) ||
             (kind == TVM_CRT_DEVICE_ATTR_AVAILABLE_GLOBAL_MEMORY)) {
    if (pytvm_crt_memory_get_stats(&stats) != (int)kTvmErrorNoError) {
      return -1;
    }
    out->v_int64 = (kind == TVM_CRT_DEVICE_ATTR_TOTAL_GLOBAL_MEMORY)
                       ? (int64_t)stats.pool_bytes
                       : (int64_t)((size_t)stats.free_pages * stats.page_bytes);
    *out_code = kTVMArgInt;
  } else {
    out->v_int64 = 0;
  }
  return 0;
}

static const pytvm_crt_device_api kCpuDeviceApi = {cpu_alloc, cpu_free, cpu_copy, cpu_sync, cpu_get_attr};

const pytvm_crt_device_api* pytvm_crt_cpu_device_api(void) { return &kCpuDeviceApi; }
