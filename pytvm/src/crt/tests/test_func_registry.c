/*! \file test_func_registry.c \brief Names blob format and lookup of a const TVMFuncRegistry. */
#include "crt_test.h"

static int func_a(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) {
  (void)a; (void)c; (void)n; (void)r; (void)rc; (void)h;
  return 0;
}
static int func_b(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) {
  (void)a; (void)c; (void)n; (void)r; (void)rc; (void)h;
  return 1;
}

/* | 2 | add \0 | sub \0 | \0 |, const so it can live in flash. */
static const char kNames[] = "\x02" "add\0" "sub\0";
static const TVMBackendPackedCFunc kFuncs[2] = {func_a, func_b};
static const TVMFuncRegistry kRegistry = {kNames, kFuncs};

static void test_blob_layout_is_count_names_final_nul(void) {
  static const char expected[10] = {2, 'a', 'd', 'd', 0, 's', 'u', 'b', 0, 0};
  CRT_EXPECT_EQ(sizeof(kNames), sizeof(expected));
  CRT_EXPECT_EQ(memcmp(kNames, expected, sizeof(expected)), 0);
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(&kRegistry), 2);
}

static void test_lookup_finds_each_name_at_its_index(void) {
  tvm_function_index_t idx = 99U;
  TVMBackendPackedCFunc f = NULL;
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "add", &idx), kTvmErrorNoError);
  CRT_EXPECT_EQ(idx, 0);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&kRegistry, idx, &f), kTvmErrorNoError);
  CRT_EXPECT_TRUE(f == func_a);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "sub", &idx), kTvmErrorNoError);
  CRT_EXPECT_EQ(idx, 1);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&kRegistry, idx, &f), kTvmErrorNoError);
  CRT_EXPECT_TRUE(f == func_b);
}

static void test_lookup_matches_whole_names_only(void) {
  tvm_function_index_t idx = 0U;
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "ad", &idx), kTvmErrorFunctionNameNotFound);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "addx", &idx), kTvmErrorFunctionNameNotFound);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "", &idx), kTvmErrorFunctionNameNotFound);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "mul", &idx), kTvmErrorFunctionNameNotFound);
}

static void test_get_by_index_checks_count(void) {
  TVMBackendPackedCFunc f = NULL;
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&kRegistry, 2U, &f), kTvmErrorFunctionIndexInvalid);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&kRegistry, 0xFFFFU, &f),
                kTvmErrorFunctionIndexInvalid);
  CRT_EXPECT_TRUE(f == NULL);
}

static void test_empty_registry_finds_nothing(void) {
  static const char names[] = "";
  static const TVMFuncRegistry empty = {names, NULL};
  tvm_function_index_t idx = 0U;
  TVMBackendPackedCFunc f = NULL;
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(&empty), 0);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&empty, "add", &idx), kTvmErrorFunctionNameNotFound);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&empty, 0U, &f), kTvmErrorFunctionIndexInvalid);
}

static void test_count_bounds_the_scan(void) {
  /* The count says 1: the second name is not part of the registry. */
  static const char names[] = "\x01" "add\0" "sub\0";
  static const TVMFuncRegistry reg = {names, kFuncs};
  tvm_function_index_t idx = 0U;
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&reg, "sub", &idx), kTvmErrorFunctionNameNotFound);
}

static void test_null_arguments_are_rejected(void) {
  tvm_function_index_t idx = 0U;
  TVMBackendPackedCFunc f = NULL;
  static const TVMFuncRegistry no_names = {NULL, NULL};
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(NULL, "add", &idx), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, NULL, &idx), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&kRegistry, "add", NULL), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMFuncRegistry_Lookup(&no_names, "add", &idx), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(NULL, 0U, &f), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMFuncRegistry_GetByIndex(&kRegistry, 0U, NULL), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(TVMFuncRegistry_NumFuncs(NULL), 0);
}

void crt_suite_func_registry(void) {
  CRT_RUN_TEST(test_blob_layout_is_count_names_final_nul);
  CRT_RUN_TEST(test_lookup_finds_each_name_at_its_index);
  CRT_RUN_TEST(test_lookup_matches_whole_names_only);
  CRT_RUN_TEST(test_get_by_index_checks_count);
  CRT_RUN_TEST(test_empty_registry_finds_nothing);
  CRT_RUN_TEST(test_count_bounds_the_scan);
  CRT_RUN_TEST(test_null_arguments_are_rejected);
}
