/*!
 * \file aot_tensor.c
 * \brief The AOT executor's tensors: finding one by index or name, describing it as
 *        "name|dtype|d0,d1,...", and checked copies between its static buffer and a client's
 *        DLTensor.
 */
#include <string.h>

#include "aot_executor_internal.h"
#include "pytvm_crt/crt.h"

/*! \brief Bytes of the text pytvm_aot_tensor_info returns (NUL included; longer is cut). */
#define TENSOR_INFO_BYTES 192U

int32_t pytvm_aot_find_tensor(const pytvm_aot_tensor* tensors, int32_t count, const char* name) {
  int32_t i;
  for (i = 0; i < count; ++i) {
    if (strcmp(tensors[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

int pytvm_aot_tensor_index(const pytvm_aot_tensor* tensors, int32_t count, const TVMValue* arg,
                           int code, const char* where, int32_t* out_index) {
  if (code == (int)kTVMStr) {
    *out_index = pytvm_aot_find_tensor(tensors, count, arg->v_str);
    if (*out_index < 0) {
      pytvm_crt_text* msg = pytvm_crt_error_begin("KeyError");
      PYTVM_CRT_MSG_STR(msg, ": tvm.aot_executor ");
      PYTVM_CRT_MSG_STR(msg, where);
      PYTVM_CRT_MSG_STR(msg, ": the model has no tensor named '");
      PYTVM_CRT_MSG_STRN(msg, arg->v_str, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
      PYTVM_CRT_MSG_STR(msg, "'");
      return -1;
    }
    return 0;
  }
  if ((arg->v_int64 < 0) || (arg->v_int64 >= (int64_t)count)) {
    pytvm_crt_text* msg = pytvm_crt_error_begin("IndexError");
    PYTVM_CRT_MSG_STR(msg, ": tvm.aot_executor ");
    PYTVM_CRT_MSG_STR(msg, where);
    PYTVM_CRT_MSG_STR(msg, ": index ");
    PYTVM_CRT_MSG_I64(msg, arg->v_int64);
    PYTVM_CRT_MSG_STR(msg, " is out of range; the model has ");
    PYTVM_CRT_MSG_I64(msg, count);
    return -1;
  }
  *out_index = (int32_t)arg->v_int64;
  return 0;
}

static void append_dtype(pytvm_crt_text* t, DLDataType dtype) {
  if (((dtype.code == (uint8_t)kDLUInt) && (dtype.bits == 1U)) ||
      ((dtype.code == (uint8_t)kDLBool) && (dtype.bits == 8U))) {
    pytvm_crt_text_str(t, "bool");
  } else {
    switch (dtype.code) {
      case kDLInt:
        pytvm_crt_text_str(t, "int");
        break;
      case kDLUInt:
        pytvm_crt_text_str(t, "uint");
        break;
      case kDLFloat:
        pytvm_crt_text_str(t, "float");
        break;
      case kDLBfloat:
        pytvm_crt_text_str(t, "bfloat");
        break;
      default:
        pytvm_crt_text_str(t, "custom");
        pytvm_crt_text_u64(t, dtype.code);
        pytvm_crt_text_str(t, "_");
        break;
    }
    pytvm_crt_text_u64(t, dtype.bits);
  }
  if (dtype.lanes != 1U) {
    pytvm_crt_text_str(t, "x");
    pytvm_crt_text_u64(t, dtype.lanes);
  }
}

static void append_shape(pytvm_crt_text* t, int32_t ndim, const int64_t* shape) {
  int32_t d;
  for (d = 0; d < ndim; ++d) {
    if (d > 0) {
      pytvm_crt_text_str(t, ",");
    }
    pytvm_crt_text_i64(t, shape[d]);
  }
}

const char* pytvm_aot_tensor_info(const pytvm_aot_tensor* tensor) {
  static char buffer[TENSOR_INFO_BYTES];
  pytvm_crt_text t;
  pytvm_crt_text_init(&t, buffer, sizeof(buffer));
  pytvm_crt_text_str(&t, tensor->name);
  pytvm_crt_text_str(&t, "|");
  append_dtype(&t, tensor->dtype);
  pytvm_crt_text_str(&t, "|");
  append_shape(&t, tensor->ndim, tensor->shape);
  return buffer;
}

static int same_dtype(DLDataType a, DLDataType b) {
  return (a.code == b.code) && (a.bits == b.bits) && (a.lanes == b.lanes);
}

static int same_shape(const pytvm_aot_tensor* tensor, const DLTensor* given) {
  int32_t d;
  if (given->ndim != tensor->ndim) {
    return 0;
  }
  for (d = 0; d < tensor->ndim; ++d) {
    if (given->shape[d] != tensor->shape[d]) {
      return 0;
    }
  }
  return 1;
}

/* "<kind>: tvm.aot_executor <where>: tensor '<name>' ..." */
static pytvm_crt_text* tensor_error(const char* kind, const char* where,
                                    const pytvm_aot_tensor* tensor) {
  pytvm_crt_text* msg = pytvm_crt_error_begin(kind);
  PYTVM_CRT_MSG_STR(msg, ": tvm.aot_executor ");
  PYTVM_CRT_MSG_STR(msg, where);
  PYTVM_CRT_MSG_STR(msg, ": tensor '");
  PYTVM_CRT_MSG_STR(msg, tensor->name);
  PYTVM_CRT_MSG_STR(msg, "' ");
  return msg;
}

static int check_given(const pytvm_aot_tensor* tensor, const DLTensor* given, const char* where,
                       size_t* out_nbytes) {
  int compact = 0;
  if ((given == NULL) || (given->data == NULL) || ((given->ndim > 0) && (given->shape == NULL))) {
    pytvm_crt_text* msg = tensor_error("ValueError", where, tensor);
    PYTVM_CRT_MSG_STR(msg, "was given an empty array");
    return -1;
  }
  if (given->device.device_type != (int32_t)kDLCPU) {
    pytvm_crt_text* msg = tensor_error("ValueError", where, tensor);
    PYTVM_CRT_MSG_STR(msg, "is on the CPU; the array given is on device type ");
    PYTVM_CRT_MSG_I64(msg, given->device.device_type);
    return -1;
  }
  if (same_dtype(given->dtype, tensor->dtype) == 0) {
    pytvm_crt_text* msg = tensor_error("TypeError", where, tensor);
    PYTVM_CRT_MSG_STR(msg, "has dtype ");
#if TVM_CRT_ERROR_TEXTS
    append_dtype(msg, tensor->dtype);
    pytvm_crt_text_str(msg, ", the array given ");
    append_dtype(msg, given->dtype);
#endif
    return -1;
  }
  if (same_shape(tensor, given) == 0) {
    pytvm_crt_text* msg = tensor_error("ValueError", where, tensor);
    PYTVM_CRT_MSG_STR(msg, "has shape [");
#if TVM_CRT_ERROR_TEXTS
    append_shape(msg, tensor->ndim, tensor->shape);
    pytvm_crt_text_str(msg, "], the array given [");
    append_shape(msg, (given->ndim <= TVM_CRT_MAX_NDIM) ? given->ndim : 0, given->shape);
    pytvm_crt_text_str(msg, "]");
#endif
    return -1;
  }
  if ((pytvm_crt_tensor_is_compact(given, &compact) != 0) || (compact == 0) ||
      (pytvm_crt_tensor_num_bytes(given, out_nbytes) != 0)) {
    pytvm_crt_text* msg = tensor_error("ValueError", where, tensor);
    PYTVM_CRT_MSG_STR(msg, "needs a compact (row-major, unstrided) array");
    return -1;
  }
  return 0;
}

int pytvm_aot_copy(const pytvm_aot_tensor* tensor, DLTensor* given, int to_model,
                   const char* where) {
  size_t nbytes = 0U;
  uint8_t* data;
  if (check_given(tensor, given, where, &nbytes) != 0) {
    return -1;
  }
  data = (uint8_t*)given->data + (size_t)given->byte_offset;
  if (to_model != 0) {
    (void)memcpy(tensor->data, data, nbytes);
  } else {
    (void)memcpy(data, tensor->data, nbytes);
  }
  return 0;
}
