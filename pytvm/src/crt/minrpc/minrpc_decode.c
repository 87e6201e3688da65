/*!
 * \file minrpc_decode.c
 * \brief Decoding of packet bodies: scalars, blobs, DLTensor descriptors and packed sequences
 *        (spec section 3), each field checked against the bytes left before it is read.
 */
#include <stdio.h>
#include <string.h>

#include "minrpc_internal.h"

/*! \brief The next n bytes of the body, or an error naming `field`. */
static MinRPCStep Take(MinRPCReader* r, size_t n, const uint8_t** out, const char* field) {
  if (n > r->left) {
    return MinRPCFail(r->server, kMinRPCCheckError,
                      "%s needs %lu bytes but the packet has %lu left", field, (unsigned long)n,
                      (unsigned long)r->left);
  }
  *out = r->p;
  r->p += n;
  r->left -= n;
  return MINRPC_OK;
}

MinRPCStep MinRPCReadI32(MinRPCReader* r, int32_t* out, const char* field) {
  const uint8_t* p = NULL;
  if (Take(r, 4u, &p, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  *out = (int32_t)MinRPCGetU32(p);
  return MINRPC_OK;
}

MinRPCStep MinRPCReadU64(MinRPCReader* r, uint64_t* out, const char* field) {
  const uint8_t* p = NULL;
  if (Take(r, 8u, &p, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  *out = MinRPCGetU64(p);
  return MINRPC_OK;
}

MinRPCStep MinRPCReadBlob(MinRPCReader* r, const uint8_t** data, uint64_t* len,
                          const char* field) {
  uint64_t n = 0u;
  if (MinRPCReadU64(r, &n, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (n > (uint64_t)r->left) {
    return MinRPCFail(r->server, kMinRPCCheckError,
                      "%s length %llu exceeds the %lu bytes left in the packet", field,
                      (unsigned long long)n, (unsigned long)r->left);
  }
  *len = n;
  return Take(r, (size_t)n, data, field);
}

MinRPCStep MinRPCReadEnd(MinRPCReader* r, const char* what) {
  if (r->left != 0u) {
    return MinRPCFail(r->server, kMinRPCCheckError, "%s has %lu unexpected trailing bytes", what,
                      (unsigned long)r->left);
  }
  return MINRPC_OK;
}

MinRPCStep MinRPCTensorBytes(MinRPCServer* s, const DLTensor* t, uint64_t* nbytes,
                             const char* field) {
  uint64_t count = 1u;
  uint64_t elem_bits = (uint64_t)t->dtype.bits * (uint64_t)t->dtype.lanes;
  uint64_t elem = (elem_bits + 7u) / 8u;
  int32_t i;
  *nbytes = 0u;
  for (i = 0; i < t->ndim; ++i) {
    uint64_t d = (uint64_t)t->shape[i];
    if ((d != 0u) && (count > (UINT64_MAX / d))) {
      return MinRPCFail(s, kMinRPCCheckError, "%s shape overflows 64 bits", field);
    }
    count *= d;
  }
  if ((elem != 0u) && (count > (UINT64_MAX / elem))) {
    return MinRPCFail(s, kMinRPCCheckError, "%s size overflows 64 bits", field);
  }
  *nbytes = count * elem;
  return MINRPC_OK;
}

MinRPCStep MinRPCReadTensor(MinRPCReader* r, DLTensor** out, uint64_t* nbytes,
                            const char* field) {
  const uint8_t* head = NULL;
  const uint8_t* dims = NULL;
  DLTensor* t = NULL;
  int64_t* shape = NULL;
  int32_t ndim = 0;
  int32_t i;
  uint64_t byte_offset = 0u;
  if (Take(r, MINRPC_DESC_HEAD_BYTES, &head, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  ndim = (int32_t)MinRPCGetU32(head + 16);
  if ((ndim < 0) || (ndim > MINRPC_MAX_NDIM)) {
    return MinRPCFail(r->server, kMinRPCCheckError, "%s ndim %ld outside 0..%d", field,
                      (long)ndim, (int)MINRPC_MAX_NDIM);
  }
  if (Take(r, 8u * (size_t)ndim, &dims, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (MinRPCReadU64(r, &byte_offset, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  t = (DLTensor*)MinRPCArenaAlloc(r->server, sizeof(DLTensor));
  shape = (int64_t*)MinRPCArenaAlloc(r->server, 8u * (size_t)ndim + 8u);
  if ((t == NULL) || (shape == NULL)) {
    return MINRPC_ERROR;
  }
  for (i = 0; i < ndim; ++i) {
    shape[i] = (int64_t)MinRPCGetU64(dims + 8 * i);
    if (shape[i] < 0) {
      return MinRPCFail(r->server, kMinRPCCheckError, "%s dimension %ld is negative (%lld)",
                        field, (long)i, (long long)shape[i]);
    }
  }
  t->data = (void*)(uintptr_t)MinRPCGetU64(head);
  t->device.device_type = (int32_t)MinRPCGetU32(head + 8);
  t->device.device_id = (int32_t)MinRPCGetU32(head + 12);
  t->ndim = ndim;
  t->dtype.code = head[20];
  t->dtype.bits = head[21];
  t->dtype.lanes = (uint16_t)((uint16_t)head[22] | (uint16_t)((uint16_t)head[23] << 8));
  t->shape = shape;
  t->strides = NULL;
  t->byte_offset = byte_offset;
  *out = t;
  return MinRPCTensorBytes(r->server, t, nbytes, field);
}

/*! \brief A NUL-terminated copy of a wire string in the arena. */
static MinRPCStep ReadString(MinRPCReader* r, TVMValue* value, const char* field) {
  const uint8_t* data = NULL;
  uint64_t len = 0u;
  char* copy = NULL;
  if (MinRPCReadBlob(r, &data, &len, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  copy = (char*)MinRPCArenaAlloc(r->server, (size_t)len + 1u);
  if (copy == NULL) {
    return MINRPC_ERROR;
  }
  (void)memcpy(copy, data, (size_t)len);
  copy[len] = '\0';
  value->v_str = copy;
  return MINRPC_OK;
}

/*! \brief Wire bytes as a TVMByteArray in the arena (the data stays in the packet). */
static MinRPCStep ReadBytes(MinRPCReader* r, TVMValue* value, const char* field) {
  const uint8_t* data = NULL;
  uint64_t len = 0u;
  TVMByteArray* arr = NULL;
  if (MinRPCReadBlob(r, &data, &len, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  arr = (TVMByteArray*)MinRPCArenaAlloc(r->server, sizeof(TVMByteArray));
  if (arr == NULL) {
    return MINRPC_ERROR;
  }
  arr->data = (const char*)data;
  arr->size = (size_t)len;
  value->v_handle = arr;
  return MINRPC_OK;
}

/*! \brief An object-encoded value (spec section 3.4): only Str and Bytes reach C. */
static MinRPCStep ReadObject(MinRPCReader* r, int32_t outer, TVMValue* value, int* code,
                             const char* field) {
  int32_t inner = 0;
  if (MinRPCReadI32(r, &inner, field) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (inner == (int32_t)kTVMStrObject) {
    *code = (int)kTVMStr;
    return ReadString(r, value, field);
  }
  if (inner == (int32_t)kTVMBytesObject) {
    *code = (int)kTVMBytes;
    return ReadBytes(r, value, field);
  }
  if (inner == MINRPC_TYPE_RPC_OBJECT_REF) {
    return MinRPCFail(r->server, kMinRPCInvalidTypeCodeObject,
                      "%s is an object reference (type index %ld); the MinRPC server has no "
                      "objects",
                      field, (long)outer);
  }
  return MinRPCFail(r->server, kMinRPCUnknownTypeIndex,
                    "%s: object of inner type index %ld is not supported in the RPC calling "
                    "convention",
                    field, (long)inner);
}

/*! \brief One PSEQ entry: i32 type index + payload. */
static MinRPCStep ReadValue(MinRPCReader* r, TVMValue* value, int* code, const char* field) {
  int32_t tag = 0;
  uint64_t raw = 0u;
  const uint8_t* p = NULL;
  if (MinRPCReadI32(r, &tag, field) != MINRPC_OK) {
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
      if (MinRPCReadU64(r, &raw, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      value->v_int64 = (int64_t)raw;
      return MINRPC_OK;
    case kTVMArgFloat:
      if (MinRPCReadU64(r, &raw, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      (void)memcpy(&value->v_float64, &raw, sizeof(raw));
      return MINRPC_OK;
    case kTVMOpaqueHandle:
    case kTVMPackedFuncHandle:
    case kTVMModuleHandle:
      if (MinRPCReadU64(r, &raw, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      value->v_handle = (void*)(uintptr_t)raw;
      return MINRPC_OK;
    case kTVMDataType:
      if (Take(r, 8u, &p, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      value->v_type.code = p[0];
      value->v_type.bits = p[1];
      value->v_type.lanes = (uint16_t)((uint16_t)p[2] | (uint16_t)((uint16_t)p[3] << 8));
      return MINRPC_OK;
    case kDLDeviceTypeCode:
      if (Take(r, 8u, &p, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      value->v_device.device_type = (int32_t)MinRPCGetU32(p);
      value->v_device.device_id = (int32_t)MinRPCGetU32(p + 4);
      return MINRPC_OK;
    case kTVMDLTensorHandle: {
      DLTensor* t = NULL;
      uint64_t nbytes = 0u;
      if (MinRPCReadTensor(r, &t, &nbytes, field) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      value->v_handle = t;
      return MINRPC_OK;
    }
    case kTVMStr:
      return ReadString(r, value, field);
    case kTVMBytes:
      return ReadBytes(r, value, field);
    default:
      break;
  }
  if ((tag == MINRPC_TYPE_SMALL_STR) || (tag == MINRPC_TYPE_SMALL_BYTES) ||
      (tag >= (int32_t)kTVMObjectHandle)) {
    if (tag == (int32_t)kTVMNDArrayHandle) {
      return MinRPCFail(r->server, kMinRPCInvalidTypeCodeTensor,
                        "%s is a Tensor object (type index 70); send it as a DLTensor (7)",
                        field);
    }
    return ReadObject(r, tag, value, code, field);
  }
  return MinRPCFail(r->server, kMinRPCUnknownTypeIndex, "%s has unknown type index %ld", field,
                    (long)tag);
}

MinRPCStep MinRPCReadArgs(MinRPCReader* r, MinRPCArgs* out, const char* what) {
  int32_t n = 0;
  int32_t i;
  char field[48];
  out->num_args = 0;
  out->values = NULL;
  out->codes = NULL;
  if (MinRPCReadI32(r, &n, what) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  /* every value takes at least its 4-byte type index */
  if ((n < 0) || (n > MINRPC_MAX_ARGS) || ((size_t)n > (r->left / 4u))) {
    return MinRPCFail(r->server, kMinRPCCheckError,
                      "%s count %ld impossible (limit %d, %lu bytes left)", what, (long)n,
                      (int)MINRPC_MAX_ARGS, (unsigned long)r->left);
  }
  out->values = (TVMValue*)MinRPCArenaAlloc(r->server, sizeof(TVMValue) * ((size_t)n + 1u));
  out->codes = (int*)MinRPCArenaAlloc(r->server, sizeof(int) * ((size_t)n + 1u));
  if ((out->values == NULL) || (out->codes == NULL)) {
    return MINRPC_ERROR;
  }
  for (i = 0; i < n; ++i) {
    (void)snprintf(field, sizeof(field), "%s[%ld]", what, (long)i);
    if (ReadValue(r, &out->values[i], &out->codes[i], field) != MINRPC_OK) {
      return MINRPC_ERROR;
    }
  }
  out->num_args = n;
  return MINRPC_OK;
}
