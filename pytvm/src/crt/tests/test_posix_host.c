/*!
 * \file test_posix_host.c
 * \brief The POSIX host pieces: posix_platform.c hooks (timer, TVMLogf, abort) and the empty
 *        system lib, linked exactly as a host device binary links them.
 */
#define _POSIX_C_SOURCE 200112L

#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crt_test.h"

static void test_timer_measures_and_checks_its_state(void) {
  double seconds = -1.0;
  volatile uint64_t spin = 0U;
  uint64_t i;
  CRT_EXPECT_EQ(TVMPlatformTimerStop(&seconds), kTvmErrorPlatformTimerBadState);
  CRT_EXPECT_EQ(TVMPlatformTimerStart(), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMPlatformTimerStart(), kTvmErrorPlatformTimerBadState);
  for (i = 0U; i < 100000U; i++) {
    spin += i;
  }
  CRT_EXPECT_TRUE(spin > 0U);
  CRT_EXPECT_EQ(TVMPlatformTimerStop(NULL), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMPlatformTimerStop(&seconds), kTvmErrorNoError);
  CRT_EXPECT_TRUE((seconds >= 0.0) && (seconds < 60.0));
  CRT_EXPECT_EQ(TVMPlatformTimerStop(&seconds), kTvmErrorPlatformTimerBadState);
}

static void test_logf_writes_to_stderr(void) {
  FILE* capture = tmpfile();
  int saved = -1;
  char text[64];
  size_t n;
  CRT_EXPECT_TRUE(capture != NULL);
  (void)fflush(stderr);
  saved = dup(STDERR_FILENO);
  CRT_EXPECT_TRUE(saved >= 0);
  CRT_EXPECT_TRUE(dup2(fileno(capture), STDERR_FILENO) >= 0);
  TVMLogf("crt log %d %s\n", 42, "ok");
  (void)fflush(stderr);
  (void)dup2(saved, STDERR_FILENO);
  (void)close(saved);
  rewind(capture);
  n = fread(text, 1U, sizeof(text) - 1U, capture);
  text[n] = '\0';
  (void)fclose(capture);
  CRT_EXPECT_STR_EQ(text, "crt log 42 ok\n");
}

static void test_abort_raises_sigabrt(void) {
  int status = 0;
  pid_t child = fork();
  CRT_EXPECT_TRUE(child >= 0);
  if (child == 0) {
    (void)freopen("/dev/null", "w", stderr);
    TVMPlatformAbort(kTvmErrorPlatformCheckFailure);
  }
  CRT_EXPECT_EQ(waitpid(child, &status, 0), child);
  CRT_EXPECT_TRUE(WIFSIGNALED(status));
  CRT_EXPECT_EQ(WTERMSIG(status), SIGABRT);
}

static void test_empty_system_lib_has_no_functions(void) {
  TVMFunctionHandle f = NULL;
  TVMFunctionHandle g = (TVMFunctionHandle)&g;
  TVMValue ret;
  int code = -1;
  CRT_EXPECT_EQ(TVMFuncGetGlobal("runtime.SystemLib", &f), 0);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, 0, &ret, &code), 0);
  CRT_EXPECT_EQ(code, kTVMModuleHandle);
  CRT_EXPECT_EQ(TVMModGetFunction(ret.v_handle, "anything", 0, &g), 0);
  CRT_EXPECT_PTR_EQ(g, NULL);
}

int main(void) {
  CRT_RUN_TEST(test_timer_measures_and_checks_its_state);
  CRT_RUN_TEST(test_logf_writes_to_stderr);
  CRT_RUN_TEST(test_abort_raises_sigabrt);
  CRT_RUN_TEST(test_empty_system_lib_has_no_functions);
  return crt_test_summary();
}
