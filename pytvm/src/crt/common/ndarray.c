/*! \file ndarray.c \brief TVMNDArray create and release through the device API table. */
#include <string.h>

#include "pytvm_crt/crt.h"

int TVMNDArray_Empty(int32_t ndim, const int64_t* shape, DLDataType dtype, DLDevice dev,
                     TVMNDArray* out) {
  size_t nbytes = 0U;
  int32_t i;
  int err;
  void* data = NULL;
  if (out == NULL) {
    return kTvmErrorArgumentNull;
  }
  (void)memset(out, 0, sizeof(*out));
  if ((ndim < 0) || (ndim > TVM_CRT_MAX_NDIM)) {
    return kTvmErrorArgumentOutOfRange;
  }
  if ((ndim > 0) && (shape == NULL)) {
    return kTvmErrorArgumentNull;
  }
  for (i = 0; i < ndim; i++) {
    out->shape[i] = shape[i];
  }
  out->dl_tensor.ndim = ndim;
  out->dl_tensor.shape = out->shape;
  out->dl_tensor.strides = NULL;
  out->dl_tensor.byte_offset = 0U;
  out->dl_tensor.dtype = dtype;
  out->dl_tensor.device = dev;
  err = pytvm_crt_tensor_num_bytes(&out->dl_tensor, &nbytes);
  if (err != (int)kTvmErrorNoError) {
    return err;
  }
  if (TVMDeviceAllocDataSpace(dev, nbytes, (size_t)TVM_CRT_NDARRAY_ALIGNMENT, dtype, &data) != 0) {
    out->dl_tensor.data = NULL;
    return kTvmErrorPlatformNoMemory;
  }
  out->dl_tensor.data = data;
  return kTvmErrorNoError;
}

int TVMNDArray_Release(TVMNDArray* arr) {
  if (arr == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (arr->dl_tensor.data == NULL) {
    return kTvmErrorPlatformBadFree;
  }
  if (TVMDeviceFreeDataSpace(arr->dl_tensor.device, arr->dl_tensor.data) != 0) {
    return kTvmErrorPlatformBadFree;
  }
  arr->dl_tensor.data = NULL;
  return kTvmErrorNoError;
}
