/*!
 * \file posix_platform.c
 * \brief The platform hooks for a POSIX host: abort(), CLOCK_MONOTONIC timer, stderr logging,
 *        the clock and process id of MinRPC's trace ring (minrpc/minrpc_trace.h), and the
 *        MinRPC channel over two file descriptors (pytvm_crt/posix_fd_channel.h).
 *        Link it into a host device binary; it is not part of libpytvm_crt.a.
 */
#define _POSIX_C_SOURCE 200112L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pytvm_crt/minrpc_trace.h"
#include "pytvm_crt/platform.h"
#include "pytvm_crt/posix_fd_channel.h"

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

int64_t pytvm_fd_pair_read(void* ctx, uint8_t* buf, size_t n) {
  const pytvm_fd_pair_t* fds = (const pytvm_fd_pair_t*)ctx;
  for (;;) {
    ssize_t got = read(fds->read_fd, buf, n);
    if ((got >= 0) || (errno != EINTR)) {
      return (int64_t)got;
    }
  }
}

int32_t pytvm_fd_pair_write(void* ctx, const uint8_t* buf, size_t n) {
  const pytvm_fd_pair_t* fds = (const pytvm_fd_pair_t*)ctx;
  size_t done = 0u;
  while (done < n) {
    ssize_t put = write(fds->write_fd, buf + done, n - done);
    if (put < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -1;
    }
    done += (size_t)put;
  }
  return 0;
}

int pytvm_parse_fd(const char* text) {
  char* end = NULL;
  long v;
  errno = 0;
  v = strtol(text, &end, 10);
  if ((errno != 0) || (end == text) || (*end != '\0') || (v < 0) || (v > 65535)) {
    return -1;
  }
  return (int)v;
}
