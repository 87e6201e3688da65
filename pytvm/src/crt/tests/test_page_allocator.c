/*!
 * \file test_page_allocator.c
 * \brief Page allocator: alignment, sizes, exhaustion, fragmentation, coalescing, bad frees.
 */
#include "crt_test.h"

static const DLDevice kCpu = {kDLCPU, 0};
static void* g_pages[TVM_CRT_NUM_PAGES];

static pytvm_crt_memory_stats stats(void) {
  pytvm_crt_memory_stats s;
  (void)memset(&s, 0, sizeof(s));
  (void)pytvm_crt_memory_get_stats(&s);
  return s;
}

static void test_allocations_are_page_aligned_and_usable(void) {
  void* p = NULL;
  pytvm_crt_memory_stats before = stats();
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, &p), kTvmErrorNoError);
  CRT_EXPECT_TRUE(p != NULL);
  CRT_EXPECT_EQ((uintptr_t)p % TVM_CRT_PAGE_BYTES, 0);
  (void)memset(p, 0xA5, 1U);
  CRT_EXPECT_EQ(stats().free_pages, before.free_pages - 1U);
  CRT_EXPECT_EQ(stats().num_allocations, before.num_allocations + 1U);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(p, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(stats().free_pages, before.free_pages);
}

static void test_sizes_round_up_to_pages(void) {
  void* a = NULL;
  void* b = NULL;
  void* c = NULL;
  uint32_t free0 = stats().free_pages;
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(0U, kCpu, &a), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(TVM_CRT_PAGE_BYTES, kCpu, &b), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(TVM_CRT_PAGE_BYTES + 1U, kCpu, &c), kTvmErrorNoError);
  CRT_EXPECT_TRUE((a != b) && (b != c) && (a != c));
  CRT_EXPECT_EQ(stats().free_pages, free0 - 4U);
  (void)memset(c, 1, TVM_CRT_PAGE_BYTES + 1U);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(c, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(b, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(a, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(stats().free_pages, free0);
}

static void test_exhaustion_fails_cleanly_and_recovers(void) {
  void* all = NULL;
  void* more = &all;
  pytvm_crt_memory_stats s = stats();
  CRT_EXPECT_EQ(s.largest_free_run_pages, s.free_pages); /* only the workspace is taken */
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate((size_t)s.free_pages * TVM_CRT_PAGE_BYTES, kCpu, &all),
                kTvmErrorNoError);
  CRT_EXPECT_EQ(stats().free_pages, 0);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, &more), kTvmErrorPlatformNoMemory);
  CRT_EXPECT_PTR_EQ(more, NULL);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(all, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, &more), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(TVM_CRT_MEMORY_POOL_BYTES + 1U, kCpu, &all),
                kTvmErrorPlatformNoMemory);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate((size_t)-1, kCpu, &all), kTvmErrorPlatformNoMemory);
}

static void test_fragmentation_blocks_large_runs(void) {
  uint32_t n = stats().free_pages;
  uint32_t i;
  void* big = NULL;
  void* one = NULL;
  for (i = 0U; i < n; i++) {
    CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, &g_pages[i]), kTvmErrorNoError);
  }
  for (i = 0U; i < n; i += 2U) {
    CRT_EXPECT_EQ(TVMPlatformMemoryFree(g_pages[i], kCpu), kTvmErrorNoError);
  }
  CRT_EXPECT_EQ(stats().free_pages, (n + 1U) / 2U);
  CRT_EXPECT_EQ(stats().largest_free_run_pages, 1);
  /* Half the pool is free, but no two free pages touch. */
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(2U * TVM_CRT_PAGE_BYTES, kCpu, &big),
                kTvmErrorPlatformNoMemory);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, &one), kTvmErrorNoError);
  CRT_EXPECT_PTR_EQ(one, g_pages[0]); /* first fit */
}

static void test_freed_neighbours_coalesce(void) {
  void* a = NULL;
  void* b = NULL;
  void* c = NULL;
  void* d = NULL;
  void* merged = NULL;
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(2U * TVM_CRT_PAGE_BYTES, kCpu, &a), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(3U * TVM_CRT_PAGE_BYTES, kCpu, &b), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(2U * TVM_CRT_PAGE_BYTES, kCpu, &c), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, &d), kTvmErrorNoError);
  CRT_EXPECT_EQ((uintptr_t)b - (uintptr_t)a, 2U * TVM_CRT_PAGE_BYTES);
  /* Free the middle first, then its left neighbour: one 5-page hole at a. */
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(b, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(a, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(5U * TVM_CRT_PAGE_BYTES, kCpu, &merged),
                kTvmErrorNoError);
  CRT_EXPECT_PTR_EQ(merged, a);
  /* Free everything: the pool is one run again. */
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(merged, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(c, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(d, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(stats().largest_free_run_pages, stats().free_pages);
}

static void test_bad_frees_are_rejected(void) {
  void* p = NULL;
  int local = 0;
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(2U * TVM_CRT_PAGE_BYTES, kCpu, &p), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(NULL, kCpu), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(&local, kCpu), kTvmErrorPlatformBadFree);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree((uint8_t*)p + 1, kCpu), kTvmErrorPlatformBadFree);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree((uint8_t*)p + TVM_CRT_PAGE_BYTES, kCpu),
                kTvmErrorPlatformBadFree);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(p, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(p, kCpu), kTvmErrorPlatformBadFree);
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(1U, kCpu, NULL), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(pytvm_crt_memory_get_stats(NULL), kTvmErrorArgumentNull);
}

static void test_stats_describe_the_configured_pool(void) {
  pytvm_crt_memory_stats s = stats();
  CRT_EXPECT_EQ(s.pool_bytes, TVM_CRT_MEMORY_POOL_BYTES);
  CRT_EXPECT_EQ(s.page_bytes, TVM_CRT_PAGE_BYTES);
  CRT_EXPECT_EQ(s.total_pages, TVM_CRT_NUM_PAGES);
  /* TVMInitializeRuntime reserved the workspace. */
  CRT_EXPECT_EQ(s.num_allocations, 1);
  CRT_EXPECT_EQ(s.total_pages - s.free_pages,
                (TVM_CRT_WORKSPACE_BYTES + TVM_CRT_PAGE_BYTES - 1U) / TVM_CRT_PAGE_BYTES);
}

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

#if defined(TEST_ASAN)
int __asan_address_is_poisoned(void const volatile* addr);

static void test_asan_sees_overruns_and_freed_pages(void) {
  uint8_t* p = NULL;
  CRT_EXPECT_EQ(TVMPlatformMemoryAllocate(16U, kCpu, (void**)&p), kTvmErrorNoError);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[15]), 0);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[16]), 1);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[TVM_CRT_PAGE_BYTES - 1U]), 1);
  CRT_EXPECT_EQ(TVMPlatformMemoryFree(p, kCpu), kTvmErrorNoError);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[0]), 1);
  p = (uint8_t*)TVMBackendAllocWorkspace(kDLCPU, 0, 8U, kDLFloat, 32);
  CRT_EXPECT_TRUE(p != NULL);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[7]), 0);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[8]), 1);
  CRT_EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, p), 0);
  CRT_EXPECT_EQ(__asan_address_is_poisoned(&p[0]), 1);
}
#endif

void crt_suite_page_allocator(void) {
#if defined(TEST_ASAN)
  CRT_RUN_TEST(test_asan_sees_overruns_and_freed_pages);
#endif
  CRT_RUN_TEST(test_allocations_are_page_aligned_and_usable);
  CRT_RUN_TEST(test_sizes_round_up_to_pages);
  CRT_RUN_TEST(test_exhaustion_fails_cleanly_and_recovers);
  CRT_RUN_TEST(test_fragmentation_blocks_large_runs);
  CRT_RUN_TEST(test_freed_neighbours_coalesce);
  CRT_RUN_TEST(test_bad_frees_are_rejected);
  CRT_RUN_TEST(test_stats_describe_the_configured_pool);
}
