/*!
 * \file minrpc_decode.c
 * \brief Decoding of packet bodies: scalars, blobs, DLTensor descriptors and packed sequences
 *        (spec section 3), each field checked against the bytes left before it is read.
 */
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/ndarray.h"

/*! \brief Start a kMinRPCCheckError text "...: <field>" for the caller to finish. */
static inline pytvm_crt_text* field_error(pytvm_minrpc_server* s, const char* field) {
  pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
  PYTVM_CRT_MSG_STR(msg, ": ");
  PYTVM_CRT_MSG_STR(msg, field);
  return msg;
}

/*! \brief The next n bytes of the body, or an error naming `field`. */
static pytvm_minrpc_step take(pytvm_minrpc_reader* r, size_t n, const uint8_t** out, const char* field) {
  if (n > r->left) {
    pytvm_crt_text* msg = field_error(r->server, field);
    PYTVM_CRT_MSG_STR(msg, " needs ");
    PYTVM_CRT_MSG_U64(msg, n);
    PYTVM_CRT_MSG_STR(msg, " bytes but the packet has ");
    PYTVM_CRT_MSG_U64(msg, r->left);
    PYTVM_CRT_MSG_STR(msg, " left");
    return MINRPC_ERROR;
  }
  *out = r->p;
  r->p += n;
  r->left -= n;
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_read_i32(pytvm_minrpc_reader* r, int32_t* out, const char* field) {
  const uint8_t* p = NULL;
  if (take(r, 4u, &p, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  *out = (int32_t)pytvm_minrpc_get_u32(p);
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_read_u64(pytvm_minrpc_reader* r, uint64_t* out, const char* field) {
  const uint8_t* p = NULL;
  if (take(r, 8u, &p, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  *out = pytvm_minrpc_get_u64(p);
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_read_blob(pytvm_minrpc_reader* r, const uint8_t** data, uint64_t* len,
                          const char* field) {
  uint64_t n = 0u;
  if (pytvm_minrpc_read_u64(r, &n, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (n > (uint64_t)r->left) {
    pytvm_crt_text* msg = field_error(r->server, field);
    PYTVM_CRT_MSG_STR(msg, " length ");
    PYTVM_CRT_MSG_U64(msg, n);
    PYTVM_CRT_MSG_STR(msg, " exceeds the ");
    PYTVM_CRT_MSG_U64(msg, r->left);
    PYTVM_CRT_MSG_STR(msg, " bytes left in the packet");
    return MINRPC_ERROR;
  }
  *len = n;
  return take(r, (size_t)n, data, field);
}

pytvm_minrpc_step pytvm_minrpc_read_end(pytvm_minrpc_reader* r, const char* what) {
  if (r->left != 0u) {
    pytvm_crt_text* msg = field_error(r->server, what);
    PYTVM_CRT_MSG_STR(msg, " has ");
    PYTVM_CRT_MSG_U64(msg, r->left);
    PYTVM_CRT_MSG_STR(msg, " unexpected trailing bytes");
    return MINRPC_ERROR;
  }
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_tensor_bytes(pytvm_minrpc_server* s, const DLTensor* t, uint64_t* nbytes,
                             const char* field) {
  *nbytes = 0u;
  if (pytvm_crt_tensor_bytes_u64(t, nbytes) != 0) { /* dimensions are non-negative when decoded */
    pytvm_crt_text* msg = field_error(s, field);
    PYTVM_CRT_MSG_STR(msg, " size overflows 64 bits");
    return MINRPC_ERROR;
  }
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_read_tensor(pytvm_minrpc_reader* r, DLTensor** out, uint64_t* nbytes,
                            const char* field) {
  const uint8_t* head = NULL;
  const uint8_t* dims = NULL;
  DLTensor* t = NULL;
  int64_t* shape = NULL;
  int32_t ndim = 0;
  int32_t i;
  uint64_t byte_offset = 0u;
  if (take(r, MINRPC_DESC_HEAD_BYTES, &head, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  ndim = (int32_t)pytvm_minrpc_get_u32(head + 16);
  if ((ndim < 0) || (ndim > MINRPC_MAX_NDIM)) {
    pytvm_crt_text* msg = field_error(r->server, field);
    PYTVM_CRT_MSG_STR(msg, " ndim ");
    PYTVM_CRT_MSG_I64(msg, ndim);
    PYTVM_CRT_MSG_STR(msg, " outside 0..");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_NDIM);
    return MINRPC_ERROR;
  }
  if (take(r, 8u * (size_t)ndim, &dims, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (pytvm_minrpc_read_u64(r, &byte_offset, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  t = (DLTensor*)pytvm_minrpc_arena_alloc(r->server, sizeof(DLTensor));
  shape = (int64_t*)pytvm_minrpc_arena_alloc(r->server, 8u * (size_t)ndim + 8u);
  if ((t == NULL) || (shape == NULL)) {
    return MINRPC_ERROR;
  }
  for (i = 0; i < ndim; ++i) {
    shape[i] = (int64_t)pytvm_minrpc_get_u64(dims + 8 * i);
    if (shape[i] < 0) {
      pytvm_crt_text* msg = field_error(r->server, field);
      PYTVM_CRT_MSG_STR(msg, " dimension ");
      PYTVM_CRT_MSG_I64(msg, i);
      PYTVM_CRT_MSG_STR(msg, " is negative (");
      PYTVM_CRT_MSG_I64(msg, shape[i]);
      PYTVM_CRT_MSG_STR(msg, ")");
      return MINRPC_ERROR;
    }
  }
  t->data = (void*)(uintptr_t)pytvm_minrpc_get_u64(head);
  t->device.device_type = (int32_t)pytvm_minrpc_get_u32(head + 8);
  t->device.device_id = (int32_t)pytvm_minrpc_get_u32(head + 12);
  t->ndim = ndim;
  t->dtype.code = head[20];
  t->dtype.bits = head[21];
  t->dtype.lanes = (uint16_t)((uint16_t)head[22] | (uint16_t)((uint16_t)head[23] << 8));
  t->shape = shape;
  t->strides = NULL;
  t->byte_offset = byte_offset;
  *out = t;
  return pytvm_minrpc_tensor_bytes(r->server, t, nbytes, field);
}

/*! \brief A NUL-terminated copy of a wire string in the arena. */
static pytvm_minrpc_step read_string(pytvm_minrpc_reader* r, TVMValue* value, const char* field) {
  const uint8_t* data = NULL;
  uint64_t len = 0u;
  char* copy = NULL;
  if (pytvm_minrpc_read_blob(r, &data, &len, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  copy = (char*)pytvm_minrpc_arena_alloc(r->server, (size_t)len + 1u);
  if (copy == NULL) {
    return MINRPC_ERROR;
  }
  (void)memcpy(copy, data, (size_t)len);
  copy[len] = '\0';
  value->v_str = copy;
  return MINRPC_OK;
}

/*! \brief Wire bytes as a TVMByteArray in the arena (the data stays in the packet). */
static pytvm_minrpc_step read_bytes(pytvm_minrpc_reader* r, TVMValue* value, const char* field) {
  const uint8_t* data = NULL;
  uint64_t len = 0u;
  TVMByteArray* arr = NULL;
  if (pytvm_minrpc_read_blob(r, &data, &len, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  arr = (TVMByteArray*)pytvm_minrpc_arena_alloc(r->server, sizeof(TVMByteArray));
  if (arr == NULL) {
    return MINRPC_ERROR;
  }
  arr->data = (const char*)data;
  arr->size = (size_t)len;
  value->v_handle = arr;
  return MINRPC_OK;
}

/*! \brief An object-encoded value (spec section 3.4): only Str and Bytes reach C. */
static pytvm_minrpc_step read_object(pytvm_minrpc_reader* r, int32_t outer, TVMValue* value, int* code,
                             const char* field) {
  int32_t inner = 0;
  if (pytvm_minrpc_read_i32(r, &inner, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (inner == (int32_t)kTVMStrObject) {
    *code = (int)kTVMStr;
    return read_string(r, value, field);
  }
  if (inner == (int32_t)kTVMBytesObject) {
    *code = (int)kTVMBytes;
    return read_bytes(r, value, field);
  }
  if (inner == MINRPC_TYPE_RPC_OBJECT_REF) {
    pytvm_crt_text* msg = pytvm_minrpc_error(r->server, kMinRPCInvalidTypeCodeObject);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, field);
    PYTVM_CRT_MSG_STR(msg, " is an object reference (type index ");
    PYTVM_CRT_MSG_I64(msg, outer);
    PYTVM_CRT_MSG_STR(msg, "); the MinRPC server has no objects");
    return MINRPC_ERROR;
  }
  {
    pytvm_crt_text* msg = pytvm_minrpc_error(r->server, kMinRPCUnknownTypeIndex);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, field);
    PYTVM_CRT_MSG_STR(msg, ": object of inner type index ");
    PYTVM_CRT_MSG_I64(msg, inner);
    PYTVM_CRT_MSG_STR(msg, " is not supported in the RPC calling convention");
  }
  return MINRPC_ERROR;
}

/*! \brief One PSEQ entry: i32 type index + payload. */
static pytvm_minrpc_step read_value(pytvm_minrpc_reader* r, TVMValue* value, int* code, const char* field) {
  int32_t tag = 0;
  uint64_t raw = 0u;
  if (pytvm_minrpc_read_i32(r, &tag, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  *code = (int)tag;
  value->v_int64 = 0;
  switch (tag) {
    case kTVMNullptr:
      value->v_handle = NULL;
      return MINRPC_OK;
    case kTVMArgInt:
    case kTVMArgBool:
    case kTVMArgFloat:
    case kTVMOpaqueHandle:
    case kTVMPackedFuncHandle:
    case kTVMModuleHandle:
    case kTVMDataType:
    case kDLDeviceTypeCode:
      /* 8 bytes on the wire, stored as the value's kind asks */
      if (pytvm_minrpc_read_u64(r, &raw, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
#if defined(__BYTE_ORDER__) && (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
      /* On a little-endian target each kind's TVMValue member (int64, double, DLDataType,
       * DLDevice, a pointer's low bytes) holds its 8 wire bytes as they are. */
      (void)memcpy(value, &raw, sizeof(raw));
#else
      if (tag == (int32_t)kTVMArgFloat) {
        (void)memcpy(&value->v_float64, &raw, sizeof(raw));
      } else if (tag == (int32_t)kTVMDataType) { /* u8 code, u8 bits, u16 lanes, padding */
        value->v_type.code = (uint8_t)raw;
        value->v_type.bits = (uint8_t)(raw >> 8);
        value->v_type.lanes = (uint16_t)(raw >> 16);
      } else if (tag == (int32_t)kDLDeviceTypeCode) { /* i32 device_type, i32 device_id */
        value->v_device.device_type = (int32_t)(uint32_t)raw;
        value->v_device.device_id = (int32_t)(uint32_t)(raw >> 32);
      } else if ((tag == (int32_t)kTVMArgInt) || (tag == (int32_t)kTVMArgBool)) {
        value->v_int64 = (int64_t)raw;
      } else {
        value->v_handle = (void*)(uintptr_t)raw;
      }
#endif
      return MINRPC_OK;
    case kTVMDLTensorHandle: {
      DLTensor* t = NULL;
      uint64_t nbytes = 0u;
      if (pytvm_minrpc_read_tensor(r, &t, &nbytes, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      value->v_handle = t;
      return MINRPC_OK;
    }
    case kTVMStr:
      return read_string(r, value, field);
    case kTVMBytes:
      return read_bytes(r, value, field);
    default:
      break;
  }
  if ((tag == MINRPC_TYPE_SMALL_STR) || (tag == MINRPC_TYPE_SMALL_BYTES) ||
      (tag >= (int32_t)kTVMObjectHandle)) {
    if (tag == (int32_t)kTVMNDArrayHandle) {
      pytvm_crt_text* msg = pytvm_minrpc_error(r->server, kMinRPCInvalidTypeCodeTensor);
      PYTVM_CRT_MSG_STR(msg, ": ");
      PYTVM_CRT_MSG_STR(msg, field);
      PYTVM_CRT_MSG_STR(msg, " is a Tensor object (type index 70); send it as a DLTensor (7)");
      return MINRPC_ERROR;
    }
    return read_object(r, tag, value, code, field);
  }
  {
    pytvm_crt_text* msg = pytvm_minrpc_error(r->server, kMinRPCUnknownTypeIndex);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, field);
    PYTVM_CRT_MSG_STR(msg, " has unknown type index ");
    PYTVM_CRT_MSG_I64(msg, tag);
  }
  return MINRPC_ERROR;
}

pytvm_minrpc_step pytvm_minrpc_read_args(pytvm_minrpc_reader* r, pytvm_minrpc_args* out, const char* what) {
  int32_t n = 0;
  int32_t i;
#if TVM_CRT_ERROR_TEXTS
  char field[48];
#else
  const char* const field = NULL;
#endif
  out->num_args = 0;
  out->values = NULL;
  out->codes = NULL;
  if (pytvm_minrpc_read_i32(r, &n, what) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  /* every value takes at least its 4-byte type index */
  if ((n < 0) || (n > MINRPC_MAX_ARGS) || ((size_t)n > (r->left / 4u))) {
    pytvm_crt_text* msg = field_error(r->server, what);
    PYTVM_CRT_MSG_STR(msg, " count ");
    PYTVM_CRT_MSG_I64(msg, n);
    PYTVM_CRT_MSG_STR(msg, " impossible (limit ");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_ARGS);
    PYTVM_CRT_MSG_STR(msg, ", ");
    PYTVM_CRT_MSG_U64(msg, r->left);
    PYTVM_CRT_MSG_STR(msg, " bytes left)");
    return MINRPC_ERROR;
  }
  out->values = (TVMValue*)pytvm_minrpc_arena_alloc(r->server, sizeof(TVMValue) * ((size_t)n + 1u));
  out->codes = (int*)pytvm_minrpc_arena_alloc(r->server, sizeof(int) * ((size_t)n + 1u));
  if ((out->values == NULL) || (out->codes == NULL)) {
    return MINRPC_ERROR;
  }
  for (i = 0; i < n; ++i) {
#if TVM_CRT_ERROR_TEXTS
    {
      pytvm_crt_text name;
      pytvm_crt_text_init(&name, field, sizeof(field));
      pytvm_crt_text_str(&name, what);
      pytvm_crt_text_str(&name, "[");
      pytvm_crt_text_i64(&name, (int64_t)i);
      pytvm_crt_text_str(&name, "]");
    }
#endif
    if (read_value(r, &out->values[i], &out->codes[i], field) != MINRPC_OK) {
      return MINRPC_ERROR;
    }
  }
  out->num_args = n;
  return MINRPC_OK;
}
