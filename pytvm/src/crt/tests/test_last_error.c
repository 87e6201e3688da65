/*! \file test_last_error.c \brief Last-error buffer: copy, NULL, truncation, formatting. */
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

static void test_formatted_messages_truncate_too(void) {
  static char word[TVM_CRT_MAX_ERROR_MESSAGE_BYTES * 2];
  (void)memset(word, 'w', sizeof(word) - 1U);
  word[sizeof(word) - 1U] = '\0';
  TVMCrtSetLastErrorf("KeyError: %s %d", "key", 42);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "KeyError: key 42");
  TVMCrtSetLastErrorf("ValueError: %s", word);
  CRT_EXPECT_EQ(strlen(TVMGetLastError()), TVM_CRT_MAX_ERROR_MESSAGE_BYTES - 1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: www");
}

static void test_error_strings_name_the_code(void) {
  CRT_EXPECT_STR_EQ(TVMCrtErrorString(kTvmErrorFunctionRegistryFull), "function registry full");
  CRT_EXPECT_STR_EQ(TVMCrtErrorString(kTvmErrorNoError), "no error");
  CRT_EXPECT_STR_EQ(TVMCrtErrorString(0x7777), "unknown error");
  CRT_EXPECT_EQ(kTvmErrorPlatformNoMemory, 0x0503);
}

void CrtSuiteLastError(void) {
  CRT_RUN_TEST(test_set_and_get_round_trip);
  CRT_RUN_TEST(test_long_messages_are_truncated_and_terminated);
  CRT_RUN_TEST(test_formatted_messages_truncate_too);
  CRT_RUN_TEST(test_error_strings_name_the_code);
}
