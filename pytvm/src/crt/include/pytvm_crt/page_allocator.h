/*!
 * \file pytvm_crt/page_allocator.h
 * \brief The runtime's only allocator: pages of a static pool of TVM_CRT_MEMORY_POOL_BYTES.
 *
 * An allocation is a run of contiguous pages, first fit, starting at a page boundary (so any
 * alignment up to TVM_CRT_PAGE_BYTES holds). Freed runs merge with free neighbours because
 * free pages carry no per-run state. Single-threaded: the integrator serialises calls.
 */
#ifndef PYTVM_CRT_PAGE_ALLOCATOR_H_
#define PYTVM_CRT_PAGE_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief Allocate ceil(num_bytes / page) pages (one page for 0 bytes); dev is not used: every
 *        device served from this pool shares it.
 * \return kTvmErrorNoError; kTvmErrorPlatformNoMemory when no free run is long enough;
 *         kTvmErrorArgumentNull when out_ptr is NULL (*out_ptr is NULL on every error).
 */
int TVMPlatformMemoryAllocate(size_t num_bytes, DLDevice dev, void** out_ptr);

/*!
 * \brief Free a pointer returned by TVMPlatformMemoryAllocate.
 * \return kTvmErrorNoError; kTvmErrorPlatformBadFree when ptr is not the start of a live
 *         allocation (outside the pool, inside a run, or already freed); kTvmErrorArgumentNull.
 */
int TVMPlatformMemoryFree(void* ptr, DLDevice dev);

/*! \brief A snapshot of the pool. */
typedef struct {
  size_t pool_bytes;
  size_t page_bytes;
  uint32_t total_pages;
  uint32_t free_pages;
  /*! \brief Longest run of free pages: the largest allocation that can succeed now. */
  uint32_t largest_free_run_pages;
  uint32_t num_allocations;
} pytvm_crt_memory_stats;

/*! \brief Fill *out. \return kTvmErrorNoError or kTvmErrorArgumentNull. */
int pytvm_crt_memory_get_stats(pytvm_crt_memory_stats* out);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_PAGE_ALLOCATOR_H_ */
