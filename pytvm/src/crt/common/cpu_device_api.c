/*! \file cpu_device_api.c \brief The kDLCPU device API: page allocator memory, memcpy copies. */
#include <string.h>

#include "pytvm_crt/crt.h"

static int CpuAlloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out) {
  int err;
  (void)hint;
  if (out == NULL) {
    TVMCrtSetLastErrorf("ValueError: CPU alloc: out is NULL");
    return -1;
  }
  *out = NULL;
  if (alignment > TVM_CRT_PAGE_BYTES) {
    TVMCrtSetLastErrorf("ValueError: CPU alloc: alignment %lu exceeds the page size %lu",
                        (unsigned long)alignment, (unsigned long)TVM_CRT_PAGE_BYTES);
    return -1;
  }
  err = TVMPlatformMemoryAllocate(nbytes, dev, out);
  if (err != (int)kTvmErrorNoError) {
    TVMCrtSetLastErrorf("MemoryError: CPU alloc of %lu bytes failed: %s", (unsigned long)nbytes,
                        TVMCrtErrorString(err));
    return -1;
  }
  return 0;
}

static int CpuFree(DLDevice dev, void* ptr) {
  int err = TVMPlatformMemoryFree(ptr, dev);
  if (err != (int)kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: CPU free of %p failed: %s", ptr, TVMCrtErrorString(err));
    return -1;
  }
  return 0;
}

static int CpuCopy(const DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  size_t nbytes = 0U;
  (void)stream;
  if ((from == NULL) || (to == NULL) || (from->device.device_type != (int32_t)kDLCPU) ||
      (to->device.device_type != (int32_t)kDLCPU)) {
    TVMCrtSetLastErrorf("ValueError: CPU copy: both tensors must be on the CPU");
    return -1;
  }
  if (TVMCrtTensorNumBytes(from, &nbytes) != (int)kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: CPU copy: bad source tensor");
    return -1;
  }
  if (nbytes > 0U) {
    (void)memmove((uint8_t*)to->data + to->byte_offset,
                  (const uint8_t*)from->data + from->byte_offset, nbytes);
  }
  return 0;
}

static int CpuSync(DLDevice dev, TVMStreamHandle stream) {
  (void)dev;
  (void)stream;
  return 0; /* CPU work is synchronous */
}

static int CpuGetAttr(DLDevice dev, int kind, TVMValue* out, int* out_code) {
  TVMCrtMemoryStats stats;
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
    if (TVMCrtMemoryGetStats(&stats) != (int)kTvmErrorNoError) {
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

static const TVMCrtDeviceAPI kCpuDeviceApi = {CpuAlloc, CpuFree, CpuCopy, CpuSync, CpuGetAttr};

const TVMCrtDeviceAPI* TVMCrtCpuDeviceAPI(void) { return &kCpuDeviceApi; }
