/*!
 * \file board_platform.c
 * \brief The platform hooks of pytvm_crt/platform.h for the bare-metal device image, without a
 *        C library (no printf, no clock, no process): the runtime calls these, and they call
 *        only the board (pytvm_board_ticks), so the image's call graph stays acyclic
 *        (board_image.c's main -> runtime -> these hooks).
 */
#include <stdint.h>

#include "pytvm_crt/crt.h"

/*! \brief A free-running tick counter (session nonces, trace timestamps); the board's. */
uint32_t pytvm_board_ticks(void);

void TVMPlatformAbort(tvm_crt_error_t code) {
  volatile tvm_crt_error_t last = code;
  (void)last;
  for (;;) {
  }
}

tvm_crt_error_t TVMPlatformTimerStart(void) { return kTvmErrorPlatformTimerBadState; }

tvm_crt_error_t TVMPlatformTimerStop(double* elapsed_time_seconds) {
  (void)elapsed_time_seconds;
  return kTvmErrorPlatformTimerBadState;
}

void TVMLogf(const char* fmt, ...) { (void)fmt; }

uint64_t TVMPlatformMonotonicNs(void) { return (uint64_t)pytvm_board_ticks(); }

uint32_t TVMPlatformProcessId(void) { return 0U; }
