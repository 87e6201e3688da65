/*! \file test_ndarray.c \brief TVMNDArray create/release and DLTensor size and layout checks. */
#include "crt_test.h"

static const DLDevice kCpu = {kDLCPU, 0};
static const DLDataType kFloat32 = {kDLFloat, 32, 1};

static void test_empty_allocates_an_aligned_compact_array(void) {
  int64_t shape[2] = {2, 3};
  TVMNDArray arr;
  size_t nbytes = 0U;
  pytvm_crt_memory_stats before;
  pytvm_crt_memory_stats after;
  (void)pytvm_crt_memory_get_stats(&before);
  CRT_EXPECT_EQ(TVMNDArray_Empty(2, shape, kFloat32, kCpu, &arr), kTvmErrorNoError);
  shape[0] = 99; /* the array keeps its own copy of the shape */
  CRT_EXPECT_TRUE(arr.dl_tensor.data != NULL);
  CRT_EXPECT_EQ((uintptr_t)arr.dl_tensor.data % TVM_CRT_NDARRAY_ALIGNMENT, 0);
  CRT_EXPECT_EQ(arr.dl_tensor.ndim, 2);
  CRT_EXPECT_PTR_EQ(arr.dl_tensor.shape, arr.shape);
  CRT_EXPECT_EQ(arr.dl_tensor.shape[0], 2);
  CRT_EXPECT_EQ(arr.dl_tensor.shape[1], 3);
  CRT_EXPECT_PTR_EQ(arr.dl_tensor.strides, NULL);
  CRT_EXPECT_EQ(arr.dl_tensor.byte_offset, 0);
  CRT_EXPECT_EQ(arr.dl_tensor.dtype.bits, 32);
  CRT_EXPECT_EQ(arr.dl_tensor.device.device_type, kDLCPU);
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(&arr.dl_tensor, &nbytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(nbytes, 24);
  (void)memset(arr.dl_tensor.data, 0x3F, nbytes);
  (void)pytvm_crt_memory_get_stats(&after);
  CRT_EXPECT_EQ(after.free_pages, before.free_pages - 1U);
  CRT_EXPECT_EQ(TVMNDArray_Release(&arr), kTvmErrorNoError);
  CRT_EXPECT_PTR_EQ(arr.dl_tensor.data, NULL);
  (void)pytvm_crt_memory_get_stats(&after);
  CRT_EXPECT_EQ(after.free_pages, before.free_pages);
  CRT_EXPECT_EQ(TVMNDArray_Release(&arr), kTvmErrorPlatformBadFree);
}

static void test_scalars_and_empty_arrays(void) {
  int64_t zero[1] = {0};
  TVMNDArray scalar;
  TVMNDArray empty;
  size_t nbytes = 1U;
  CRT_EXPECT_EQ(TVMNDArray_Empty(0, NULL, kFloat32, kCpu, &scalar), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(&scalar.dl_tensor, &nbytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(nbytes, 4);
  CRT_EXPECT_EQ(TVMNDArray_Empty(1, zero, kFloat32, kCpu, &empty), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(&empty.dl_tensor, &nbytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(nbytes, 0);
  CRT_EXPECT_TRUE(empty.dl_tensor.data != NULL);
  CRT_EXPECT_EQ(TVMNDArray_Release(&empty), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMNDArray_Release(&scalar), kTvmErrorNoError);
}

static void test_bad_shapes_and_dtypes_are_rejected(void) {
  int64_t shape[TVM_CRT_MAX_NDIM + 1];
  int64_t huge[2] = {INT64_MAX, 4};
  int64_t negative[2] = {2, -1};
  DLDataType no_lanes = {kDLFloat, 32, 0};
  TVMNDArray arr;
  int i;
  for (i = 0; i < TVM_CRT_MAX_NDIM + 1; i++) {
    shape[i] = 1;
  }
  CRT_EXPECT_EQ(TVMNDArray_Empty(TVM_CRT_MAX_NDIM + 1, shape, kFloat32, kCpu, &arr),
                kTvmErrorArgumentOutOfRange);
  CRT_EXPECT_EQ(TVMNDArray_Empty(TVM_CRT_MAX_NDIM, shape, kFloat32, kCpu, &arr), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMNDArray_Release(&arr), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMNDArray_Empty(-1, shape, kFloat32, kCpu, &arr), kTvmErrorArgumentOutOfRange);
  CRT_EXPECT_EQ(TVMNDArray_Empty(2, negative, kFloat32, kCpu, &arr), kTvmErrorArgumentOutOfRange);
  CRT_EXPECT_EQ(TVMNDArray_Empty(2, huge, kFloat32, kCpu, &arr), kTvmErrorArgumentOverflow);
  CRT_EXPECT_PTR_EQ(arr.dl_tensor.data, NULL);
  CRT_EXPECT_EQ(TVMNDArray_Empty(2, NULL, kFloat32, kCpu, &arr), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMNDArray_Empty(1, shape, no_lanes, kCpu, &arr), kTvmErrorArgumentOutOfRange);
  CRT_EXPECT_EQ(TVMNDArray_Empty(1, shape, kFloat32, kCpu, NULL), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMNDArray_Release(NULL), kTvmErrorArgumentNull);
}

static void test_allocation_failures_are_reported(void) {
  int64_t too_big[1];
  DLDevice hexagon = {kDLHexagon, 0};
  TVMNDArray arr;
  too_big[0] = (int64_t)TVM_CRT_MEMORY_POOL_BYTES;
  CRT_EXPECT_EQ(TVMNDArray_Empty(1, too_big, kFloat32, kCpu, &arr), kTvmErrorPlatformNoMemory);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "MemoryError: ");
  CRT_EXPECT_PTR_EQ(arr.dl_tensor.data, NULL);
  too_big[0] = 4;
  CRT_EXPECT_EQ(TVMNDArray_Empty(1, too_big, kFloat32, hexagon, &arr), kTvmErrorPlatformNoMemory);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "no device API registered for device type 16");
}

static void test_num_bytes_rounds_sub_byte_and_vector_types(void) {
  int64_t shape[1] = {10};
  DLTensor t;
  size_t nbytes = 0U;
  (void)memset(&t, 0, sizeof(t));
  t.ndim = 1;
  t.shape = shape;
  t.dtype.code = kDLBool;
  t.dtype.bits = 1;
  t.dtype.lanes = 1;
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(&t, &nbytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(nbytes, 10);
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 4;
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(&t, &nbytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(nbytes, 160);
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(NULL, &nbytes), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(pytvm_crt_tensor_num_bytes(&t, NULL), kTvmErrorArgumentNull);
}

static void test_compactness(void) {
  int64_t shape[3] = {2, 1, 3};
  int64_t compact[3] = {3, 77, 1}; /* the size-1 dimension's stride does not matter */
  int64_t transposed[3] = {1, 3, 2};
  DLTensor t;
  int is_compact = -1;
  (void)memset(&t, 0, sizeof(t));
  t.ndim = 3;
  t.shape = shape;
  CRT_EXPECT_EQ(pytvm_crt_tensor_is_compact(&t, &is_compact), kTvmErrorNoError);
  CRT_EXPECT_EQ(is_compact, 1);
  t.strides = compact;
  CRT_EXPECT_EQ(pytvm_crt_tensor_is_compact(&t, &is_compact), kTvmErrorNoError);
  CRT_EXPECT_EQ(is_compact, 1);
  t.strides = transposed;
  CRT_EXPECT_EQ(pytvm_crt_tensor_is_compact(&t, &is_compact), kTvmErrorNoError);
  CRT_EXPECT_EQ(is_compact, 0);
  CRT_EXPECT_EQ(pytvm_crt_tensor_is_compact(NULL, &is_compact), kTvmErrorArgumentNull);
}

void crt_suite_ndarray(void) {
  CRT_RUN_TEST(test_empty_allocates_an_aligned_compact_array);
  CRT_RUN_TEST(test_scalars_and_empty_arrays);
  CRT_RUN_TEST(test_bad_shapes_and_dtypes_are_rejected);
  CRT_RUN_TEST(test_allocation_failures_are_reported);
  CRT_RUN_TEST(test_num_bytes_rounds_sub_byte_and_vector_types);
  CRT_RUN_TEST(test_compactness);
}
