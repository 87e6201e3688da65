/*!
 * \file device_api.c
 * \brief The device API table (device type -> pytvm_crt_device_api) and the TVM C device calls.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/* Trace hook of the calls below (declared in pytvm_crt/device_api.h, set by a tracer while it
 * records): NULL costs one branch per call. Without TVM_CRT_TRACE it is never called. */
pytvm_crt_device_trace_fn pytvm_crt_device_trace_hook = NULL;

#if TVM_CRT_TRACE
#define DEVICE_TRACING() (pytvm_crt_device_trace_hook != NULL)
#define DEVICE_TRACE(kind, phase, device_type, bytes)                                \
  do {                                                                               \
    if (pytvm_crt_device_trace_hook != NULL) {                                       \
      pytvm_crt_device_trace_hook((kind), (phase), (int32_t)(device_type), (bytes)); \
    }                                                                                \
  } while (0)
#else
#define DEVICE_TRACING() 0
#define DEVICE_TRACE(kind, phase, device_type, bytes) \
  ((void)(kind), (void)(phase), (void)(device_type), (void)(bytes))
#endif

typedef struct {
  int device_type;
  const pytvm_crt_device_api* api; /* NULL: free slot */
} device_api_entry_t;

static device_api_entry_t g_device_apis[TVM_CRT_MAX_DEVICE_APIS];

void pytvm_crt_device_api_table_reset(void) {
  size_t i;
  for (i = 0U; i < (size_t)TVM_CRT_MAX_DEVICE_APIS; i++) {
    g_device_apis[i].device_type = 0;
    g_device_apis[i].api = NULL;
  }
}

static device_api_entry_t* find_entry(int device_type) {
  size_t i;
  for (i = 0U; i < (size_t)TVM_CRT_MAX_DEVICE_APIS; i++) {
    if ((g_device_apis[i].api != NULL) && (g_device_apis[i].device_type == device_type)) {
      return &g_device_apis[i];
    }
  }
  return NULL;
}

int pytvm_crt_register_device_api(int device_type, const pytvm_crt_device_api* api) {
  device_api_entry_t* entry = find_entry(device_type);
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

const pytvm_crt_device_api* pytvm_crt_get_device_api(int device_type) {
  const device_api_entry_t* entry = find_entry(device_type);
  return (entry != NULL) ? entry->api : NULL;
}

/* The API of a device type, or NULL after setting the last error. */
static const pytvm_crt_device_api* require_api(int device_type, const char* caller) {
  const pytvm_crt_device_api* api = pytvm_crt_get_device_api(device_type);
  if (api == NULL) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError");
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, caller);
    PYTVM_CRT_MSG_STR(msg, ": no device API registered for device type ");
    PYTVM_CRT_MSG_I64(msg, device_type);
  }
  return api;
}

int TVMDeviceAllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment, DLDataType type_hint,
                            void** out_data) {
  const pytvm_crt_device_api* api;
  if (out_data == NULL) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceAllocDataSpace"));
    PYTVM_CRT_MSG_STR(msg, ": out_data is NULL");
    return -1;
  }
  *out_data = NULL;
  if ((alignment == 0U) || ((alignment & (alignment - 1U)) != 0U)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceAllocDataSpace"));
    PYTVM_CRT_MSG_STR(msg, ": alignment ");
    PYTVM_CRT_MSG_U64(msg, alignment);
    PYTVM_CRT_MSG_STR(msg, " is not a power of two");
    return -1;
  }
  api = require_api((int)dev.device_type, "TVMDeviceAllocDataSpace");
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
  const pytvm_crt_device_api* api = require_api((int)dev.device_type, "TVMDeviceFreeDataSpace");
  if (api == NULL) {
    return -1;
  }
  if (ptr == NULL) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceFreeDataSpace"));
    PYTVM_CRT_MSG_STR(msg, ": ptr is NULL");
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
static int check_copyable(const DLTensor* from, const DLTensor* to) {
  size_t from_bytes = 0U;
  size_t to_bytes = 0U;
  int from_compact = 0;
  int to_compact = 0;
  int err = pytvm_crt_tensor_num_bytes(from, &from_bytes);
  if (err == (int)kTvmErrorNoError) {
    err = pytvm_crt_tensor_num_bytes(to, &to_bytes);
  }
  if (err == (int)kTvmErrorNoError) {
    err = pytvm_crt_tensor_is_compact(from, &from_compact);
  }
  if (err == (int)kTvmErrorNoError) {
    err = pytvm_crt_tensor_is_compact(to, &to_compact);
  }
  if (err != (int)kTvmErrorNoError) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceCopyDataFromTo"));
    PYTVM_CRT_MSG_STR(msg, ": bad tensor: ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string(err));
    return -1;
  }
  if ((from_compact == 0) || (to_compact == 0)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceCopyDataFromTo"));
    PYTVM_CRT_MSG_STR(msg, ": both tensors must be compact");
    return -1;
  }
  if (from_bytes != to_bytes) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceCopyDataFromTo"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_U64(msg, from_bytes);
    PYTVM_CRT_MSG_STR(msg, " bytes into ");
    PYTVM_CRT_MSG_U64(msg, to_bytes);
    PYTVM_CRT_MSG_STR(msg, " bytes; the sizes must match exactly");
    return -1;
  }
  if ((from_bytes > 0U) && ((from->data == NULL) || (to->data == NULL))) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceCopyDataFromTo"));
    PYTVM_CRT_MSG_STR(msg, ": tensor data is NULL");
    return -1;
  }
  return 0;
}

int TVMDeviceCopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  int copier;
  const pytvm_crt_device_api* api;
  if ((from == NULL) || (to == NULL)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceCopyDataFromTo"));
    PYTVM_CRT_MSG_STR(msg, ": from and to must not be NULL");
    return -1;
  }
  if (check_copyable(from, to) != 0) {
    return -1;
  }
  if ((from->device.device_type != (int32_t)kDLCPU) &&
      (to->device.device_type != (int32_t)kDLCPU) &&
      (from->device.device_type != to->device.device_type)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMDeviceCopyDataFromTo"));
    PYTVM_CRT_MSG_STR(msg, ": cannot copy between device types ");
    PYTVM_CRT_MSG_I64(msg, from->device.device_type);
    PYTVM_CRT_MSG_STR(msg, " and ");
    PYTVM_CRT_MSG_I64(msg, to->device.device_type);
    PYTVM_CRT_MSG_STR(msg, "; copy through the CPU");
    return -1;
  }
  /* The non-CPU side's API copies (TVM's rule). */
  copier = (from->device.device_type != (int32_t)kDLCPU) ? (int)from->device.device_type
                                                         : (int)to->device.device_type;
  api = require_api(copier, "TVMDeviceCopyDataFromTo");
  if (api == NULL) {
    return -1;
  }
  if (DEVICE_TRACING()) {
    size_t nbytes = 0U;
    int rc;
    (void)pytvm_crt_tensor_num_bytes(from, &nbytes);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_COPY, TVM_CRT_DEVICE_TRACE_BEGIN, copier, nbytes);
    rc = api->copy(from, to, stream);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_COPY, TVM_CRT_DEVICE_TRACE_END, copier, nbytes);
    return (rc == 0) ? 0 : -1;
  }
  return (api->copy(from, to, stream) == 0) ? 0 : -1;
}

int TVMSynchronize(int device_type, int device_id, TVMStreamHandle stream) {
  DLDevice dev;
  const pytvm_crt_device_api* api = require_api(device_type, "TVMSynchronize");
  if (api == NULL) {
    return -1;
  }
  dev.device_type = (int32_t)device_type;
  dev.device_id = (int32_t)device_id;
  if (DEVICE_TRACING()) {
    int rc;
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_SYNC, TVM_CRT_DEVICE_TRACE_BEGIN, device_type, 0u);
    rc = api->sync(dev, stream);
    DEVICE_TRACE(TVM_CRT_DEVICE_TRACE_SYNC, TVM_CRT_DEVICE_TRACE_END, device_type, 0u);
    return (rc == 0) ? 0 : -1;
  }
  return (api->sync(dev, stream) == 0) ? 0 : -1;
}

int pytvm_crt_device_get_attr(DLDevice dev, int kind, TVMValue* out, int* out_code) {
  const pytvm_crt_device_api* api;
  if ((out == NULL) || (out_code == NULL)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "pytvm_crt_device_get_attr"));
    PYTVM_CRT_MSG_STR(msg, ": out and out_code must not be NULL");
    return -1;
  }
  api = pytvm_crt_get_device_api((int)dev.device_type);
  if (kind == TVM_CRT_DEVICE_ATTR_EXIST) {
    out->v_int64 = (api != NULL) ? 1 : 0;
    *out_code = kTVMArgInt;
    return 0;
  }
  if (api == NULL) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "pytvm_crt_device_get_attr"));
    PYTVM_CRT_MSG_STR(msg, ": no device API registered for device type ");
    PYTVM_CRT_MSG_I64(msg, dev.device_type);
    return -1;
  }
  out->v_int64 = 0;
  *out_code = kTVMNullptr;
  return (api->get_attr(dev, kind, out, out_code) == 0) ? 0 : -1;
}
