/*!
 * \file test_lifecycle.c
 * \brief Before and after TVMInitializeRuntime: what needs it, what it sets up, what a second
 *        call resets. Runs first in the binary.
 */
#include "crt_test.h"

static const DLDevice kCpu = {kDLCPU, 0};

static void test_calls_before_initialization_fail_cleanly(void) {
  TVMFunctionHandle f = (TVMFunctionHandle)&f;
  TVMValue v;
  int code = -1;
  void* p = NULL;
  CRT_EXPECT_EQ(TVMFuncGetGlobal("runtime.SystemLib", &f), -1);
  CRT_EXPECT_PTR_EQ(f, NULL);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "TVMInitializeRuntime");
  CRT_EXPECT_EQ(pytvm_crt_func_register_global("x", crt_test_echo_resource, 0), -1);
  CRT_EXPECT_EQ(TVMFuncCall((TVMFunctionHandle)(uintptr_t)1U, NULL, NULL, 0, &v, &code), -1);
  CRT_EXPECT_PTR_EQ(TVMBackendAllocWorkspace(kDLCPU, 0, 8U, kDLFloat, 32), NULL);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, TVM_CRT_DEVICE_ATTR_EXIST, &v, &code), 0);
  CRT_EXPECT_EQ(v.v_int64, 0);
  /* The page allocator needs no initialization. */
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(8U, kCpu, &p), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(p, kCpu), kTvmErrorNoError);
}

static void test_initialization_sets_up_the_runtime(void) {
  TVMFunctionHandle f = NULL;
  TVMValue v;
  int code = -1;
  pytvm_crt_workspace_stats ws;
  CRT_EXPECT_EQ(TVMFuncGetGlobal("runtime.SystemLib", &f), 0);
  CRT_EXPECT_TRUE(f != NULL);
  CRT_EXPECT_EQ(pytvm_crt_device_get_attr(kCpu, TVM_CRT_DEVICE_ATTR_EXIST, &v, &code), 0);
  CRT_EXPECT_EQ(v.v_int64, 1);
  CRT_EXPECT_EQ(pytvm_crt_workspace_get_stats(&ws), kTvmErrorNoError);
  CRT_EXPECT_EQ(ws.capacity_bytes, TVM_CRT_WORKSPACE_BYTES);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "");
}

static void test_reinitialization_resets_everything(void) {
  void* p = NULL;
  void* w = NULL;
  TVMFunctionHandle f = NULL;
  pytvm_crt_memory_stats before;
  pytvm_crt_memory_stats after;
  (void)pytvm_crt_memory_get_stats(&before);
  CRT_EXPECT_EQ(pytvm_crt_func_register_global("test.temp", crt_test_echo_resource, 0), 0);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(3U * TVM_CRT_PAGE_BYTES, kCpu, &p), kTvmErrorNoError);
  w = TVMBackendAllocWorkspace(kDLCPU, 0, 8U, kDLFloat, 32);
  CRT_EXPECT_TRUE(w != NULL);
  CRT_EXPECT_EQ(TVMInitializeRuntime(), 0);
  CRT_EXPECT_EQ(TVMFuncGetGlobal("test.temp", &f), 0);
  CRT_EXPECT_PTR_EQ(f, NULL);
  (void)pytvm_crt_memory_get_stats(&after);
  CRT_EXPECT_EQ(after.free_pages, before.free_pages);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, w), -1);
}

void crt_suite_lifecycle(void) {
  CRT_RUN_TEST_NO_INIT(test_calls_before_initialization_fail_cleanly);
  CRT_RUN_TEST(test_initialization_sets_up_the_runtime);
  CRT_RUN_TEST(test_reinitialization_resets_everything);
}
