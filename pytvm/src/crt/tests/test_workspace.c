/*! \file test_workspace.c \brief Workspace stack: alignment, LIFO order, limits. */
#include "crt_test.h"

static pytvm_crt_workspace_stats ws_stats(void) {
  pytvm_crt_workspace_stats s;
  (void)memset(&s, 0, sizeof(s));
  (void)pytvm_crt_workspace_get_stats(&s);
  return s;
}

static void test_blocks_are_aligned_and_disjoint(void) {
  uint8_t* a = (uint8_t*)TVMBackendAllocWorkspace(kDLCPU, 0, 3U, kDLFloat, 32);
  uint8_t* b = (uint8_t*)TVMBackendAllocWorkspace(kDLCPU, 0, 100U, kDLFloat, 32);
  CRT_EXPECT_TRUE((a != NULL) && (b != NULL));
  CRT_EXPECT_EQ((uintptr_t)a % TVM_CRT_WORKSPACE_ALIGNMENT, 0);
  CRT_EXPECT_EQ((uintptr_t)b % TVM_CRT_WORKSPACE_ALIGNMENT, 0);
  CRT_EXPECT_TRUE(b >= a + 3);
  (void)memset(a, 1, 3U);
  (void)memset(b, 2, 100U);
  CRT_EXPECT_EQ(a[2], 1);
  CRT_EXPECT_EQ(ws_stats().depth, 2);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, b), 0);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, a), 0);
  CRT_EXPECT_EQ(ws_stats().depth, 0);
  CRT_EXPECT_EQ(ws_stats().used_bytes, 0);
}

static void test_free_out_of_lifo_order_is_refused(void) {
  void* a = TVMBackendAllocWorkspace(kDLCPU, 0, 16U, kDLFloat, 32);
  void* b = TVMBackendAllocWorkspace(kDLCPU, 0, 16U, kDLFloat, 32);
  void* c = TVMBackendAllocWorkspace(kDLCPU, 0, 16U, kDLFloat, 32);
  void* again = NULL;
  CRT_EXPECT_TRUE((a != NULL) && (b != NULL) && (c != NULL));
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, b), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "LIFO");
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, a), -1);
  CRT_EXPECT_EQ(ws_stats().depth, 3); /* nothing was freed */
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, c), 0);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, b), 0);
  /* The space of b and c is reused. */
  again = TVMBackendAllocWorkspace(kDLCPU, 0, 16U, kDLFloat, 32);
  CRT_EXPECT_PTR_EQ(again, b);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, again), 0);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, a), 0);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, a), -1); /* empty stack */
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, NULL), -1);
}

static void test_capacity_is_enforced(void) {
  const size_t cap = ws_stats().capacity_bytes;
  void* all = NULL;
  CRT_EXPECT_EQ(cap, TVM_CRT_WORKSPACE_BYTES);
  all = TVMBackendAllocWorkspace(kDLCPU, 0, (uint64_t)cap, kDLFloat, 32);
  CRT_EXPECT_TRUE(all != NULL);
  (void)memset(all, 0, cap);
  CRT_EXPECT_PTR_EQ(TVMBackendAllocWorkspace(kDLCPU, 0, 1U, kDLFloat, 32), NULL);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "MemoryError: ");
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, all), 0);
  CRT_EXPECT_PTR_EQ(TVMBackendAllocWorkspace(kDLCPU, 0, (uint64_t)cap + 1U, kDLFloat, 32), NULL);
  CRT_EXPECT_PTR_EQ(TVMBackendAllocWorkspace(kDLCPU, 0, UINT64_MAX, kDLFloat, 32), NULL);
  CRT_EXPECT_EQ(ws_stats().depth, 0);
}

static void test_depth_is_enforced(void) {
  void* blocks[TVM_CRT_MAX_WORKSPACE_DEPTH];
  int i;
  for (i = 0; i < TVM_CRT_MAX_WORKSPACE_DEPTH; i++) {
    blocks[i] = TVMBackendAllocWorkspace(kDLCPU, 0, 0U, kDLFloat, 32);
    CRT_EXPECT_TRUE(blocks[i] != NULL);
  }
  CRT_EXPECT_TRUE(blocks[0] != blocks[1]); /* zero-byte blocks are distinct */
  CRT_EXPECT_PTR_EQ(TVMBackendAllocWorkspace(kDLCPU, 0, 1U, kDLFloat, 32), NULL);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "TVM_CRT_MAX_WORKSPACE_DEPTH");
  for (i = TVM_CRT_MAX_WORKSPACE_DEPTH - 1; i >= 0; i--) {
    CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, blocks[i]), 0);
  }
}

static void test_only_cpu_has_a_workspace(void) {
  CRT_EXPECT_PTR_EQ(TVMBackendAllocWorkspace(kDLHexagon, 0, 8U, kDLFloat, 32), NULL);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: ");
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLHexagon, 0, NULL), -1);
}

void crt_suite_workspace(void) {
  CRT_RUN_TEST(test_blocks_are_aligned_and_disjoint);
  CRT_RUN_TEST(test_free_out_of_lifo_order_is_refused);
  CRT_RUN_TEST(test_capacity_is_enforced);
  CRT_RUN_TEST(test_depth_is_enforced);
  CRT_RUN_TEST(test_only_cpu_has_a_workspace);
}
