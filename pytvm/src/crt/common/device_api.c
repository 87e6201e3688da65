/*!
 * \file device_api.c
 * \brief The device API table (device type -> TVMCrtDeviceAPI) and the TVM C device calls.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Trace hook of the calls below (declared in pytvm_crt/device_api.h, set by a tracer while it
 * records): NULL costs one branch per call. */
TVMCrtDeviceTraceFunc TVMCrtDeviceTraceHook = NULL;

#define DEVICE_TRACE(kind, phase, device_type, bytes)                      \
  do {                                                                      \
    if (TVMCrtDeviceTraceHook != NULL) {                                    \
      TVMCrtDeviceTraceHook((kind), (phase), (int32_t)(device_type), (bytes)); \
    }                                                                       \
  } while (0)

typedef struct {
  int device_type;
  const TVMCrtDeviceAPI* api; /* NULL: free slot */
} DeviceApiEntry;

static DeviceApiEntry g_device_apis[TVM_CRT_MAX_DEVICE_APIS];

void TVMCrtDeviceApiTableReset(void) {
  size_t i;
  for (i = 0U; i < (size_t)TVM_CRT_MAX_DEVICE_APIS; i++) {
    g_device_apis[i].device_type = 0;
    g_device_apis[i].api = NULL;
  }
}

static DeviceApiEntry* FindEntry(int device_type) {
  size_t i;
  for (i = 0U; i < (size_t)TVM_CRT_MAX_DEVICE_APIS; i++) {
    if ((g_device_apis[i].api != NULL) && (g_device_apis[i].device_type == device_type)) {
      return &g_device_apis[i];
    }
  }
  return NULL;
}

int TVMCrtRegisterDeviceAPI(int device_type, const TVMCrtDeviceAPI* api) {
  DeviceApiEntry* entry = FindEntry(device_type);
  size_t i;
  if (api == NULL) {
    if (entry == NULL) {
      return kTvmErrorDeviceApiNotRegistered;
    }
    entry->api = NULL;
    return kTvmErrorNoError;
  }
  if ((api->alloc == NULL) || (api->free == NULL) || (api->copy == NULL) || (api->sync == NULL) ||
      (api->get_attr == NULL)) {
    return kTvmErrorDeviceApiIncomplete;
  }
  for (i = 0U; (entry == NULL) && (i < (size_t)TVM_CRT_MAX_DEVICE_APIS); i++) {
    if (g_device_apis[i].api == NULL) {
      entry = &g_device_apis[i];
    }
  }
  if (entry == NULL) {
    return kTvmErrorDeviceApiTableFull;
  }
  entry->device_type = device_type;
  entry->api = api;
  return kTvmErrorNoError;
}

const TVMCrtDeviceAPI* TVMCrtGetDeviceAPI(int device_type) {
  const DeviceApiEntry* entry = FindEntry(device_type);
  return (entry != NULL) ? entry->api : NULL;
}

/* The API of a device type, or NULL after setting the last error. */
static const TVMCrtDeviceAPI* RequireApi(int device_type, const char* caller) {
  const TVMCrtDeviceAPI* api = TVMCrtGetDeviceAPI(device_type);
  if (api == NULL) {
    TVMCrtSetLastErrorf("ValueError: %s: no device API registered for device type %d", caller,
                        device_type);
  }
  return api;
}

int TVMDeviceAllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment, DLDataType type_hint,
                            void** out_data) {
  const TVMCrtDeviceAPI* api;
  if (out_data == NULL) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceAllocDataSpace: out_data is NULL");
    return -1;
  }
  *out_data = NULL;
  if ((alignment == 0U) || ((alignment & (alignment - 1U)) != 0U)) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceAllocDataSpace: alignment %lu is not a power of two",
                        (unsigned long)alignment);
    return -1;
  }
  api = RequireApi((int)dev.device_type, "TVMDeviceAllocDataSpace");
  if (api == NULL) {
    return -1;
  }
  DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_ALLOC, TVM_CRT_DEVICE_TRACE_BEGIN, dev.device_type, nbytes);
  if ((api->alloc(dev, nbytes, alignment, type_hint, out_data) != 0) || (*out_data == NULL)) {
    *out_data = NULL;
    return -1;
  }
  DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_ALLOC, TVM_CRT_DEVICE_TRACE_END, dev.device_type, nbytes);
  return 0;
}

int TVMDeviceFreeDataSpace(DLDevice dev, void* ptr) {
  const TVMCrtDeviceAPI* api = RequireApi((int)dev.device_type, "TVMDeviceFreeDataSpace");
  if (api == NULL) {
    return -1;
  }
  if (ptr == NULL) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceFreeDataSpace: ptr is NULL");
    return -1;
  }
  {
    int rc;
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_FREE, TVM_CRT_DEVICE_TRACE_BEGIN, dev.device_type, 0u);
    rc = api->free(dev, ptr);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_FREE, TVM_CRT_DEVICE_TRACE_END, dev.device_type, 0u);
    return (rc == 0) ? 0 : -1;
  }
}

/* Checks both tensors; sets the last error and returns -1 unless they are copyable. */
static int CheckCopyable(const DLTensor* from, const DLTensor* to) {
  size_t from_bytes = 0U;
  size_t to_bytes = 0U;
  int from_compact = 0;
  int to_compact = 0;
  int err = TVMCrtTensorNumBytes(from, &from_bytes);
  if (err == (int)kTvmErrorNoError) {
    err = TVMCrtTensorNumBytes(to, &to_bytes);
  }
  if (err == (int)kTvmErrorNoError) {
    err = TVMCrtTensorIsCompact(from, &from_compact);
  }
  if (err == (int)kTvmErrorNoError) {
    err = TVMCrtTensorIsCompact(to, &to_compact);
  }
  if (err != (int)kTvmErrorNoError) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceCopyDataFromTo: bad tensor: %s",
                        TVMCrtErrorString(err));
    return -1;
  }
  if ((from_compact == 0) || (to_compact == 0)) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceCopyDataFromTo: both tensors must be compact");
    return -1;
  }
  if (from_bytes != to_bytes) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceCopyDataFromTo: %lu bytes into %lu bytes; the sizes "
                        "must match exactly", (unsigned long)from_bytes, (unsigned long)to_bytes);
    return -1;
  }
  if ((from_bytes > 0U) && ((from->data == NULL) || (to->data == NULL))) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceCopyDataFromTo: tensor data is NULL");
    return -1;
  }
  return 0;
}

int TVMDeviceCopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  int copier;
  const TVMCrtDeviceAPI* api;
  if ((from == NULL) || (to == NULL)) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceCopyDataFromTo: from and to must not be NULL");
    return -1;
  }
  if (CheckCopyable(from, to) != 0) {
    return -1;
  }
  if ((from->device.device_type != (int32_t)kDLCPU) &&
      (to->device.device_type != (int32_t)kDLCPU) &&
      (from->device.device_type != to->device.device_type)) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceCopyDataFromTo: cannot copy between device types "
                        "%d and %d; copy through the CPU", (int)from->device.device_type,
                        (int)to->device.device_type);
    return -1;
  }
  /* The non-CPU side's API copies (TVM's rule). */
  copier = (from->device.device_type != (int32_t)kDLCPU) ? (int)from->device.device_type
                                                         : (int)to->device.device_type;
  api = RequireApi(copier, "TVMDeviceCopyDataFromTo");
  if (api == NULL) {
    return -1;
  }
  if (TVMCrtDeviceTraceHook != NULL) {
    size_t nbytes = 0U;
    int rc;
    (void)TVMCrtTensorNumBytes(from, &nbytes);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_COPY, TVM_CRT_DEVICE_TRACE_BEGIN, copier, nbytes);
    rc = api->copy(from, to, stream);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_COPY, TVM_CRT_DEVICE_TRACE_END, copier, nbytes);
    return (rc == 0) ? 0 : -1;
  }
  return (api->copy(from, to, stream) == 0) ? 0 : -1;
}

int TVMSynchronize(int device_type, int device_id, TVMStreamHandle stream) {
  DLDevice dev;
  const TVMCrtDeviceAPI* api = RequireApi(device_type, "TVMSynchronize");
  if (api == NULL) {
    return -1;
  }
  dev.device_type = (int32_t)device_type;
  dev.device_id = (int32_t)device_id;
  if (TVMCrtDeviceTraceHook != NULL) {
    int rc;
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_SYNC, TVM_CRT_DEVICE_TRACE_BEGIN, device_type, 0u);
    rc = api->sync(dev, stream);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_SYNC, TVM_CRT_DEVICE_TRACE_END, device_type, 0u);
    return (rc == 0) ? 0 : -1;
  }
  return (api->sync(dev, stream) == 0) ? 0 : -1;
}

int TVMDeviceGetAttr(DLDevice dev, int kind, TVMValue* out, int* out_code) {
  const TVMCrtDeviceAPI* api;
  if ((out == NULL) || (out_code == NULL)) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceGetAttr: out and out_code must not be NULL");
    return -1;
  }
  api = TVMCrtGetDeviceAPI((int)dev.device_type);
  if (kind == TVM_CRT_DEVICE_ATTR_EXIST) {
    out->v_int64 = (api != NULL) ? 1 : 0;
    *out_code = kTVMArgInt;
    return 0;
  }
  if (api == NULL) {
    TVMCrtSetLastErrorf("ValueError: TVMDeviceGetAttr: no device API registered for device type "
                        "%d", (int)dev.device_type);
    return -1;
  }
  out->v_int64 = 0;
  *out_code = kTVMNullptr;
  return (api->get_attr(dev, kind, out, out_code) == 0) ? 0 : -1;
}
