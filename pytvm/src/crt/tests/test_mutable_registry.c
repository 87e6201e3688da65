/*!
 * \file test_mutable_registry.c
 * \brief TVMMutableFuncRegistry: capacity from one block, full, exists, override, name limits.
 */
#include "crt_test.h"

static int f1(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) {
  (void)a; (void)c; (void)n; (void)r; (void)rc; (void)h;
  return 1;
}
static int f2(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) {
  (void)a; (void)c; (void)n; (void)r; (void)rc; (void)h;
  return 2;
}

#define kThreeBytes TVM_CRT_MUTABLE_FUNC_REGISTRY_BYTES(3)

/* Room for a misaligned start; the union aligns the first byte for function pointers. */
static union {
  uint8_t bytes[kThreeBytes + 16U];
  TVMBackendPackedCFunc align;
} g_block;

static uint8_t g_big_block[TVM_CRT_MUTABLE_FUNC_REGISTRY_BYTES(300)];

static void test_capacity_follows_average_name_length(void) {
  TVMMutableFuncRegistry reg;
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(reg.max_functions, 3);
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(&reg.registry), 0);
  CRT_EXPECT_EQ(reg.registry.names[0], 0);
  CRT_EXPECT_EQ(reg.registry.names[1], 0);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes - 1U),
                kTvmErrorNoError);
  CRT_EXPECT_EQ(reg.max_functions, 2);
}

static void test_misaligned_block_keeps_capacity_and_aligns_funcs(void) {
  TVMMutableFuncRegistry reg;
  size_t offset;
  for (offset = 1U; offset < 8U; offset++) {
    CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, &g_block.bytes[offset], kThreeBytes),
                  kTvmErrorNoError);
    CRT_EXPECT_EQ(reg.max_functions, 3);
    CRT_EXPECT_EQ((uintptr_t)reg.registry.funcs % sizeof(TVMBackendPackedCFunc), 0);
    CRT_EXPECT_TRUE((uintptr_t)(reg.registry.funcs + 3) <=
                    (uintptr_t)&g_block.bytes[offset + kThreeBytes]);
    CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "a", f1, 0), kTvmErrorNoError);
    CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "b", f1, 0), kTvmErrorNoError);
    CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "c", f1, 0), kTvmErrorNoError);
  }
}

static void test_capacity_is_clamped_to_the_count_byte(void) {
  TVMMutableFuncRegistry reg;
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_big_block, sizeof(g_big_block)),
                kTvmErrorNoError);
  CRT_EXPECT_EQ(reg.max_functions, 255);
}

static void test_too_small_block_is_rejected(void) {
  TVMMutableFuncRegistry reg;
  uint8_t tiny[8];
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, tiny, sizeof(tiny)), kTvmErrorBufferTooSmall);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, NULL, 100U), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(NULL, tiny, sizeof(tiny)), kTvmErrorArgumentNull);
}

static void test_set_writes_the_seed_blob_layout(void) {
  TVMMutableFuncRegistry reg;
  static const char expected[10] = {2, 'a', 'd', 'd', 0, 's', 'u', 'b', 0, 0};
  tvm_function_index_t idx = 0U;
  TVMBackendPackedCFunc f = NULL;
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "add", f1, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "sub", f2, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(memcmp(reg.registry.names, expected, sizeof(expected)), 0);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&reg.registry, "sub", &idx), kTvmErrorNoError);
  CRT_EXPECT_EQ(idx, 1);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&reg.registry, idx, &f), kTvmErrorNoError);
  CRT_EXPECT_TRUE(f == f2);
  CRT_EXPECT_TRUE(reg.registry.funcs[0] == f1);
}

static void test_full_registry_refuses_one_more(void) {
  TVMMutableFuncRegistry reg;
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f0", f1, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f1", f1, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f2", f1, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f3", f1, 0), kTvmErrorFunctionRegistryFull);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f3", f1, 1), kTvmErrorFunctionRegistryFull);
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(&reg.registry), 3);
  /* Replacing an existing name still works when full. */
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f1", f2, 1), kTvmErrorNoError);
}

static void test_long_names_exhaust_the_names_space_first(void) {
  TVMMutableFuncRegistry reg;
  char name[TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES * 2 + 1];
  (void)memset(name, 'x', sizeof(name) - 1U);
  name[sizeof(name) - 1U] = '\0';
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, name, f1, 0), kTvmErrorNoError);
  name[0] = 'y';
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, name, f1, 0), kTvmErrorFunctionRegistryFull);
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(&reg.registry), 1);
  /* What was written stays intact and terminated. */
  CRT_EXPECT_EQ(reg.registry.names[1 + sizeof(name)], 0);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "z", f1, 0), kTvmErrorNoError);
}

static void test_existing_name_needs_override(void) {
  TVMMutableFuncRegistry reg;
  TVMBackendPackedCFunc f = NULL;
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f", f1, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f", f2, 0), kTvmErrorFunctionAlreadyDefined);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&reg.registry, 0U, &f), kTvmErrorNoError);
  CRT_EXPECT_TRUE(f == f1);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f", f2, 1), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&reg.registry, 0U, &f), kTvmErrorNoError);
  CRT_EXPECT_TRUE(f == f2);
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(&reg.registry), 1);
}

static void test_name_length_limits(void) {
  TVMMutableFuncRegistry reg;
  char name[TVM_CRT_MAX_STRLEN_FUNCTION_NAME + 2];
  tvm_function_index_t idx = 0U;
  (void)memset(name, 'n', sizeof(name) - 1U);
  name[sizeof(name) - 1U] = '\0'; /* MAX + 1 characters */
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_big_block, sizeof(g_big_block)),
                kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, name, f1, 0), kTvmErrorFunctionNameTooLong);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, name, f1, 1), kTvmErrorFunctionNameTooLong);
  name[sizeof(name) - 2U] = '\0'; /* exactly MAX characters */
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, name, f1, 0), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&reg.registry, name, &idx), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "", f1, 0), kTvmErrorFunctionNameEmpty);
}

static void test_set_checks_pointers(void) {
  TVMMutableFuncRegistry reg;
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Create(&reg, g_block.bytes, kThreeBytes), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(NULL, "f", f1, 0), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, NULL, f1, 0), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMMutableFuncRegistry_Set(&reg, "f", NULL, 0), kTvmErrorArgumentNull);
}

void crt_suite_mutable_registry(void) {
  CRT_RUN_TEST(test_capacity_follows_average_name_length);
  CRT_RUN_TEST(test_misaligned_block_keeps_capacity_and_aligns_funcs);
  CRT_RUN_TEST(test_capacity_is_clamped_to_the_count_byte);
  CRT_RUN_TEST(test_too_small_block_is_rejected);
  CRT_RUN_TEST(test_set_writes_the_seed_blob_layout);
  CRT_RUN_TEST(test_full_registry_refuses_one_more);
  CRT_RUN_TEST(test_long_names_exhaust_the_names_space_first);
  CRT_RUN_TEST(test_existing_name_needs_override);
  CRT_RUN_TEST(test_name_length_limits);
  CRT_RUN_TEST(test_set_checks_pointers);
}
