/*! \file crt_test.c \brief Runner and failure reporting of the CRT test framework. */
#include <stdarg.h>
#include <stdio.h>

#include "crt_test.h"

static int g_tests_run = 0;
static int g_tests_failed = 0;
static int g_current_failed = 0;

void crt_test_fail(const char* file, int line, const char* fmt, ...) {
  va_list args;
  g_current_failed = 1;
  (void)fprintf(stderr, "  %s:%d: expected ", file, line);
  va_start(args, fmt);
  (void)vfprintf(stderr, fmt, args);
  va_end(args);
  (void)fprintf(stderr, "\n");
}

void crt_test_run(const char* name, void (*test)(void), int init) {
  g_tests_run++;
  g_current_failed = 0;
  if ((init != 0) && (TVMInitializeRuntime() != 0)) {
    crt_test_fail(__FILE__, __LINE__, "TVMInitializeRuntime() == 0: %s", TVMGetLastError());
  } else {
    test();
  }
  if (g_current_failed != 0) {
    g_tests_failed++;
    (void)printf("FAIL %s\n", name);
  } else {
    (void)printf("ok   %s\n", name);
  }
  (void)fflush(stdout);
}

int crt_test_summary(void) {
  (void)printf("%d tests, %d failed\n", g_tests_run, g_tests_failed);
  return ((g_tests_failed == 0) && (g_tests_run > 0)) ? 0 : 1;
}
