/*!
 * \file pytvm_crt/platform.h
 * \brief Hooks the integrator provides (this library defines none of them):
 *        TVMPlatformAbort, TVMPlatformTimerStart / TVMPlatformTimerStop, TVMLogf.
 *        platform/posix_platform.c implements them for a POSIX host.
 */
#ifndef PYTVM_CRT_PLATFORM_H_
#define PYTVM_CRT_PLATFORM_H_

#include <stdint.h>

#include "pytvm_crt/error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PYTVM_CRT_NORETURN __attribute__((noreturn))
#define PYTVM_CRT_PRINTF(fmt_index, args_index) \
  __attribute__((format(printf, fmt_index, args_index)))
#else
#define PYTVM_CRT_NORETURN
#define PYTVM_CRT_PRINTF(fmt_index, args_index)
#endif

/*! \brief Stop the program after an unrecoverable error (a failed internal check). */
void TVMPlatformAbort(tvm_crt_error_t code) PYTVM_CRT_NORETURN;

/*!
 * \brief Start the platform timer.
 * \return kTvmErrorNoError; kTvmErrorPlatformTimerBadState when it is already running.
 */
tvm_crt_error_t TVMPlatformTimerStart(void);

/*!
 * \brief Stop the platform timer and give the seconds since TVMPlatformTimerStart.
 * \return kTvmErrorNoError; kTvmErrorPlatformTimerBadState when it is not running;
 *         kTvmErrorArgumentNull when elapsed_time_seconds is NULL.
 */
tvm_crt_error_t TVMPlatformTimerStop(double* elapsed_time_seconds);

/*! \brief printf-style log line (debug output and failed checks). */
void TVMLogf(const char* fmt, ...) PYTVM_CRT_PRINTF(1, 2);

/*!
 * \brief CLOCK_MONOTONIC in nanoseconds (on a host, the clock Python's time.monotonic_ns reads),
 *        used to time trace events. platform/posix_platform.c implements it.
 */
uint64_t TVMPlatformMonotonicNs(void);

/*! \brief This process's id, to tell processes apart in a trace (posix: getpid). */
uint32_t TVMPlatformProcessId(void);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_PLATFORM_H_ */
