/*! \file test_module_table.c \brief The module table: registration, reuse, capacity, checks. */
#include "crt_test.h"

static int nop(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) {
  (void)a; (void)c; (void)n; (void)r; (void)rc; (void)h;
  return 0;
}

static const char kNames[] = "\x01" "nop\0";
static const TVMBackendPackedCFunc kFuncs[1] = {nop};
static const TVMFuncRegistry kRegistry = {kNames, kFuncs};
static TVMModule g_modules[TVM_CRT_MAX_REGISTERED_MODULES + 1];

/* Every test module shares one const registry. */
static void fill_modules(void) {
  size_t i;
  for (i = 0U; i < (sizeof(g_modules) / sizeof(g_modules[0])); i++) {
    g_modules[i].registry = &kRegistry;
  }
}

static void test_register_gives_distinct_handles_and_reuses_them(void) {
  TVMModuleHandle a = NULL;
  TVMModuleHandle b = NULL;
  TVMModuleHandle again = NULL;
  const TVMModule* back = NULL;
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[0], &a), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[1], &b), kTvmErrorNoError);
  CRT_EXPECT_TRUE((a != NULL) && (b != NULL) && (a != b));
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[0], &again), kTvmErrorNoError);
  CRT_EXPECT_PTR_EQ(again, a);
  CRT_EXPECT_EQ(pytvm_crt_module_from_handle(b, &back), kTvmErrorNoError);
  CRT_EXPECT_PTR_EQ(back, &g_modules[1]);
  CRT_EXPECT_EQ((uintptr_t)a, 0x80000000U); /* first slot, function field 0 */
}

static void test_function_handles_name_their_module_index(void) {
  TVMModuleHandle a = NULL;
  TVMModuleHandle b = NULL;
  TVMFunctionHandle f = NULL;
  pytvm_crt_function_ref ref;
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[0], &a), kTvmErrorNoError);
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[1], &b), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMModGetFunction(b, "nop", 0, &f), 0);
  CRT_EXPECT_EQ(pytvm_crt_decode_function_handle(f, &ref), kTvmErrorNoError);
  CRT_EXPECT_EQ(ref.in_module, 1);
  CRT_EXPECT_EQ(ref.module_index, 1);
  CRT_EXPECT_EQ(ref.function_index, 0);
  CRT_EXPECT_EQ((uintptr_t)f, 0x80010001U);
}

static void test_full_table_is_reported(void) {
  TVMModuleHandle h = NULL;
  size_t i;
  for (i = 0U; i < (size_t)TVM_CRT_MAX_REGISTERED_MODULES; i++) {
    CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[i], &h), kTvmErrorNoError);
  }
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[TVM_CRT_MAX_REGISTERED_MODULES], &h),
                kTvmErrorModuleTableFull);
}

static void test_malformed_modules_are_refused(void) {
  static const TVMModule no_registry = {NULL};
  static const TVMFuncRegistry no_funcs = {kNames, NULL};
  static const TVMModule module_without_funcs = {&no_funcs};
  TVMModuleHandle h = NULL;
  CRT_EXPECT_EQ(pytvm_crt_module_register(&no_registry, &h), kTvmErrorModuleInvalid);
  CRT_EXPECT_EQ(pytvm_crt_module_register(&module_without_funcs, &h), kTvmErrorModuleInvalid);
  CRT_EXPECT_EQ(pytvm_crt_module_register(NULL, &h), kTvmErrorArgumentNull);
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[0], NULL), kTvmErrorArgumentNull);
}

static void test_reinitializing_empties_the_table(void) {
  TVMModuleHandle h = NULL;
  TVMFunctionHandle f = NULL;
  const TVMModule* back = NULL;
  CRT_EXPECT_EQ(pytvm_crt_module_register(&g_modules[0], &h), kTvmErrorNoError);
  CRT_EXPECT_EQ(TVMInitializeRuntime(), 0);
  CRT_EXPECT_EQ(pytvm_crt_module_from_handle(h, &back), kTvmErrorModuleInvalidHandle);
  CRT_EXPECT_EQ(TVMModGetFunction(h, "nop", 0, &f), -1);
  CRT_EXPECT_EQ(pytvm_crt_module_at((tvm_module_index_t)TVM_CRT_MAX_REGISTERED_MODULES, &back),
                kTvmErrorModuleInvalidHandle);
}

void crt_suite_module_table(void) {
  fill_modules();
  CRT_RUN_TEST(test_register_gives_distinct_handles_and_reuses_them);
  CRT_RUN_TEST(test_function_handles_name_their_module_index);
  CRT_RUN_TEST(test_full_table_is_reported);
  CRT_RUN_TEST(test_malformed_modules_are_refused);
  CRT_RUN_TEST(test_reinitializing_empties_the_table);
}
