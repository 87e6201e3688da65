/*!
 * \file page_allocator.c
 * \brief First-fit page allocator over one static pool.
 *
 * g_run_pages[i] is the length in pages of the allocation starting at page i, and 0 for every
 * other page. Allocated runs are skipped by their length and free pages are counted one by
 * one, so adjacent free pages always form one run (freeing coalesces without extra work).
 */
#include <string.h>

#include "crt_internal.h"
#include "pytvm_crt/page_allocator.h"

/* One spare page so the pool can start on a page boundary whatever the storage's address. */
static union {
  uint8_t bytes[(size_t)TVM_CRT_MEMORY_POOL_BYTES + (size_t)TVM_CRT_PAGE_BYTES];
  uint64_t align_u64;
  double align_double;
  void* align_ptr;
} g_pool_storage;

static uint32_t g_run_pages[TVM_CRT_NUM_PAGES];

static uint8_t* pool_base(void) {
  uintptr_t raw = (uintptr_t)&g_pool_storage.bytes[0];
  size_t skip = (size_t)((TVM_CRT_PAGE_BYTES - (raw % TVM_CRT_PAGE_BYTES)) % TVM_CRT_PAGE_BYTES);
  return &g_pool_storage.bytes[skip];
}

void pytvm_crt_memory_reset(void) {
  (void)memset(g_run_pages, 0, sizeof(g_run_pages));
  TVM_CRT_POISON(pool_base(), TVM_CRT_MEMORY_POOL_BYTES);
}

/* Length of the allocation at page i; aborts if the table is corrupt. */
static uint32_t run_at(size_t i) {
  uint32_t run = g_run_pages[i];
  TVM_CRT_CHECK((size_t)run <= (TVM_CRT_NUM_PAGES - i));
  return run;
}

int TVMPlatformMemoryAllocate(size_t num_bytes, DLDevice dev, void** out_ptr) {
  size_t pages;
  size_t i = 0U;
  size_t run_start = 0U;
  size_t run_len = 0U;
  (void)dev;
  if (out_ptr == NULL) {
    return kTvmErrorArgumentNull;
  }
  *out_ptr = NULL;
  if (num_bytes > TVM_CRT_MEMORY_POOL_BYTES) {
    return kTvmErrorPlatformNoMemory;
  }
  pages = (num_bytes + TVM_CRT_PAGE_BYTES - 1U) / TVM_CRT_PAGE_BYTES;
  if (pages == 0U) {
    pages = 1U; /* a zero-byte allocation still gets a unique pointer */
  }
  while ((i < TVM_CRT_NUM_PAGES) && (run_len < pages)) {
    uint32_t run = run_at(i);
    if (run != 0U) {
      i += (size_t)run;
      run_len = 0U;
    } else {
      if (run_len == 0U) {
        run_start = i;
      }
      run_len++;
      i++;
    }
  }
  if (run_len < pages) {
    return kTvmErrorPlatformNoMemory;
  }
  g_run_pages[run_start] = (uint32_t)pages;
  *out_ptr = &pool_base()[run_start * TVM_CRT_PAGE_BYTES];
  /* Only the bytes asked for are usable; the rest of the last page stays poisoned. */
  TVM_CRT_POISON(*out_ptr, pages * TVM_CRT_PAGE_BYTES);
  TVM_CRT_UNPOISON(*out_ptr, num_bytes);
  return kTvmErrorNoError;
}

int TVMPlatformMemoryFree(void* ptr, DLDevice dev) {
  uintptr_t base = (uintptr_t)pool_base();
  uintptr_t addr = (uintptr_t)ptr;
  size_t offset;
  size_t page;
  (void)dev;
  if (ptr == NULL) {
    return kTvmErrorArgumentNull;
  }
  if ((addr < base) || ((addr - base) >= (uintptr_t)TVM_CRT_MEMORY_POOL_BYTES)) {
    return kTvmErrorPlatformBadFree;
  }
  offset = (size_t)(addr - base);
  if ((offset % TVM_CRT_PAGE_BYTES) != 0U) {
    return kTvmErrorPlatformBadFree;
  }
  page = offset / TVM_CRT_PAGE_BYTES;
  if (run_at(page) == 0U) {
    return kTvmErrorPlatformBadFree; /* inside a run, or already freed */
  }
  TVM_CRT_POISON(ptr, (size_t)g_run_pages[page] * TVM_CRT_PAGE_BYTES);
  g_run_pages[page] = 0U;
  return kTvmErrorNoError;
}

int pytvm_crt_memory_get_stats(pytvm_crt_memory_stats* out) {
  size_t i = 0U;
  uint32_t free_run = 0U;
  if (out == NULL) {
    return kTvmErrorArgumentNull;
  }
  out->pool_bytes = TVM_CRT_MEMORY_POOL_BYTES;
  out->page_bytes = TVM_CRT_PAGE_BYTES;
  out->total_pages = (uint32_t)TVM_CRT_NUM_PAGES;
  out->free_pages = 0U;
  out->largest_free_run_pages = 0U;
  out->num_allocations = 0U;
  while (i < TVM_CRT_NUM_PAGES) {
    uint32_t run = run_at(i);
    if (run != 0U) {
      out->num_allocations++;
      free_run = 0U;
      i += (size_t)run;
    } else {
      out->free_pages++;
      free_run++;
      if (free_run > out->largest_free_run_pages) {
        out->largest_free_run_pages = free_run;
      }
      i++;
    }
  }
  return kTvmErrorNoError;
}
