/*!
 * \file test_device_api.c
 * \brief Device API table and the TVM device calls: dispatch, copy direction, size and layout
 *        checks, attributes, registration limits.
 */
#include "crt_test.h"

/* A fake accelerator with its own 4-block pool; counts every call. */
#define kFakeBlocks 4
#define kFakeBlockBytes 256
static uint8_t g_fake_pool[kFakeBlocks][kFakeBlockBytes];
static int g_fake_used[kFakeBlocks];
static int g_fake_allocs, g_fake_frees, g_fake_copies, g_fake_syncs, g_fake_attrs;
static size_t g_fake_last_alignment;
static int g_fake_fail_alloc;

static void fake_reset(void) {
  (void)memset(g_fake_used, 0, sizeof(g_fake_used));
  g_fake_allocs = g_fake_frees = g_fake_copies = g_fake_syncs = g_fake_attrs = 0;
  g_fake_last_alignment = 0U;
  g_fake_fail_alloc = 0;
}

static int fake_alloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out) {
  int i;
  (void)dev;
  (void)hint;
  g_fake_allocs++;
  g_fake_last_alignment = alignment;
  if ((g_fake_fail_alloc != 0) || (nbytes > kFakeBlockBytes)) {
    TVMAPISetLastError("MemoryError: fake device full");
    return -1;
  }
  for (i = 0; i < kFakeBlocks; i++) {
    if (g_fake_used[i] == 0) {
      g_fake_used[i] = 1;
      *out = g_fake_pool[i];
      return 0;
    }
  }
  return -1;
}

static int fake_free(DLDevice dev, void* ptr) {
  int i;
  (void)dev;
  g_fake_frees++;
  for (i = 0; i < kFakeBlocks; i++) {
    if ((ptr == (void*)g_fake_pool[i]) && (g_fake_used[i] != 0)) {
      g_fake_used[i] = 0;
      return 0;
    }
  }
  return -1;
}

static int fake_copy(const DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  size_t nbytes = 0U;
  (void)stream;
  g_fake_copies++;
  if (pytvm_crt_tensor_num_bytes(from, &nbytes) != 0) {
    return -1;
  }
  (void)memcpy((uint8_t*)to->data + to->byte_offset, (const uint8_t*)from->data + from->byte_offset,
               nbytes);
  return 0;
}

static int fake_sync(DLDevice dev, TVMStreamHandle stream) {
  (void)dev;
  (void)stream;
  g_fake_syncs++;
  return 0;
}

static int fake_get_attr(DLDevice dev, int kind, TVMValue* out, int* out_code) {
  (void)dev;
  g_fake_attrs++;
  out->v_int64 = 1000 + kind;
  *out_code = kTVMArgInt;
  return 0;
}

static const pytvm_crt_device_api kFakeApi = {fake_alloc, fake_free, fake_copy, fake_sync, fake_get_attr};
static const DLDevice kCpu = {kDLCPU, 0};
static const DLDevice kFake = {kDLHexagon, 0};
static const DLDataType kFloat32 = {kDLFloat, 32, 1};

static DLTensor tensor_1d(void* data, DLDevice dev, int64_t* shape) {
  DLTensor t;
  (void)memset(&t, 0, sizeof(t));
  t.data = data;
  t.device = dev;
  t.ndim = 1;
  t.dtype = kFloat32;
  t.shape = shape;
  return t;
}

static int64_t exists(DLDevice dev) {
  TVMValue v;
  int code = -1;
  v.v_int64 = -1;
  if ((pytvm_crt_device_get_attr(dev, TVM_CRT_DEVICE_ATTR_EXIST, &v, &code) != 0) || (code != kTVMArgInt)) {
    return -1;
  }
  return v.v_int64;
}

static void test_exist_follows_registration(void) {
  CRT_EXPECT_EQ(exists(kCpu), 1);
  CRT_EXPECT_EQ(exists(kFake), 0);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(exists(kFake), 1);
  CRT_EXPECT_TRUE(pytvm_crt_get_device_api(kDLHexagon) == &kFakeApi);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, NULL), kTvmErrorNoError);
  CRT_EXPECT_EQ(exists(kFake), 0);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, NULL), kTvmErrorDeviceApiNotRegistered);
}

static void test_alloc_and_free_dispatch_by_device_type(void) {
  void* p = NULL;
  fake_reset();
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kFake, 64U, 128U, kFloat32, &p), 0);
  CRT_EXPECT_PTR_EQ(p, g_fake_pool[0]);
  CRT_EXPECT_EQ(g_fake_allocs, 1);
  CRT_EXPECT_EQ(g_fake_last_alignment, 128);
  CRT_EXPECT_EQ(TVMDeviceFreeDataSpace(kFake, p), 0);
  CRT_EXPECT_EQ(g_fake_frees, 1);
  CRT_EXPECT_EQ(TVMDeviceFreeDataSpace(kFake, p), -1); /* the API's own failure */
  g_fake_fail_alloc = 1;
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kFake, 64U, 64U, kFloat32, &p), -1);
  CRT_EXPECT_PTR_EQ(p, NULL);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "MemoryError: fake device full");
  /* CPU memory comes from the page allocator. */
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kCpu, 100U, 64U, kFloat32, &p), 0);
  CRT_EXPECT_EQ((uintptr_t)p % TVM_CRT_PAGE_BYTES, 0);
  CRT_EXPECT_EQ(TVMDeviceFreeDataSpace(kCpu, p), 0);
  CRT_EXPECT_EQ(TVMDeviceFreeDataSpace(kCpu, p), -1);
  CRT_EXPECT_EQ(g_fake_allocs, 2);
}

static void test_alloc_checks_alignment_and_arguments(void) {
  void* p = NULL;
  DLDevice cuda = {kDLCUDA, 0};
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kCpu, 8U, 3U, kFloat32, &p), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "power of two");
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kCpu, 8U, 0U, kFloat32, &p), -1);
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kCpu, 8U, TVM_CRT_PAGE_BYTES * 2U, kFloat32, &p), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "exceeds the page size");
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kCpu, 8U, 64U, kFloat32, NULL), -1);
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(cuda, 8U, 64U, kFloat32, &p), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "no device API registered for device type 2");
  CRT_EXPECT_EQ(TVMDeviceFreeDataSpace(kCpu, NULL), -1);
  CRT_EXPECT_EQ(TVMDeviceFreeDataSpace(cuda, &p), -1);
}

static void test_cpu_to_cpu_copy_uses_memcpy_and_byte_offset(void) {
  float src[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  float dst[6] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  int64_t shape[1] = {4};
  DLTensor from = tensor_1d(src, kCpu, shape);
  DLTensor to = tensor_1d(dst, kCpu, shape);
  fake_reset();
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  to.byte_offset = 2U * sizeof(float);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&from, &to, NULL), 0);
  CRT_EXPECT_TRUE((dst[0] == 0.0f) && (dst[1] == 0.0f));
  CRT_EXPECT_TRUE((dst[2] == 1.0f) && (dst[5] == 4.0f));
  CRT_EXPECT_EQ(g_fake_copies, 0);
}

static void test_copy_uses_the_non_cpu_side(void) {
  float host[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  float back[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int64_t shape[1] = {4};
  void* dev_mem = NULL;
  DLTensor h;
  DLTensor d;
  DLTensor b;
  fake_reset();
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMDeviceAllocDataSpace(kFake, 16U, 64U, kFloat32, &dev_mem), 0);
  h = tensor_1d(host, kCpu, shape);
  d = tensor_1d(dev_mem, kFake, shape);
  b = tensor_1d(back, kCpu, shape);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&h, &d, NULL), 0);
  CRT_EXPECT_EQ(g_fake_copies, 1);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&d, &b, NULL), 0);
  CRT_EXPECT_EQ(g_fake_copies, 2);
  CRT_EXPECT_TRUE((back[0] == 1.0f) && (back[3] == 4.0f));
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&d, &d, NULL), 0);
  CRT_EXPECT_EQ(g_fake_copies, 3);
}

static void test_copy_between_two_accelerators_is_refused(void) {
  float a[1] = {1.0f};
  float b[1] = {0.0f};
  int64_t shape[1] = {1};
  DLDevice cuda = {kDLCUDA, 0};
  DLTensor x = tensor_1d(a, kFake, shape);
  DLTensor y = tensor_1d(b, cuda, shape);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLCUDA, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&x, &y, NULL), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "between device types 16 and 2");
}

static void test_copy_checks_sizes_and_layout(void) {
  float a[6] = {0};
  float b[6] = {0};
  int64_t four[1] = {4};
  int64_t six[1] = {6};
  int64_t shape2[2] = {2, 3};
  int64_t strides[2] = {1, 2};
  DLTensor x = tensor_1d(a, kCpu, four);
  DLTensor y = tensor_1d(b, kCpu, six);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&x, &y, NULL), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "16 bytes into 24 bytes");
  /* Different shapes with the same byte size are fine, as in TVM. */
  y.ndim = 2;
  y.shape = shape2;
  x.shape = six;
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&x, &y, NULL), 0);
  y.strides = strides;
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&x, &y, NULL), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "compact");
  y.strides = NULL;
  y.data = NULL;
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&x, &y, NULL), -1);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(NULL, &y, NULL), -1);
  CRT_EXPECT_EQ(TVMDeviceCopyDataFromTo(&x, NULL, NULL), -1);
}

static void test_synchronize_and_attributes_dispatch(void) {
  TVMValue v;
  int code = -1;
  DLDevice cuda = {kDLCUDA, 0};
  fake_reset();
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMSynchronize(kDLHexagon, 0, NULL), 0);
  CRT_EXPECT_EQ(g_fake_syncs, 1);
  CRT_EXPECT_EQ(TVMSynchronize(kDLCPU, 0, NULL), 0);
  CRT_EXPECT_EQ(TVMSynchronize(kDLCUDA, 0, NULL), -1);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kFake, 7, &v, &code), 0);
  CRT_EXPECT_EQ(v.v_int64, 1007);
  CRT_EXPECT_EQ(g_fake_attrs, 1);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, TVM_CRT_DEVICE_ATTR_DEVICE_NAME, &v, &code), 0);
  CRT_EXPECT_EQ(code, kTVMStr);
  CRT_EXPECT_STR_EQ(v.v_str, "cpu");
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, TVM_CRT_DEVICE_ATTR_TOTAL_GLOBAL_MEMORY, &v, &code), 0);
  CRT_EXPECT_EQ(code, kTVMArgInt);
  CRT_EXPECT_EQ(v.v_int64, (int64_t)TVM_CRT_MEMORY_POOL_BYTES);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, TVM_CRT_DEVICE_ATTR_AVAILABLE_GLOBAL_MEMORY, &v, &code), 0);
  CRT_EXPECT_TRUE((v.v_int64 > 0) && (v.v_int64 < (int64_t)TVM_CRT_MEMORY_POOL_BYTES));
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, 1, &v, &code), 0);
  CRT_EXPECT_EQ(code, kTVMNullptr);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(cuda, 1, &v, &code), -1);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, 0, NULL, &code), -1);
}

static void test_registration_limits(void) {
  static const pytvm_crt_device_api incomplete = {fake_alloc, fake_free, NULL, fake_sync, fake_get_attr};
  int type;
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &incomplete), kTvmErrorDeviceApiIncomplete);
  /* CPU holds one slot; fill the rest, re-registering an existing type takes no new slot. */
  for (type = 100; type < 100 + TVM_CRT_MAX_DEVICE_APIS - 1; type++) {
    CRT_EXPECT_EQ(pytvm_crt_register_device_api(type, &kFakeApi), kTvmErrorNoError);
  }
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(100, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorDeviceApiTableFull);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(100, NULL), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLHexagon, &kFakeApi), kTvmErrorNoError);
  /* A replacement CPU API is allowed (an integrator's own CPU memory). */
  CRT_EXPECT_EQ(pytvm_crt_register_device_api(kDLCPU, &kFakeApi), kTvmErrorNoError);
  CRT_EXPECT_TRUE(pytvm_crt_get_device_api(kDLCPU) == &kFakeApi);
}

void crt_suite_device_api(void) {
  CRT_RUN_TEST(test_exist_follows_registration);
  CRT_RUN_TEST(test_alloc_and_free_dispatch_by_device_type);
  CRT_RUN_TEST(test_alloc_checks_alignment_and_arguments);
  CRT_RUN_TEST(test_cpu_to_cpu_copy_uses_memcpy_and_byte_offset);
  CRT_RUN_TEST(test_copy_uses_the_non_cpu_side);
  CRT_RUN_TEST(test_copy_between_two_accelerators_is_refused);
  CRT_RUN_TEST(test_copy_checks_sizes_and_layout);
  CRT_RUN_TEST(test_synchronize_and_attributes_dispatch);
  CRT_RUN_TEST(test_registration_limits);
}
