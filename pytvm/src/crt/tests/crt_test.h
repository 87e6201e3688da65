/*!
 * \file crt_test.h
 * \brief A tiny assertion framework for the CRT's C unit tests (no allocation, no recursion).
 *
 * A test is `static void test_name(void)`; a failed CRT_EXPECT_* prints where and why and
 * returns from the test. CRT_RUN_TEST runs one after TVMInitializeRuntime (a fresh runtime).
 */
#ifndef PYTVM_CRT_TESTS_CRT_TEST_H_
#define PYTVM_CRT_TESTS_CRT_TEST_H_

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pytvm_crt/crt.h"

/*! \brief Record a failure of the current test (printf-style reason). */
void crt_test_fail(const char* file, int line, const char* fmt, ...) PYTVM_CRT_PRINTF(3, 4);

/*! \brief Run one test; with init != 0, TVMInitializeRuntime runs first. */
void crt_test_run(const char* name, void (*test)(void), int init);

/*! \brief Print the summary; 0 when every test passed. */
int crt_test_summary(void);

#define CRT_RUN_TEST(fn) crt_test_run(#fn, fn, 1)
#define CRT_RUN_TEST_NO_INIT(fn) crt_test_run(#fn, fn, 0)

#define CRT_EXPECT_TRUE(cond)                           \
  do {                                                  \
    if (!(cond)) {                                      \
      crt_test_fail(__FILE__, __LINE__, "%s", #cond);     \
      return;                                           \
    }                                                   \
  } while (0)

#define CRT_EXPECT_EQ(a, b)                                                                 \
  do {                                                                                      \
    int64_t crt_a_ = (int64_t)(a);                                                          \
    int64_t crt_b_ = (int64_t)(b);                                                          \
    if (crt_a_ != crt_b_) {                                                                 \
      crt_test_fail(__FILE__, __LINE__, "%s == %s: %" PRId64 " (0x%" PRIx64 ") != %" PRId64 \
                  " (0x%" PRIx64 ")", #a, #b, crt_a_, (uint64_t)crt_a_, crt_b_,            \
                  (uint64_t)crt_b_);                                                        \
      return;                                                                               \
    }                                                                                       \
  } while (0)

#define CRT_EXPECT_PTR_EQ(a, b)                                                        \
  do {                                                                                 \
    const void* crt_a_ = (const void*)(a);                                             \
    const void* crt_b_ = (const void*)(b);                                             \
    if (crt_a_ != crt_b_) {                                                            \
      crt_test_fail(__FILE__, __LINE__, "%s == %s: %p != %p", #a, #b, crt_a_, crt_b_);   \
      return;                                                                          \
    }                                                                                  \
  } while (0)

#define CRT_EXPECT_STR_EQ(a, b)                                                         \
  do {                                                                                  \
    const char* crt_a_ = (a);                                                           \
    const char* crt_b_ = (b);                                                           \
    if ((crt_a_ == NULL) || (crt_b_ == NULL) || (strcmp(crt_a_, crt_b_) != 0)) {        \
      crt_test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,             \
                  (crt_a_ != NULL) ? crt_a_ : "(null)", (crt_b_ != NULL) ? crt_b_ : "(null)"); \
      return;                                                                           \
    }                                                                                   \
  } while (0)

/*! \brief The string s starts with prefix. */
#define CRT_EXPECT_TEXT_PREFIX(s, prefix)                                                    \
  do {                                                                                  \
    const char* crt_s_ = (s);                                                           \
    const char* crt_p_ = (prefix);                                                      \
    if ((crt_s_ == NULL) || (strncmp(crt_s_, crt_p_, strlen(crt_p_)) != 0)) {           \
      crt_test_fail(__FILE__, __LINE__, "%s starts with \"%s\": \"%s\"", #s, crt_p_,      \
                  (crt_s_ != NULL) ? crt_s_ : "(null)");                                \
      return;                                                                           \
    }                                                                                   \
  } while (0)

/*! \brief The string s contains part. */
#define CRT_EXPECT_TEXT_CONTAINS(s, part)                                                    \
  do {                                                                                  \
    const char* crt_s_ = (s);                                                           \
    const char* crt_p_ = (part);                                                        \
    if ((crt_s_ == NULL) || (strstr(crt_s_, crt_p_) == NULL)) {                         \
      crt_test_fail(__FILE__, __LINE__, "%s contains \"%s\": \"%s\"", #s, crt_p_,         \
                  (crt_s_ != NULL) ? crt_s_ : "(null)");                                \
      return;                                                                           \
    }                                                                                   \
  } while (0)

/*
 * Error texts: with TVM_CRT_ERROR_TEXTS 0 a message is only its fixed head ("ValueError:
 * TVMFuncCall"), so a prefix check keeps the part of the expected prefix before its first ':'
 * (the error kind), and a contains check asks for a non-empty message.
 */
#if TVM_CRT_ERROR_TEXTS
#define CRT_EXPECT_PREFIX(s, prefix) CRT_EXPECT_TEXT_PREFIX(s, prefix)
#define CRT_EXPECT_CONTAINS(s, part) CRT_EXPECT_TEXT_CONTAINS(s, part)
#else
#define CRT_EXPECT_PREFIX(s, prefix)                                                    \
  do {                                                                                  \
    const char* crt_s_ = (s);                                                           \
    const char* crt_p_ = (prefix);                                                      \
    size_t crt_n_ = strcspn(crt_p_, ":");                                               \
    if ((crt_s_ == NULL) || (strncmp(crt_s_, crt_p_, crt_n_) != 0)) {                   \
      crt_test_fail(__FILE__, __LINE__, "%s starts with the kind of \"%s\": \"%s\"", #s,  \
                  crt_p_, (crt_s_ != NULL) ? crt_s_ : "(null)");                        \
      return;                                                                           \
    }                                                                                   \
  } while (0)
#define CRT_EXPECT_CONTAINS(s, part)                                                    \
  do {                                                                                  \
    const char* crt_s_ = (s);                                                           \
    (void)(part);                                                                       \
    if ((crt_s_ == NULL) || (crt_s_[0] == '\0')) {                                      \
      crt_test_fail(__FILE__, __LINE__, "%s is a non-empty message", #s);               \
      return;                                                                           \
    }                                                                                   \
  } while (0)
#endif

/* The unit tests' system lib (test_system_lib.c): echo_resource, add, fail. */
extern int g_crt_test_syslib_entry_calls;
const TVMModule* crt_test_system_lib_module(void);
int crt_test_echo_resource(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                        void* resource_handle);

/* Suites (one per test file). */
void crt_suite_func_registry(void);
void crt_suite_mutable_registry(void);
void crt_suite_func_handle(void);
void crt_suite_packed_call(void);
void crt_suite_module_table(void);
void crt_suite_page_allocator(void);
void crt_suite_workspace(void);
void crt_suite_ndarray(void);
void crt_suite_last_error(void);
void crt_suite_device_api(void);
void crt_suite_lifecycle(void);

#endif /* PYTVM_CRT_TESTS_CRT_TEST_H_ */
