/*!
 * \file minrpc_syscall.c
 * \brief The syscalls (codes 9..21, spec section 5.6) against the C runtime and its device APIs.
 *
 * CRT devices are synchronous, so the only stream is the null one: kDevCreateStream and
 * kDevGetCurrentStream answer 0 and the other stream calls accept only 0.
 */
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

/* Argument kinds beyond plain type indices. */
#define KIND_PTR_OR_NONE (-1)
#define KIND_STR_OR_NONE (-2)

/*! \brief Alignment used for kDevAllocDataWithScope (TVM's kAllocAlignment). */
#define MINRPC_ALLOC_ALIGNMENT 64u
/*! \brief Largest alignment kDevAllocData accepts. */
#define MINRPC_MAX_ALIGNMENT 4096

static const char* KindName(int32_t kind) {
  switch (kind) {
    case kTVMArgInt:
      return "Int";
    case kTVMOpaqueHandle:
      return "OpaquePtr";
    case kTVMDataType:
      return "DataType";
    case kDLDeviceTypeCode:
      return "Device";
    case kTVMDLTensorHandle:
      return "DLTensorPtr";
    case kTVMStr:
      return "Str";
    case KIND_PTR_OR_NONE:
      return "OpaquePtr or None";
    case KIND_STR_OR_NONE:
      return "Str or None";
    default:
      return "value";
  }
}

/*! \brief Check the count and kinds of a syscall's arguments. */
static MinRPCStep Expect(MinRPCServer* s, const MinRPCArgs* a, int32_t code, const int32_t* kinds,
                         int32_t n) {
  int32_t i;
  if (a->num_args != n) {
    return MinRPCFail(s, kMinRPCCheckError, "%s takes %ld arguments, got %ld",
                      MinRPCCodeName(code), (long)n, (long)a->num_args);
  }
  for (i = 0; i < n; ++i) {
    int32_t got = (int32_t)a->codes[i];
    int32_t ok = (got == kinds[i]) ? 1 : 0;
    if ((kinds[i] == KIND_PTR_OR_NONE) &&
        ((got == (int32_t)kTVMOpaqueHandle) || (got == (int32_t)kTVMNullptr))) {
      ok = 1;
    }
    if ((kinds[i] == KIND_STR_OR_NONE) &&
        ((got == (int32_t)kTVMStr) || (got == (int32_t)kTVMNullptr))) {
      ok = 1;
    }
    if (ok == 0) {
      return MinRPCFail(s, kMinRPCCheckError, "%s argument %ld: expected %s, got type index %ld",
                        MinRPCCodeName(code), (long)i, KindName(kinds[i]), (long)got);
    }
  }
  return MINRPC_OK;
}

static MinRPCStep ReplyNone(MinRPCServer* s) {
  TVMValue v;
  v.v_handle = NULL;
  return MinRPCSendReturn(s, 0, (int32_t)kTVMNullptr, v);
}

static MinRPCStep ReplyPtr(MinRPCServer* s, void* ptr) {
  TVMValue v;
  v.v_handle = ptr;
  return MinRPCSendReturn(s, 0, (int32_t)kTVMOpaqueHandle, v);
}

/*! \brief The runtime's last error as the request's error. */
static MinRPCStep RuntimeFailed(MinRPCServer* s) {
  return MinRPCFailText(s, TVMGetLastError());
}

/*! \brief MINRPC_OK when a device API serves dev. */
static MinRPCStep CheckDevice(MinRPCServer* s, DLDevice dev, int32_t code) {
  TVMValue exist;
  int exist_code = (int)kTVMNullptr;
  exist.v_int64 = 0;
  if ((TVMDeviceGetAttr(dev, 0, &exist, &exist_code) != 0) || (exist.v_int64 == 0)) {
    return MinRPCFail(s, kMinRPCCheckError, "%s: no device API for device (%ld, %ld) here",
                      MinRPCCodeName(code), (long)dev.device_type, (long)dev.device_id);
  }
  return MINRPC_OK;
}

static MinRPCStep GetGlobalFunc(MinRPCServer* s, const MinRPCArgs* a) {
  static const int32_t kinds[] = {kTVMStr};
  TVMFunctionHandle h = NULL;
  if (Expect(s, a, MINRPC_CODE_GET_GLOBAL_FUNC, kinds, 1) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (TVMFuncGetGlobal(a->values[0].v_str, &h) != 0) {
    return RuntimeFailed(s);
  }
  if (h != NULL) {
    if (MinRPCHandleAdd(s, h, (int32_t)kTVMPackedFuncHandle) != MINRPC_OK) {
      (void)TVMFuncFree(h);
      return MINRPC_ERROR;
    }
  }
  return ReplyPtr(s, h);
}

static MinRPCStep FreeHandle(MinRPCServer* s, const MinRPCArgs* a) {
  int32_t got = (a->num_args == 1) ? (int32_t)a->codes[0] : 0;
  if ((a->num_args != 1) || ((got != (int32_t)kTVMOpaqueHandle) &&
                             (got != (int32_t)kTVMPackedFuncHandle) &&
                             (got != (int32_t)kTVMModuleHandle))) {
    return MinRPCFail(s, kMinRPCCheckError, "kFreeHandle takes one handle argument");
  }
  if (MinRPCHandleRelease(s, a->values[0].v_handle) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  return ReplyNone(s);
}

static MinRPCStep Alloc(MinRPCServer* s, DLDevice dev, uint64_t nbytes, uint64_t alignment,
                        DLDataType hint, int32_t code) {
  void* ptr = NULL;
  if (CheckDevice(s, dev, code) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (nbytes > (uint64_t)SIZE_MAX) {
    return MinRPCFail(s, kMinRPCAllocError, "%s: %llu bytes do not fit this device's size_t",
                      MinRPCCodeName(code), (unsigned long long)nbytes);
  }
  if (s->num_allocations >= (uint32_t)MINRPC_MAX_ALLOCS) {
    return MinRPCFail(s, kMinRPCAllocError, "%s: more than %d live allocations",
                      MinRPCCodeName(code), (int)MINRPC_MAX_ALLOCS);
  }
  if (TVMDeviceAllocDataSpace(dev, (nbytes == 0u) ? 1u : (size_t)nbytes, (size_t)alignment, hint,
                              &ptr) != 0) {
    return RuntimeFailed(s);
  }
  if (ptr == NULL) {
    return MinRPCFail(s, kMinRPCAllocError, "%s: the device API returned no memory for %llu bytes",
                      MinRPCCodeName(code), (unsigned long long)nbytes);
  }
  if (MinRPCAllocationAdd(s, dev, ptr, nbytes) != MINRPC_OK) {
    (void)TVMDeviceFreeDataSpace(dev, ptr);
    return MINRPC_ERROR;
  }
  return ReplyPtr(s, ptr);
}

static MinRPCStep DevAllocData(MinRPCServer* s, const MinRPCArgs* a) {
  static const int32_t kinds[] = {kDLDeviceTypeCode, kTVMArgInt, kTVMArgInt, kTVMDataType};
  int64_t nbytes;
  int64_t align;
  if (Expect(s, a, MINRPC_CODE_DEV_ALLOC_DATA, kinds, 4) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  nbytes = a->values[1].v_int64;
  align = (a->values[2].v_int64 < 1) ? 1 : a->values[2].v_int64;
  if (nbytes < 0) {
    return MinRPCFail(s, kMinRPCCheckError, "kDevAllocData of %lld bytes", (long long)nbytes);
  }
  if ((align > MINRPC_MAX_ALIGNMENT) || ((align & (align - 1)) != 0)) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "kDevAllocData alignment %lld is not a power of two up to %d",
                      (long long)align, (int)MINRPC_MAX_ALIGNMENT);
  }
  return Alloc(s, a->values[0].v_device, (uint64_t)nbytes, (uint64_t)align, a->values[3].v_type,
               MINRPC_CODE_DEV_ALLOC_DATA);
}

static MinRPCStep DevAllocDataWithScope(MinRPCServer* s, const MinRPCArgs* a) {
  static const int32_t kinds[] = {kTVMDLTensorHandle, KIND_STR_OR_NONE};
  const DLTensor* t;
  uint64_t nbytes = 0u;
  if (Expect(s, a, MINRPC_CODE_DEV_ALLOC_DATA_WITH_SCOPE, kinds, 2) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if ((a->codes[1] == (int)kTVMStr) && (strcmp(a->values[1].v_str, "global") != 0)) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "kDevAllocDataWithScope: memory scope '%s' is not supported (only global)",
                      a->values[1].v_str);
  }
  t = (const DLTensor*)a->values[0].v_handle;
  if (MinRPCTensorBytes(s, t, &nbytes, "kDevAllocDataWithScope template") != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  return Alloc(s, t->device, nbytes, MINRPC_ALLOC_ALIGNMENT, t->dtype,
               MINRPC_CODE_DEV_ALLOC_DATA_WITH_SCOPE);
}

static MinRPCStep DevFreeData(MinRPCServer* s, const MinRPCArgs* a) {
  static const int32_t kinds[] = {kDLDeviceTypeCode, KIND_PTR_OR_NONE};
  DLDevice dev;
  void* ptr;
  if (Expect(s, a, MINRPC_CODE_DEV_FREE_DATA, kinds, 2) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  dev = a->values[0].v_device;
  ptr = a->values[1].v_handle;
  if (MinRPCAllocationRemove(s, dev, ptr) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (TVMDeviceFreeDataSpace(dev, ptr) != 0) {
    return RuntimeFailed(s);
  }
  return ReplyNone(s);
}

static MinRPCStep CopyAmongRemote(MinRPCServer* s, const MinRPCArgs* a) {
  static const int32_t kinds[] = {kTVMDLTensorHandle, kTVMDLTensorHandle, KIND_PTR_OR_NONE};
  DLTensor* from;
  DLTensor* to;
  uint64_t from_bytes = 0u;
  uint64_t to_bytes = 0u;
  DLDevice dev;
  if (Expect(s, a, MINRPC_CODE_COPY_AMONG_REMOTE, kinds, 3) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  from = (DLTensor*)a->values[0].v_handle;
  to = (DLTensor*)a->values[1].v_handle;
  if (a->values[2].v_handle != NULL) {
    return MinRPCFail(s, kMinRPCCheckError, "kCopyAmongRemote: only the null stream exists here");
  }
  if ((MinRPCTensorBytes(s, from, &from_bytes, "kCopyAmongRemote source") != MINRPC_OK) ||
      (MinRPCTensorBytes(s, to, &to_bytes, "kCopyAmongRemote destination") != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (from_bytes != to_bytes) {
    return MinRPCFail(s, kMinRPCCheckError, "kCopyAmongRemote of %llu bytes into %llu",
                      (unsigned long long)from_bytes, (unsigned long long)to_bytes);
  }
  if ((from->device.device_type != (int32_t)kDLCPU) &&
      (to->device.device_type != (int32_t)kDLCPU) &&
      (from->device.device_type != to->device.device_type)) {
    return MinRPCFail(s, kMinRPCCheckError, "kCopyAmongRemote between device types %ld and %ld",
                      (long)from->device.device_type, (long)to->device.device_type);
  }
  if ((MinRPCCheckTensor(s, from, from_bytes, "kCopyAmongRemote source") != MINRPC_OK) ||
      (MinRPCCheckTensor(s, to, to_bytes, "kCopyAmongRemote destination") != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  dev = (from->device.device_type != (int32_t)kDLCPU) ? from->device : to->device;
  if ((TVMDeviceCopyDataFromTo(from, to, NULL) != 0) ||
      (TVMSynchronize(dev.device_type, dev.device_id, NULL) != 0)) {
    return RuntimeFailed(s);
  }
  return ReplyNone(s);
}

static MinRPCStep DevGetAttr(MinRPCServer* s, const MinRPCArgs* a) {
  static const int32_t kinds[] = {kDLDeviceTypeCode, kTVMArgInt};
  TVMValue value;
  int code = (int)kTVMNullptr;
  int64_t kind;
  if (Expect(s, a, MINRPC_CODE_DEV_GET_ATTR, kinds, 2) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  kind = a->values[1].v_int64;
  value.v_int64 = 0;
  if ((kind < 0) || (kind > 64)) {
    return MinRPCFail(s, kMinRPCCheckError, "kDevGetAttr: unknown attribute kind %lld",
                      (long long)kind);
  }
  if (TVMDeviceGetAttr(a->values[0].v_device, (int)kind, &value, &code) != 0) {
    if (kind == 0) { /* kExist answers 0 for a missing device API */
      value.v_int64 = 0;
      return MinRPCSendReturn(s, 0, (int32_t)kTVMArgInt, value);
    }
    return RuntimeFailed(s);
  }
  return MinRPCSendReturn(s, 0, (int32_t)code, value);
}

/*! \brief kDevSetDevice and the stream calls: CRT devices have only the null stream. */
static MinRPCStep DeviceOnly(MinRPCServer* s, int32_t code, const MinRPCArgs* a) {
  static const int32_t dev_only[] = {kDLDeviceTypeCode};
  static const int32_t dev_stream[] = {kDLDeviceTypeCode, KIND_PTR_OR_NONE};
  int32_t with_stream = ((code == MINRPC_CODE_DEV_STREAM_SYNC) ||
                         (code == MINRPC_CODE_DEV_FREE_STREAM) ||
                         (code == MINRPC_CODE_DEV_SET_STREAM))
                            ? 1
                            : 0;
  DLDevice dev;
  if (Expect(s, a, code, (with_stream != 0) ? dev_stream : dev_only, 1 + with_stream) !=
      MINRPC_OK) {
    return MINRPC_ERROR;
  }
  dev = a->values[0].v_device;
  if (CheckDevice(s, dev, code) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if ((with_stream != 0) && (a->values[1].v_handle != NULL)) {
    return MinRPCFail(s, kMinRPCCheckError, "%s: stream 0x%llx does not exist (only the null "
                      "stream does)", MinRPCCodeName(code),
                      (unsigned long long)(uintptr_t)a->values[1].v_handle);
  }
  if ((code == MINRPC_CODE_DEV_STREAM_SYNC) &&
      (TVMSynchronize(dev.device_type, dev.device_id, NULL) != 0)) {
    return RuntimeFailed(s);
  }
  if ((code == MINRPC_CODE_DEV_CREATE_STREAM) || (code == MINRPC_CODE_DEV_GET_CURRENT_STREAM)) {
    return ReplyPtr(s, NULL);
  }
  return ReplyNone(s);
}

MinRPCStep MinRPCHandleSyscall(MinRPCServer* s, int32_t code, MinRPCReader* r) {
  MinRPCArgs args;
  if ((MinRPCReadArgs(r, &args, MinRPCCodeName(code)) != MINRPC_OK) ||
      (MinRPCReadEnd(r, MinRPCCodeName(code)) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  switch (code) {
    case MINRPC_CODE_GET_GLOBAL_FUNC:
      return GetGlobalFunc(s, &args);
    case MINRPC_CODE_FREE_HANDLE:
      return FreeHandle(s, &args);
    case MINRPC_CODE_DEV_GET_ATTR:
      return DevGetAttr(s, &args);
    case MINRPC_CODE_DEV_ALLOC_DATA:
      return DevAllocData(s, &args);
    case MINRPC_CODE_DEV_FREE_DATA:
      return DevFreeData(s, &args);
    case MINRPC_CODE_COPY_AMONG_REMOTE:
      return CopyAmongRemote(s, &args);
    case MINRPC_CODE_DEV_ALLOC_DATA_WITH_SCOPE:
      return DevAllocDataWithScope(s, &args);
    case MINRPC_CODE_DEV_SET_DEVICE:
    case MINRPC_CODE_DEV_STREAM_SYNC:
    case MINRPC_CODE_DEV_CREATE_STREAM:
    case MINRPC_CODE_DEV_FREE_STREAM:
    case MINRPC_CODE_DEV_SET_STREAM:
    case MINRPC_CODE_DEV_GET_CURRENT_STREAM:
      return DeviceOnly(s, code, &args);
    default:
      return MinRPCFail(s, kMinRPCUnknownRPCSyscall, "syscall code %ld", (long)code);
  }
}
