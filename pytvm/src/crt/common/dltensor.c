/*! \file dltensor.c \brief Size and layout checks of DLTensors (overflow-checked). */
#include "pytvm_crt/ndarray.h"

#include "pytvm_crt/checked_math.h"

int pytvm_crt_tensor_bytes_u64(const DLTensor* tensor, uint64_t* out_nbytes) {
  uint64_t count = 1U;
  uint64_t elem_bytes = (((uint64_t)tensor->dtype.bits * (uint64_t)tensor->dtype.lanes) + 7U) >> 3;
  int32_t i;
  for (i = 0; i < tensor->ndim; i++) {
    int64_t dim = tensor->shape[i];
    if (dim < 0) {
      return kTvmErrorArgumentOutOfRange;
    }
    if (pytvm_crt_mul_u64(count, (uint64_t)dim, &count) != 0) {
      return kTvmErrorArgumentOverflow;
    }
  }
  if (pytvm_crt_mul_u64(count, elem_bytes, &count) != 0) {
    return kTvmErrorArgumentOverflow;
  }
  *out_nbytes = count;
  return kTvmErrorNoError;
}

int pytvm_crt_tensor_num_bytes(const DLTensor* tensor, size_t* out_nbytes) {
  uint64_t nbytes = 0U;
  int err;
  if ((tensor == NULL) || (out_nbytes == NULL)) {
    return kTvmErrorArgumentNull;
  }
  if ((tensor->ndim < 0) || (tensor->ndim > TVM_CRT_MAX_NDIM) || (tensor->dtype.lanes == 0U)) {
    return kTvmErrorArgumentOutOfRange;
  }
  if ((tensor->ndim > 0) && (tensor->shape == NULL)) {
    return kTvmErrorArgumentNull;
  }
  err = pytvm_crt_tensor_bytes_u64(tensor, &nbytes);
  if (err != kTvmErrorNoError) {
    return err;
  }
  if (nbytes > (uint64_t)SIZE_MAX) {
    return kTvmErrorArgumentOverflow;
  }
  *out_nbytes = (size_t)nbytes;
  return kTvmErrorNoError;
}

int pytvm_crt_tensor_is_compact(const DLTensor* tensor, int* out_compact) {
  int64_t expected = 1;
  int32_t i;
  if ((tensor == NULL) || (out_compact == NULL)) {
    return kTvmErrorArgumentNull;
  }
  if ((tensor->ndim < 0) || (tensor->ndim > TVM_CRT_MAX_NDIM)) {
    return kTvmErrorArgumentOutOfRange;
  }
  *out_compact = 1;
  if (tensor->strides == NULL) {
    return kTvmErrorNoError;
  }
  if ((tensor->ndim > 0) && (tensor->shape == NULL)) {
    return kTvmErrorArgumentNull;
  }
  /* Innermost dimension first; stops before `expected` could overflow. */
  for (i = tensor->ndim - 1; i >= 0; i--) {
    int64_t dim = tensor->shape[i];
    if (dim < 0) {
      return kTvmErrorArgumentOutOfRange;
    }
    if ((dim != 1) && (tensor->strides[i] != expected)) {
      *out_compact = 0;
      return kTvmErrorNoError;
    }
    {
      uint64_t product = 0U;
      if ((pytvm_crt_mul_u64((uint64_t)expected, (uint64_t)dim, &product) != 0) ||
          (product > (uint64_t)INT64_MAX)) {
        return kTvmErrorArgumentOverflow;
      }
      expected = (int64_t)product;
    }
  }
  return kTvmErrorNoError;
}
