/*! \file test_last_error.c \brief Last-error buffer: copy, NULL, truncation, messages built from pieces. */
#include "crt_test.h"

static void test_set_and_get_round_trip(void) {
  TVMAPISetLastError("ValueError: boom");
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "ValueError: boom");
  TVMAPISetLastError(NULL);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "");
}

static void test_long_messages_are_truncated_and_terminated(void) {
  static char msg[TVM_CRT_MAX_ERROR_MESSAGE_BYTES * 2];
  size_t i;
  for (i = 0U; i + 1U < sizeof(msg); i++) {
    msg[i] = (char)('a' + (char)(i % 26U));
  }
  msg[sizeof(msg) - 1U] = '\0';
  TVMAPISetLastError(msg);
  CRT_EXPECT_EQ(strlen(TVMGetLastError()), TVM_CRT_MAX_ERROR_MESSAGE_BYTES - 1);
  CRT_EXPECT_EQ(strncmp(TVMGetLastError(), msg, TVM_CRT_MAX_ERROR_MESSAGE_BYTES - 1), 0);
  /* Exactly fitting messages are kept whole. */
  msg[TVM_CRT_MAX_ERROR_MESSAGE_BYTES - 1] = '\0';
  TVMAPISetLastError(msg);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), msg);
}

static void test_built_messages_truncate_too(void) {
  static char word[TVM_CRT_MAX_ERROR_MESSAGE_BYTES * 2];
  pytvm_crt_text* msg;
  (void)memset(word, 'w', sizeof(word) - 1U);
  word[sizeof(word) - 1U] = '\0';
  msg = pytvm_crt_error_begin("KeyError: ");
  pytvm_crt_text_str(msg, "key ");
  pytvm_crt_text_i64(msg, -42);
  pytvm_crt_text_str(msg, " ");
  pytvm_crt_text_u64(msg, 18446744073709551615ULL);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "KeyError: key -42 18446744073709551615");
  msg = pytvm_crt_error_begin("ValueError: ");
  pytvm_crt_text_u64(msg, 0U);
  pytvm_crt_text_str(msg, " ");
  pytvm_crt_text_hex(msg, 0xbeefULL);
  pytvm_crt_text_strn(msg, "abcdef", 2U);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "ValueError: 0 0xbeefab");
  msg = pytvm_crt_error_begin("ValueError: ");
  pytvm_crt_text_str(msg, word);
  CRT_EXPECT_EQ(strlen(TVMGetLastError()), TVM_CRT_MAX_ERROR_MESSAGE_BYTES - 1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: www");
  /* TVMAPISetLastError starts over, and the next append follows it. */
  TVMAPISetLastError("short");
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "short");
}

static void test_error_details_follow_the_config(void) {
  pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError: here");
  PYTVM_CRT_MSG_STR(msg, ": n = ");
  PYTVM_CRT_MSG_U64(msg, 7U);
#if TVM_CRT_ERROR_TEXTS
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "ValueError: here: n = 7");
#else
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "ValueError: here");
#endif
}

static void test_error_strings_name_the_code(void) {
  CRT_EXPECT_STR_EQ(pytvm_crt_error_string(kTvmErrorFunctionRegistryFull), "function registry full");
  CRT_EXPECT_STR_EQ(pytvm_crt_error_string(kTvmErrorNoError), "no error");
  CRT_EXPECT_STR_EQ(pytvm_crt_error_string(0x7777), "unknown error");
  CRT_EXPECT_EQ(kTvmErrorPlatformNoMemory, 0x0503);
}

void crt_suite_last_error(void) {
  CRT_RUN_TEST(test_set_and_get_round_trip);
  CRT_RUN_TEST(test_long_messages_are_truncated_and_terminated);
  CRT_RUN_TEST(test_built_messages_truncate_too);
  CRT_RUN_TEST(test_error_details_follow_the_config);
  CRT_RUN_TEST(test_error_strings_name_the_code);
}
