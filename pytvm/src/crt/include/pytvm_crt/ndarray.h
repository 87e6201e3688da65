/*!
 * \file pytvm_crt/ndarray.h
 * \brief NDArrays: a DLTensor whose shape lives inside the struct and whose data comes from the
 *        device API of its device (the page allocator for kDLCPU), plus DLTensor size checks.
 */
#ifndef PYTVM_CRT_NDARRAY_H_
#define PYTVM_CRT_NDARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Alignment of NDArray data (TVM's kAllocAlignment). */
#define TVM_CRT_NDARRAY_ALIGNMENT 64U

/*!
 * \brief A tensor owning its data. dl_tensor.shape points at `shape` below, so a TVMNDArray
 *        must not be copied or moved while in use (pass it by pointer).
 */
typedef struct TVMNDArray {
  DLTensor dl_tensor;
  int64_t shape[TVM_CRT_MAX_NDIM];
} TVMNDArray;

/*!
 * \brief Bytes spanned by a compact tensor: product(shape) * ceil(bits * lanes / 8).
 * \return kTvmErrorNoError; kTvmErrorArgumentOutOfRange for ndim outside [0, MAX_NDIM], a
 *         negative dimension, or zero lanes; kTvmErrorArgumentOverflow when the size does not fit
 *         size_t; kTvmErrorArgumentNull when a pointer (shape with ndim > 0) is NULL.
 */
int pytvm_crt_tensor_num_bytes(const DLTensor* tensor, size_t* out_nbytes);

/*!
 * \brief product(shape) * ceil(bits * lanes / 8) in 64 bits, for a tensor whose ndim and shape
 *        the caller has checked (pytvm_crt_tensor_num_bytes checks them, and fits size_t).
 * \return kTvmErrorNoError; kTvmErrorArgumentOutOfRange for a negative dimension;
 *         kTvmErrorArgumentOverflow when a partial product exceeds 64 bits.
 */
int pytvm_crt_tensor_bytes_u64(const DLTensor* tensor, uint64_t* out_nbytes);

/*!
 * \brief Whether a tensor is compact row-major (strides NULL, or equal to the compact strides;
 *        strides of size-1 dimensions are ignored). Writes 1 or 0 to *out_compact.
 */
int pytvm_crt_tensor_is_compact(const DLTensor* tensor, int* out_compact);

/*!
 * \brief Make an uninitialised array of the given shape, dtype and device.
 * \return kTvmErrorNoError; the pytvm_crt_tensor_num_bytes errors; kTvmErrorPlatformNoMemory (or
 *         the device API's failure, reported as kTvmErrorPlatformNoMemory) when allocation fails.
 *         On error out->dl_tensor.data is NULL.
 */
int TVMNDArray_Empty(int32_t ndim, const int64_t* shape, DLDataType dtype, DLDevice dev,
                     TVMNDArray* out);

/*!
 * \brief Free the data of an array made by TVMNDArray_Empty (data is NULL afterwards).
 * \return kTvmErrorNoError; kTvmErrorPlatformBadFree when already released;
 *         kTvmErrorArgumentNull.
 */
int TVMNDArray_Release(TVMNDArray* arr);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_NDARRAY_H_ */
