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
static size_t put32(uint8_t* head, size_t at, uint32_t v) {
  pytvm_minrpc_put_u32(head + at, v);
  return at + 4u;
}

static size_t put64(uint8_t* head, size_t at, uint64_t v) {
  pytvm_minrpc_put_u64(head + at, v);
  return at + 8u;
}

pytvm_minrpc_step pytvm_minrpc_send_return(pytvm_minrpc_server* s, int32_t with_tag, int32_t code,
                                           TVMValue value) {
  uint8_t head[MINRPC_REPLY_HEAD_BYTES];
  size_t at;
  const uint8_t* blob = NULL;
  uint64_t blob_len = 0u;
  int32_t tag = code;  /* the result's type index, first in a kCallFunc reply */
  int32_t wire = code; /* the value's type index on the wire */
  uint64_t payload = 0u; /* every value but None is 8 bytes on the wire (a blob: its length) */

  switch (code) {
    case kTVMNullptr:
      break;
    case kTVMArgInt:
    case kTVMArgBool:
    case kTVMArgFloat: /* a double's bits, read through the union (C99 6.5.2.3) */
      payload = (uint64_t)value.v_int64;
      break;
    case kTVMOpaqueHandle:
    case kTVMPackedFuncHandle:
    case kTVMModuleHandle:
      wire = (int32_t)kTVMOpaqueHandle;
      payload = (uint64_t)(uintptr_t)value.v_handle;
      break;
    case kTVMDataType: /* u8 code, u8 bits, u16 lanes, 4 bytes of padding */
      payload = (uint64_t)value.v_type.code | ((uint64_t)value.v_type.bits << 8) |
                ((uint64_t)value.v_type.lanes << 16);
      break;
    case kDLDeviceTypeCode: /* i32 device_type, i32 device_id */
      payload = (uint64_t)(uint32_t)value.v_device.device_type |
                ((uint64_t)(uint32_t)value.v_device.device_id << 32);
      break;
    case kTVMStr:
    case kTVMStrObject:
    case MINRPC_TYPE_SMALL_STR:
      blob = (const uint8_t*)value.v_str;
      blob_len = (blob != NULL) ? (uint64_t)strlen(value.v_str) : 0u;
      tag = (int32_t)kTVMStrObject;
      wire = (int32_t)kTVMStr;
      break;
    case kTVMBytes:
    case kTVMBytesObject:
    case MINRPC_TYPE_SMALL_BYTES: {
      const TVMByteArray* arr = (const TVMByteArray*)value.v_handle;
      if (arr != NULL) {
        blob = (const uint8_t*)arr->data;
        blob_len = (uint64_t)arr->size;
      }
      tag = (int32_t)kTVMBytesObject;
      wire = (int32_t)kTVMBytes;
      break;
    }
    case kTVMDLTensorHandle:
      {
        pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCInvalidTypeCodeTensor);
        PYTVM_CRT_MSG_STR(msg, ": a function returned a raw DLTensor*, which TVM clients cannot receive; return its data through an argument instead");
      }
      return MINRPC_ERROR;
    default:
      {
        pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCUnknownTypeIndex);
        PYTVM_CRT_MSG_STR(msg, ": cannot return a value of type index ");
        PYTVM_CRT_MSG_I64(msg, code);
        PYTVM_CRT_MSG_STR(msg, " over RPC");
      }
      return MINRPC_ERROR;
  }
  if (blob_len > (uint64_t)MINRPC_MAX_PACKET) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": the result of ");
    PYTVM_CRT_MSG_U64(msg, blob_len);
    PYTVM_CRT_MSG_STR(msg, " bytes exceeds the ");
    PYTVM_CRT_MSG_U64(msg, MINRPC_MAX_PACKET);
    PYTVM_CRT_MSG_STR(msg, "-byte packet limit");
    return MINRPC_ERROR;
  }
  if (blob != NULL) {
    payload = blob_len;
  }
  at = put32(head, 8u, (uint32_t)MINRPC_CODE_RETURN); /* the length goes in last */
  at = put32(head, at, (with_tag != 0) ? 2u : 1u);
  if (with_tag != 0) {
    at = put32(head, at, (uint32_t)kTVMArgInt);
    at = put64(head, at, (uint64_t)(int64_t)tag);
  }
  at = put32(head, at, (uint32_t)wire);
  if (wire != (int32_t)kTVMNullptr) {
    at = put64(head, at, payload);
  }
  pytvm_minrpc_put_u64(head, (uint64_t)(at - 8u) + blob_len);
  if (pytvm_minrpc_write(s, head, at) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  return pytvm_minrpc_write(s, blob, (size_t)blob_len);
}
