/*!
 * \file posix_platform.c
 * \brief The platform hooks for a POSIX host: abort(), CLOCK_MONOTONIC timer, stderr logging,
 *        and the clock and process id of MinRPC's trace ring (minrpc/minrpc_trace.h).
 *        Link it into a host device binary; it is not part of libpytvm_crt.a.
 */
#define _POSIX_C_SOURCE 200112L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pytvm_crt/minrpc_trace.h"
#include "pytvm_crt/platform.h"

static int g_timer_running = 0;
static struct timespec g_timer_start;

void TVMPlatformAbort(tvm_crt_error_t code) {
  (void)fprintf(stderr, "pytvm CRT: TVMPlatformAbort(0x%x)\n", (unsigned)code);
  (void)fflush(stderr);
  abort();
}

tvm_crt_error_t TVMPlatformTimerStart(void) {
  if (g_timer_running != 0) {
    return kTvmErrorPlatformTimerBadState;
  }
  if (clock_gettime(CLOCK_MONOTONIC, &g_timer_start) != 0) {
    return kTvmErrorPlatformTimerBadState;
  }
  g_timer_running = 1;
  return kTvmErrorNoError;
}

tvm_crt_error_t TVMPlatformTimerStop(double* elapsed_time_seconds) {
  struct timespec now;
  if (elapsed_time_seconds == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (g_timer_running == 0) {
    return kTvmErrorPlatformTimerBadState;
  }
  g_timer_running = 0;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
    return kTvmErrorPlatformTimerBadState;
  }
  *elapsed_time_seconds = (double)(now.tv_sec - g_timer_start.tv_sec) +
                          ((double)(now.tv_nsec - g_timer_start.tv_nsec) * 1e-9);
  return kTvmErrorNoError;
}

void TVMLogf(const char* fmt, ...) {
  va_list args;
  if (fmt == NULL) {
    return;
  }
  va_start(args, fmt);
  (void)vfprintf(stderr, fmt, args);
  va_end(args);
}

uint64_t TVMPlatformMonotonicNs(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
    return 0u;
  }
  return ((uint64_t)now.tv_sec * 1000000000u) + (uint64_t)now.tv_nsec;
}

uint32_t TVMPlatformProcessId(void) { return (uint32_t)getpid(); }
