/*! \file test_func_handle.c \brief Bit packing of function and module handles. */
#include "crt_test.h"

static TVMFunctionHandle raw(uint32_t value) { return (TVMFunctionHandle)(uintptr_t)value; }

static void test_global_function_zero_is_not_null(void) {
  pytvm_crt_function_ref ref = {0U, 0U, 0U};
  pytvm_crt_function_ref back = {9U, 9U, 9U};
  TVMFunctionHandle h = NULL;
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, &h), kTvmErrorNoError);
  CRT_EXPECT_EQ((uintptr_t)h, 0x00000001U);
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(h, &back), kTvmErrorNoError);
  CRT_EXPECT_EQ(back.in_module, 0);
  CRT_EXPECT_EQ(back.module_index, 0);
  CRT_EXPECT_EQ(back.function_index, 0);
}

static void test_module_function_sets_bit_31_and_module_index(void) {
  pytvm_crt_function_ref ref = {1U, 3U, 5U};
  pytvm_crt_function_ref back = {0U, 0U, 0U};
  TVMFunctionHandle h = NULL;
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, &h), kTvmErrorNoError);
  CRT_EXPECT_EQ((uintptr_t)h, 0x80030006U);
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(h, &back), kTvmErrorNoError);
  CRT_EXPECT_EQ(back.in_module, 1);
  CRT_EXPECT_EQ(back.module_index, 3);
  CRT_EXPECT_EQ(back.function_index, 5);
}

static void test_field_limits(void) {
  pytvm_crt_function_ref ref = {1U, 0x7FFFU, 0xFFFEU};
  TVMFunctionHandle h = NULL;
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, &h), kTvmErrorNoError);
  CRT_EXPECT_EQ((uintptr_t)h, 0xFFFFFFFFU);
  ref.function_index = 0xFFFFU;
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, &h), kTvmErrorArgumentOutOfRange);
  ref.function_index = 0U;
  ref.module_index = 0x8000U;
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, &h), kTvmErrorArgumentOutOfRange);
  ref.in_module = 0U;
  ref.module_index = 1U; /* globals have no module */
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, &h), kTvmErrorArgumentOutOfRange);
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(NULL, &h), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(pytvm_crt_encode_function_handle(&ref, NULL), kTvmErrorArgumentNull);
}

static void test_malformed_function_handles_are_rejected(void) {
  pytvm_crt_function_ref back;
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(NULL, &back), kTvmErrorFunctionCallInvalidHandle);
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(raw(0x80000000U), &back),
                kTvmErrorFunctionCallInvalidHandle);
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(raw(0x00010001U), &back),
                kTvmErrorFunctionCallInvalidHandle);
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(raw(0x00000001U), NULL), kTvmErrorArgumentNull);
#if UINTPTR_MAX > 0xFFFFFFFFU
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle((TVMFunctionHandle)(((uintptr_t)1U << 32) | 1U), &back),
                kTvmErrorFunctionCallInvalidHandle);
#endif
}

static void test_module_handles(void) {
  TVMModuleHandle h = NULL;
  tvm_module_index_t index = 99U;
  CRT_EXPECT_EQ(pytvm_crt_encode_module_handle(2U, &h), kTvmErrorNoError);
  CRT_EXPECT_EQ((uintptr_t)h, 0x80020000U);
  CRT_EXPECT_EQ(pytvm_crt_decode_module_handle(h, &index), kTvmErrorNoError);
  CRT_EXPECT_EQ(index, 2);
  CRT_EXPECT_EQ(pytvm_crt_encode_module_handle(0U, &h), kTvmErrorNoError);
  CRT_EXPECT_TRUE(h != NULL);
  CRT_EXPECT_EQ(pytvm_crt_encode_module_handle(0x8000U, &h), kTvmErrorArgumentOutOfRange);
  /* A function handle is not a module handle, and neither is NULL. */
  CRT_EXPECT_EQ(pytvm_crt_decode_module_handle(raw(0x80020001U), &index), kTvmErrorModuleInvalidHandle);
  CRT_EXPECT_EQ(pytvm_crt_decode_module_handle(NULL, &index), kTvmErrorModuleInvalidHandle);
  CRT_EXPECT_EQ(pytvm_crt_decode_module_handle(raw(0x00020000U), &index), kTvmErrorModuleInvalidHandle);
}

void crt_suite_func_handle(void) {
  CRT_RUN_TEST(test_global_function_zero_is_not_null);
  CRT_RUN_TEST(test_module_function_sets_bit_31_and_module_index);
  CRT_RUN_TEST(test_field_limits);
  CRT_RUN_TEST(test_malformed_function_handles_are_rejected);
  CRT_RUN_TEST(test_module_handles);
}
