/*!
 * \file test_platform_hooks.c
 * \brief The unit tests' own platform hooks: abort() with a message, a fake timer, TVMLogf to
 *        stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "pytvm_crt/platform.h"

static int g_timer_running = 0;

void TVMPlatformAbort(tvm_crt_error_t code) {
  (void)fprintf(stderr, "TVMPlatformAbort(0x%x) in a unit test\n", (unsigned)code);
  abort();
}

tvm_crt_error_t TVMPlatformTimerStart(void) {
  if (g_timer_running != 0) {
    return kTvmErrorPlatformTimerBadState;
  }
  g_timer_running = 1;
  return kTvmErrorNoError;
}

tvm_crt_error_t TVMPlatformTimerStop(double* elapsed_time_seconds) {
  if (elapsed_time_seconds == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (g_timer_running == 0) {
    return kTvmErrorPlatformTimerBadState;
  }
  g_timer_running = 0;
  *elapsed_time_seconds = 0.001; /* a fixed fake duration */
  return kTvmErrorNoError;
}

void TVMLogf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  (void)vfprintf(stderr, fmt, args);
  va_end(args);
}
