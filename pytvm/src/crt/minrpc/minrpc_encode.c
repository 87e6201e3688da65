/*!
 * \file minrpc_encode.c
 * \brief kReturn packets (spec section 5.3): one value for syscalls and kInitServer, the
 *        result's type index first for kCallFunc. String and bytes data are written from
 *        where they live, so a large result needs no buffer.
 */
#include <string.h>

#include "minrpc_internal.h"

/*! \brief Fixed part of a reply: enough for the header, the tag and any scalar value. */
#define MINRPC_REPLY_HEAD_BYTES 64u

/*! \brief Append a u32/u64 to the reply head (callers stay within MINRPC_REPLY_HEAD_BYTES). */
static size_t Put32(uint8_t* head, size_t at, uint32_t v) {
  MinRPCPutU32(head + at, v);
  return at + 4u;
}

static size_t Put64(uint8_t* head, size_t at, uint64_t v) {
  MinRPCPutU64(head + at, v);
  return at + 8u;
}

MinRPCStep MinRPCSendReturn(MinRPCServer* s, int32_t with_tag, int32_t code, TVMValue value) {
  uint8_t head[MINRPC_REPLY_HEAD_BYTES];
  size_t at = 8u; /* the length goes in last */
  const uint8_t* blob = NULL;
  uint64_t blob_len = 0u;
  int32_t tag = code;
  uint64_t raw = 0u;

  if ((code == (int32_t)kTVMStr) || (code == (int32_t)kTVMStrObject) ||
      (code == MINRPC_TYPE_SMALL_STR)) {
    blob = (const uint8_t*)value.v_str;
    blob_len = (blob != NULL) ? (uint64_t)strlen(value.v_str) : 0u;
    tag = (int32_t)kTVMStrObject;
    code = (int32_t)kTVMStr;
  } else if ((code == (int32_t)kTVMBytes) || (code == (int32_t)kTVMBytesObject) ||
             (code == MINRPC_TYPE_SMALL_BYTES)) {
    const TVMByteArray* arr = (const TVMByteArray*)value.v_handle;
    if (arr != NULL) {
      blob = (const uint8_t*)arr->data;
      blob_len = (uint64_t)arr->size;
    }
    tag = (int32_t)kTVMBytesObject;
    code = (int32_t)kTVMBytes;
  } else {
    /* scalars and handles, checked below */
  }

  at = Put32(head, at, (uint32_t)MINRPC_CODE_RETURN);
  at = Put32(head, at, (with_tag != 0) ? 2u : 1u);
  if (with_tag != 0) {
    at = Put32(head, at, (uint32_t)kTVMArgInt);
    at = Put64(head, at, (uint64_t)(int64_t)tag);
  }
  switch (code) {
    case kTVMNullptr:
      at = Put32(head, at, (uint32_t)kTVMNullptr);
      break;
    case kTVMArgInt:
    case kTVMArgBool:
      at = Put32(head, at, (uint32_t)code);
      at = Put64(head, at, (uint64_t)value.v_int64);
      break;
    case kTVMArgFloat:
      (void)memcpy(&raw, &value.v_float64, sizeof(raw));
      at = Put32(head, at, (uint32_t)kTVMArgFloat);
      at = Put64(head, at, raw);
      break;
    case kTVMOpaqueHandle:
    case kTVMPackedFuncHandle:
    case kTVMModuleHandle:
      at = Put32(head, at, (uint32_t)kTVMOpaqueHandle);
      at = Put64(head, at, (uint64_t)(uintptr_t)value.v_handle);
      break;
    case kTVMDataType:
      at = Put32(head, at, (uint32_t)kTVMDataType);
      head[at] = value.v_type.code;
      head[at + 1u] = value.v_type.bits;
      head[at + 2u] = (uint8_t)(value.v_type.lanes & 0xFFu);
      head[at + 3u] = (uint8_t)(value.v_type.lanes >> 8);
      at = Put32(head, at + 4u, 0u);
      break;
    case kDLDeviceTypeCode:
      at = Put32(head, at, (uint32_t)kDLDeviceTypeCode);
      at = Put32(head, at, (uint32_t)value.v_device.device_type);
      at = Put32(head, at, (uint32_t)value.v_device.device_id);
      break;
    case kTVMStr:
    case kTVMBytes:
      at = Put32(head, at, (uint32_t)code);
      at = Put64(head, at, blob_len);
      break;
    case kTVMDLTensorHandle:
      return MinRPCFail(s, kMinRPCInvalidTypeCodeTensor,
                        "a function returned a raw DLTensor*, which TVM clients cannot receive; "
                        "return its data through an argument instead");
    default:
      return MinRPCFail(s, kMinRPCUnknownTypeIndex,
                        "cannot return a value of type index %ld over RPC", (long)code);
  }
  if (blob_len > (uint64_t)MINRPC_MAX_PACKET) {
    return MinRPCFail(s, kMinRPCAllocError,
                      "the result of %llu bytes exceeds the %lu-byte packet limit",
                      (unsigned long long)blob_len, (unsigned long)MINRPC_MAX_PACKET);
  }
  MinRPCPutU64(head, (uint64_t)(at - 8u) + blob_len);
  if (MinRPCWrite(s, head, at) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  return MinRPCWrite(s, blob, (size_t)blob_len);
}
