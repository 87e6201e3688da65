/*!
 * \file crt_internal.h
 * \brief Declarations shared by the CRT's own sources only: string helpers, the internal
 *        check, and the reset functions TVMInitializeRuntime calls.
 */
#ifndef PYTVM_CRT_COMMON_CRT_INTERNAL_H_
#define PYTVM_CRT_COMMON_CRT_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/func_registry.h"
#include "pytvm_crt/platform.h"

/*! \brief Abort through TVMPlatformAbort when an internal invariant fails (never for bad input);
 *  with TVM_CRT_ERROR_TEXTS the failed condition is logged through TVMLogf first. */
#if TVM_CRT_ERROR_TEXTS
#define TVM_CRT_CHECK(cond)                                                        \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      TVMLogf("pytvm CRT: check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      TVMPlatformAbort(kTvmErrorPlatformCheckFailure);                             \
    }                                                                              \
  } while (0)
#else
#define TVM_CRT_CHECK(cond)                            \
  do {                                                 \
    if (!(cond)) {                                     \
      TVMPlatformAbort(kTvmErrorPlatformCheckFailure); \
    }                                                  \
  } while (0)
#endif

/*! \brief printf-style debug line through TVMLogf when TVM_CRT_DEBUG is 1, else nothing. */
#if TVM_CRT_DEBUG
#define TVM_CRT_DEBUG_LOG(...) TVMLogf(__VA_ARGS__)
#else
#define TVM_CRT_DEBUG_LOG(...) ((void)0)
#endif

/*
 * Under AddressSanitizer, free pages and free workspace bytes are poisoned, so a kernel
 * overrunning its allocation or touching freed memory is caught even though the pool is one
 * static object. Elsewhere these are no-ops.
 */
#if defined(__SANITIZE_ADDRESS__)
#define PYTVM_CRT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PYTVM_CRT_ASAN 1
#endif
#endif
#if defined(PYTVM_CRT_ASAN)
void __asan_poison_memory_region(void const volatile* addr, size_t size);
void __asan_unpoison_memory_region(void const volatile* addr, size_t size);
#define TVM_CRT_POISON(addr, size) __asan_poison_memory_region((addr), (size))
#define TVM_CRT_UNPOISON(addr, size) __asan_unpoison_memory_region((addr), (size))
#else
#define TVM_CRT_POISON(addr, size) ((void)(addr), (void)(size))
#define TVM_CRT_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

/*! \brief Length of s, stopping at max_len (so at most max_len). */
size_t pytvm_crt_str_len(const char* s, size_t max_len);

/*! \brief 1 when b equals the len-character string a (a[len] need not be read), else 0. */
int pytvm_crt_str_equal(const char* a, const char* b, size_t len);

/*! \brief Free every page of the pool. */
void pytvm_crt_memory_reset(void);

/*! \brief Empty the module table. */
void pytvm_crt_module_table_reset(void);

/*! \brief Empty the device API table. */
void pytvm_crt_device_api_table_reset(void);

/*! \brief Reserve the workspace region from the (freshly reset) pool. */
tvm_crt_error_t pytvm_crt_workspace_init(void);

/*! \brief Recreate the (empty) global function registry. */
tvm_crt_error_t pytvm_crt_global_registry_init(void);

/*! \brief The global registry, or NULL before TVMInitializeRuntime. */
TVMMutableFuncRegistry* pytvm_crt_global_registry(void);

#endif /* PYTVM_CRT_COMMON_CRT_INTERNAL_H_ */
