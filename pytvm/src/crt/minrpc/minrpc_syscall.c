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

/*! \brief Alignment used for kDevAllocDataWithScope (TVM's kAllocAlignment). */
#define MINRPC_ALLOC_ALIGNMENT 64u
/*! \brief Largest alignment kDevAllocData accepts. */
#define MINRPC_MAX_ALIGNMENT 4096

/*! \brief Argument kinds: indices into kAccepted (and kKindNames). */
enum {
  KIND_INT,
  KIND_DATA_TYPE,
  KIND_DEVICE,
  KIND_TENSOR,
  KIND_STR,
  KIND_PTR_OR_NONE,
  KIND_STR_OR_NONE,
  KIND_HANDLE
};

/*! \brief The type indices each kind accepts (a kind with fewer repeats its first). */
static const uint8_t kAccepted[][3] = {
    {kTVMArgInt, kTVMArgInt, kTVMArgInt},
    {kTVMDataType, kTVMDataType, kTVMDataType},
    {kDLDeviceTypeCode, kDLDeviceTypeCode, kDLDeviceTypeCode},
    {kTVMDLTensorHandle, kTVMDLTensorHandle, kTVMDLTensorHandle},
    {kTVMStr, kTVMStr, kTVMStr},
    {kTVMOpaqueHandle, kTVMNullptr, kTVMNullptr},
    {kTVMStr, kTVMNullptr, kTVMNullptr},
    {kTVMOpaqueHandle, kTVMPackedFuncHandle, kTVMModuleHandle},
};

#if TVM_CRT_ERROR_TEXTS
static const char* const kKindNames[] = {
    "Int", "DataType", "Device", "DLTensorPtr", "Str", "OpaquePtr or None", "Str or None",
    "handle"};
#define KIND_NAME(kind) kKindNames[kind]
#else
#define KIND_NAME(kind) ((void)(kind), (const char*)NULL)
#endif

/*! \brief What a syscall takes: its argument count and their kinds. */
typedef struct {
  uint8_t count;
  uint8_t kinds[4];
} signature_t;

/*! \brief Signatures of the syscalls, indexed by code - MINRPC_CODE_GET_GLOBAL_FUNC. */
static const signature_t kSignatures[] = {
    {1, {KIND_STR}}, /* kGetGlobalFunc */
    {1, {KIND_HANDLE}}, /* kFreeHandle */
    {1, {KIND_DEVICE}}, /* kDevSetDevice */
    {2, {KIND_DEVICE, KIND_INT}}, /* kDevGetAttr */
    {4, {KIND_DEVICE, KIND_INT, KIND_INT, KIND_DATA_TYPE}}, /* kDevAllocData */
    {2, {KIND_DEVICE, KIND_PTR_OR_NONE}}, /* kDevFreeData */
    {2, {KIND_DEVICE, KIND_PTR_OR_NONE}}, /* kDevStreamSync */
    {3, {KIND_TENSOR, KIND_TENSOR, KIND_PTR_OR_NONE}}, /* kCopyAmongRemote */
    {2, {KIND_TENSOR, KIND_STR_OR_NONE}}, /* kDevAllocDataWithScope */
    {1, {KIND_DEVICE}}, /* kDevCreateStream */
    {2, {KIND_DEVICE, KIND_PTR_OR_NONE}}, /* kDevFreeStream */
    {2, {KIND_DEVICE, KIND_PTR_OR_NONE}}, /* kDevSetStream */
    {1, {KIND_DEVICE}}, /* kDevGetCurrentStream */
};

/*! \brief Check the count and kinds of a syscall's arguments against its signature. */
static pytvm_minrpc_step expect(pytvm_minrpc_server* s, const pytvm_minrpc_args* a, int32_t code) {
  const signature_t* sig = &kSignatures[code - MINRPC_CODE_GET_GLOBAL_FUNC];
  int32_t n = (int32_t)sig->count;
  int32_t i;
  if (a->num_args != n) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
    PYTVM_CRT_MSG_STR(msg, " takes ");
    PYTVM_CRT_MSG_I64(msg, n);
    PYTVM_CRT_MSG_STR(msg, " arguments, got ");
    PYTVM_CRT_MSG_I64(msg, a->num_args);
    return MINRPC_ERROR;
  }
  for (i = 0; i < n; ++i) {
    const uint8_t* accepted = kAccepted[sig->kinds[i]];
    int got = a->codes[i];
    if ((got != (int)accepted[0]) && (got != (int)accepted[1]) && (got != (int)accepted[2])) {
      pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
      PYTVM_CRT_MSG_STR(msg, ": ");
      PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
      PYTVM_CRT_MSG_STR(msg, " argument ");
      PYTVM_CRT_MSG_I64(msg, i);
      PYTVM_CRT_MSG_STR(msg, ": expected ");
      PYTVM_CRT_MSG_STR(msg, KIND_NAME(sig->kinds[i]));
      PYTVM_CRT_MSG_STR(msg, ", got type index ");
      PYTVM_CRT_MSG_I64(msg, got);
      return MINRPC_ERROR;
    }
  }
  return MINRPC_OK;
}

static pytvm_minrpc_step reply_none(pytvm_minrpc_server* s) {
  TVMValue v;
  v.v_handle = NULL;
  return pytvm_minrpc_send_return(s, 0, (int32_t)kTVMNullptr, v);
}

static pytvm_minrpc_step reply_ptr(pytvm_minrpc_server* s, void* ptr) {
  TVMValue v;
  v.v_handle = ptr;
  return pytvm_minrpc_send_return(s, 0, (int32_t)kTVMOpaqueHandle, v);
}

/*! \brief The runtime's last error as the request's error. */
static pytvm_minrpc_step runtime_failed(pytvm_minrpc_server* s) {
  return pytvm_minrpc_fail_text(s, TVMGetLastError());
}

/*! \brief MINRPC_OK when a device API serves dev. */
static pytvm_minrpc_step check_device(pytvm_minrpc_server* s, DLDevice dev, int32_t code) {
  TVMValue exist;
  int exist_code = (int)kTVMNullptr;
  exist.v_int64 = 0;
  if ((pytvm_crt_device_get_attr(dev, 0, &exist, &exist_code) != 0) || (exist.v_int64 == 0)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
    PYTVM_CRT_MSG_STR(msg, ": no device API for device ");
    pytvm_minrpc_msg_device(msg, dev);
    PYTVM_CRT_MSG_STR(msg, " here");
    return MINRPC_ERROR;
  }
  return MINRPC_OK;
}

static pytvm_minrpc_step get_global_func(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  TVMFunctionHandle h = NULL;
  if (TVMFuncGetGlobal(a->values[0].v_str, &h) != 0) {
    return runtime_failed(s);
  }
  if (h != NULL) {
    if (pytvm_minrpc_handle_add(s, h, (int32_t)kTVMPackedFuncHandle) != MINRPC_OK) {
      (void)TVMFuncFree(h);
      return MINRPC_ERROR;
    }
  }
  return reply_ptr(s, h);
}

static pytvm_minrpc_step free_handle(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  if (pytvm_minrpc_handle_release(s, a->values[0].v_handle) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  return reply_none(s);
}

static pytvm_minrpc_step alloc(pytvm_minrpc_server* s, DLDevice dev, uint64_t nbytes, uint64_t alignment,
                        DLDataType hint, int32_t code) {
  void* ptr = NULL;
#if MINRPC_WORDED_CHECKS /* TVMDeviceAllocDataSpace needs a device API too */
  if (check_device(s, dev, code) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
#endif
  if (nbytes > (uint64_t)SIZE_MAX) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_U64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes do not fit this device's size_t");
    return MINRPC_ERROR;
  }
#if MINRPC_WORDED_CHECKS /* pytvm_minrpc_allocation_add refuses too (and the memory is freed) */
  if (s->num_allocations >= (uint32_t)MINRPC_MAX_ALLOCS) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
    PYTVM_CRT_MSG_STR(msg, ": more than ");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_ALLOCS);
    PYTVM_CRT_MSG_STR(msg, " live allocations");
    return MINRPC_ERROR;
  }
#endif
  if (TVMDeviceAllocDataSpace(dev, (nbytes == 0u) ? 1u : (size_t)nbytes, (size_t)alignment, hint,
                              &ptr) != 0) {
    return runtime_failed(s);
  }
  if (ptr == NULL) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
    PYTVM_CRT_MSG_STR(msg, ": the device API returned no memory for ");
    PYTVM_CRT_MSG_U64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes");
    return MINRPC_ERROR;
  }
  if (pytvm_minrpc_allocation_add(s, dev, ptr, nbytes) != MINRPC_OK) {
    (void)TVMDeviceFreeDataSpace(dev, ptr);
    return MINRPC_ERROR;
  }
  return reply_ptr(s, ptr);
}

static pytvm_minrpc_step dev_alloc_data(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  int64_t nbytes;
  int64_t align;
  nbytes = a->values[1].v_int64;
  align = (a->values[2].v_int64 < 1) ? 1 : a->values[2].v_int64;
  if (nbytes < 0) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kDevAllocData of ");
    PYTVM_CRT_MSG_I64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes");
    return MINRPC_ERROR;
  }
  if ((align > MINRPC_MAX_ALIGNMENT) || ((align & (align - 1)) != 0)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kDevAllocData alignment ");
    PYTVM_CRT_MSG_I64(msg, align);
    PYTVM_CRT_MSG_STR(msg, " is not a power of two up to ");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_ALIGNMENT);
    return MINRPC_ERROR;
  }
  return alloc(s, a->values[0].v_device, (uint64_t)nbytes, (uint64_t)align, a->values[3].v_type,
               MINRPC_CODE_DEV_ALLOC_DATA);
}

static pytvm_minrpc_step dev_alloc_data_with_scope(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  const DLTensor* t;
  uint64_t nbytes = 0u;
  if ((a->codes[1] == (int)kTVMStr) && (strcmp(a->values[1].v_str, "global") != 0)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kDevAllocDataWithScope: memory scope '");
    PYTVM_CRT_MSG_STR(msg, a->values[1].v_str);
    PYTVM_CRT_MSG_STR(msg, "' is not supported (only global)");
    return MINRPC_ERROR;
  }
  t = (const DLTensor*)a->values[0].v_handle;
  if (pytvm_minrpc_tensor_bytes(s, t, &nbytes,
                                MINRPC_NAME("kDevAllocDataWithScope template")) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  return alloc(s, t->device, nbytes, MINRPC_ALLOC_ALIGNMENT, t->dtype,
               MINRPC_CODE_DEV_ALLOC_DATA_WITH_SCOPE);
}

static pytvm_minrpc_step dev_free_data(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  DLDevice dev;
  void* ptr;
  dev = a->values[0].v_device;
  ptr = a->values[1].v_handle;
  if (pytvm_minrpc_allocation_remove(s, dev, ptr) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (TVMDeviceFreeDataSpace(dev, ptr) != 0) {
    return runtime_failed(s);
  }
  return reply_none(s);
}

static pytvm_minrpc_step copy_among_remote(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  DLTensor* from;
  DLTensor* to;
  uint64_t from_bytes = 0u;
  uint64_t to_bytes = 0u;
  from = (DLTensor*)a->values[0].v_handle;
  to = (DLTensor*)a->values[1].v_handle;
  if (a->values[2].v_handle != NULL) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kCopyAmongRemote: only the null stream exists here");
    return MINRPC_ERROR;
  }
  if ((pytvm_minrpc_check_whole_tensor(s, from, &from_bytes,
                                       MINRPC_NAME("kCopyAmongRemote source")) != MINRPC_OK) ||
      (pytvm_minrpc_check_whole_tensor(s, to, &to_bytes,
                                       MINRPC_NAME("kCopyAmongRemote destination")) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  /* TVMDeviceCopyDataFromTo refuses both too; the in-place copy below relies on the first */
#if MINRPC_WORDED_CHECKS || !TVM_CRT_ACCELERATOR
  if (from_bytes != to_bytes) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kCopyAmongRemote of ");
    PYTVM_CRT_MSG_U64(msg, from_bytes);
    PYTVM_CRT_MSG_STR(msg, " bytes into ");
    PYTVM_CRT_MSG_U64(msg, to_bytes);
    return MINRPC_ERROR;
  }
#endif
#if MINRPC_WORDED_CHECKS
  if ((from->device.device_type != (int32_t)kDLCPU) &&
      (to->device.device_type != (int32_t)kDLCPU) &&
      (from->device.device_type != to->device.device_type)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kCopyAmongRemote between device types ");
    PYTVM_CRT_MSG_I64(msg, from->device.device_type);
    PYTVM_CRT_MSG_STR(msg, " and ");
    PYTVM_CRT_MSG_I64(msg, to->device.device_type);
    return MINRPC_ERROR;
  }
#endif
#if TVM_CRT_ACCELERATOR
  {
    DLDevice dev = (from->device.device_type != (int32_t)kDLCPU) ? from->device : to->device;
    if ((TVMDeviceCopyDataFromTo(from, to, NULL) != 0) ||
        (TVMSynchronize(dev.device_type, dev.device_id, NULL) != 0)) {
      return runtime_failed(s);
    }
  }
#else
  /* Only CPU memory is served (as by kCopyToRemote/kCopyFromRemote): copied in place, both
   * ranges checked above to lie in this server's allocations, so from_bytes fits size_t. */
  if ((from->device.device_type != (int32_t)kDLCPU) ||
      (to->device.device_type != (int32_t)kDLCPU)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCRPCCodeNotSupported);
    PYTVM_CRT_MSG_STR(msg, ": kCopyAmongRemote with a non-CPU device "
                           "(built without TVM_CRT_ACCELERATOR)");
    return MINRPC_ERROR;
  }
  (void)memmove((uint8_t*)to->data + to->byte_offset,
                (const uint8_t*)from->data + from->byte_offset, (size_t)from_bytes);
#endif
  return reply_none(s);
}

static pytvm_minrpc_step dev_get_attr(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  TVMValue value;
  int code = (int)kTVMNullptr;
  int64_t kind;
  kind = a->values[1].v_int64;
  value.v_int64 = 0;
  if ((kind < 0) || (kind > 64)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kDevGetAttr: unknown attribute kind ");
    PYTVM_CRT_MSG_I64(msg, kind);
    return MINRPC_ERROR;
  }
  if (pytvm_crt_device_get_attr(a->values[0].v_device, (int)kind, &value, &code) != 0) {
    if (kind == 0) { /* kExist answers 0 for a missing device API */
      value.v_int64 = 0;
      return pytvm_minrpc_send_return(s, 0, (int32_t)kTVMArgInt, value);
    }
    return runtime_failed(s);
  }
  return pytvm_minrpc_send_return(s, 0, (int32_t)code, value);
}

/*! \brief kDevSetDevice and the stream calls: CRT devices have only the null stream. */
static pytvm_minrpc_step device_only(pytvm_minrpc_server* s, int32_t code, const pytvm_minrpc_args* a) {
  int32_t with_stream = (a->num_args == 2) ? 1 : 0; /* signature: a device [, a stream] */
  DLDevice dev;
  dev = a->values[0].v_device;
  if (check_device(s, dev, code) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if ((with_stream != 0) && (a->values[1].v_handle != NULL)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
    PYTVM_CRT_MSG_STR(msg, ": stream ");
    PYTVM_CRT_MSG_HEX(msg, (uintptr_t)a->values[1].v_handle);
    PYTVM_CRT_MSG_STR(msg, " does not exist (only the null stream does)");
    return MINRPC_ERROR;
  }
  if ((code == MINRPC_CODE_DEV_STREAM_SYNC) &&
      (TVMSynchronize(dev.device_type, dev.device_id, NULL) != 0)) {
    return runtime_failed(s);
  }
  if ((code == MINRPC_CODE_DEV_CREATE_STREAM) || (code == MINRPC_CODE_DEV_GET_CURRENT_STREAM)) {
    return reply_ptr(s, NULL);
  }
  return reply_none(s);
}

pytvm_minrpc_step pytvm_minrpc_handle_syscall(pytvm_minrpc_server* s, int32_t code, pytvm_minrpc_reader* r) {
  pytvm_minrpc_args args;
  if ((pytvm_minrpc_read_args(r, &args, MINRPC_CODE_NAME(code)) != MINRPC_OK) ||
      (pytvm_minrpc_read_end(r, MINRPC_CODE_NAME(code)) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if ((code < MINRPC_CODE_GET_GLOBAL_FUNC) || (code > MINRPC_CODE_DEV_GET_CURRENT_STREAM)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCUnknownRPCSyscall);
    PYTVM_CRT_MSG_STR(msg, ": syscall code ");
    PYTVM_CRT_MSG_I64(msg, code);
    return MINRPC_ERROR;
  }
#if !TVM_CRT_STREAM_SYSCALLS
  if (code >= MINRPC_CODE_DEV_CREATE_STREAM) {
    (void)pytvm_minrpc_error(s, kMinRPCRPCCodeNotSupported);
    return MINRPC_ERROR;
  }
#endif
  if (expect(s, &args, code) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  switch (code) {
    case MINRPC_CODE_GET_GLOBAL_FUNC:
      return get_global_func(s, &args);
    case MINRPC_CODE_FREE_HANDLE:
      return free_handle(s, &args);
    case MINRPC_CODE_DEV_GET_ATTR:
      return dev_get_attr(s, &args);
    case MINRPC_CODE_DEV_ALLOC_DATA:
      return dev_alloc_data(s, &args);
    case MINRPC_CODE_DEV_FREE_DATA:
      return dev_free_data(s, &args);
    case MINRPC_CODE_COPY_AMONG_REMOTE:
      return copy_among_remote(s, &args);
    case MINRPC_CODE_DEV_ALLOC_DATA_WITH_SCOPE:
      return dev_alloc_data_with_scope(s, &args);
    default: /* kDevSetDevice, kDevStreamSync and the stream calls */
      return device_only(s, code, &args);
  }
}
