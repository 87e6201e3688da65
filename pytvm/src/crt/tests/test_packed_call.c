/*!
 * \file test_packed_call.c
 * \brief TVMFuncGetGlobal / TVMFuncCall / TVMModGetFunction: resource_handle, return codes,
 *        runtime.system_lib, aliases and handle checks.
 */
#include "crt_test.h"

static TVMModuleHandle system_lib(void) {
  TVMFunctionHandle f = NULL;
  TVMValue ret;
  int code = -1;
  ret.v_handle = NULL;
  if ((TVMFuncGetGlobal("runtime.SystemLib", &f) != 0) || (f == NULL)) {
    return NULL;
  }
  if ((TVMFuncCall(f, NULL, NULL, 0, &ret, &code) != 0) || (code != kTVMModuleHandle)) {
    return NULL;
  }
  return ret.v_handle;
}

static void test_global_function_gets_null_resource_handle(void) {
  TVMFunctionHandle f = NULL;
  TVMValue ret;
  int code = -1;
  ret.v_handle = &ret;
  CRT_EXPECT_EQ(pytvm_crt_func_register_global("test.echo", crt_test_echo_resource, 0), 0);
  CRT_EXPECT_EQ(TVMFuncGetGlobal("test.echo", &f), 0);
  CRT_EXPECT_TRUE(f != NULL);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, 0, &ret, &code), 0);
  CRT_EXPECT_EQ(code, kTVMOpaqueHandle);
  CRT_EXPECT_PTR_EQ(ret.v_handle, NULL);
}

static void test_module_function_gets_its_module_as_resource_handle(void) {
  TVMModuleHandle mod = system_lib();
  TVMFunctionHandle f = NULL;
  TVMValue ret;
  int code = -1;
  CRT_EXPECT_TRUE(mod != NULL);
  CRT_EXPECT_EQ(TVMModGetFunction(mod, "echo_resource", 0, &f), 0);
  CRT_EXPECT_TRUE(f != NULL);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, 0, &ret, &code), 0);
  CRT_EXPECT_EQ(code, kTVMOpaqueHandle);
  CRT_EXPECT_PTR_EQ(ret.v_handle, crt_test_system_lib_module());
}

static void test_arguments_and_return_value_pass_through(void) {
  TVMModuleHandle mod = system_lib();
  TVMFunctionHandle f = NULL;
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  TVMValue ret;
  int code = -1;
  args[0].v_int64 = 40;
  args[1].v_int64 = 2;
  CRT_EXPECT_EQ(TVMModGetFunction(mod, "add", 1, &f), 0);
  CRT_EXPECT_EQ(TVMFuncCall(f, args, codes, 2, &ret, &code), 0);
  CRT_EXPECT_EQ(code, kTVMArgInt);
  CRT_EXPECT_EQ(ret.v_int64, 42);
  /* NULL return slots are allowed: the call still happens. */
  CRT_EXPECT_EQ(TVMFuncCall(f, args, codes, 2, NULL, NULL), 0);
}

static void test_failing_function_code_and_message_propagate(void) {
  TVMFunctionHandle f = NULL;
  TVMValue ret;
  int code = -1;
  CRT_EXPECT_EQ(TVMModGetFunction(system_lib(), "fail", 0, &f), 0);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, 0, &ret, &code), -2);
  CRT_EXPECT_STR_EQ(TVMGetLastError(), "ValueError: fail was called");
}

static void test_system_lib_entry_point_runs_once(void) {
  int before = g_crt_test_syslib_entry_calls;
  TVMModuleHandle a = system_lib();
  TVMModuleHandle b = system_lib();
  const TVMModule* mod = NULL;
  CRT_EXPECT_TRUE(a != NULL);
  CRT_EXPECT_PTR_EQ(a, b);
  CRT_EXPECT_EQ(g_crt_test_syslib_entry_calls, before + 1);
  CRT_EXPECT_EQ(pytvm_crt_module_from_handle(a, &mod), kTvmErrorNoError);
  CRT_EXPECT_PTR_EQ(mod, crt_test_system_lib_module());
  CRT_EXPECT_EQ(TVMModFree(a), 0);
}

static void test_system_lib_takes_no_arguments(void) {
  TVMFunctionHandle f = NULL;
  TVMValue arg;
  int code = kTVMArgInt;
  arg.v_int64 = 1;
  CRT_EXPECT_EQ(TVMFuncGetGlobal("runtime.SystemLib", &f), 0);
  CRT_EXPECT_TRUE(TVMFuncCall(f, &arg, &code, 1, NULL, NULL) != 0);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "TypeError: ");
}

static void test_missing_names_give_null_and_success(void) {
  TVMFunctionHandle f = (TVMFunctionHandle)&f;
  CRT_EXPECT_EQ(TVMFuncGetGlobal("no.such.function", &f), 0);
  CRT_EXPECT_PTR_EQ(f, NULL);
  f = (TVMFunctionHandle)&f;
  CRT_EXPECT_EQ(TVMModGetFunction(system_lib(), "nope", 0, &f), 0);
  CRT_EXPECT_PTR_EQ(f, NULL);
}

static void test_bad_handles_and_arguments_fail_with_a_message(void) {
  TVMFunctionHandle f = NULL;
  TVMValue ret;
  int code = 0;
  CRT_EXPECT_EQ(TVMFuncCall(NULL, NULL, NULL, 0, &ret, &code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: invalid function handle");
  /* Module 3 is not registered; global index 200 does not exist. */
  CRT_EXPECT_EQ(TVMFuncCall((TVMFunctionHandle)(uintptr_t)0x80030001U, NULL, NULL, 0, &ret,
                            &code), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "not registered");
  CRT_EXPECT_EQ(TVMFuncCall((TVMFunctionHandle)(uintptr_t)201U, NULL, NULL, 0, &ret, &code), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "no function at index 200");
  CRT_EXPECT_EQ(TVMFuncGetGlobal("runtime.SystemLib", &f), 0);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, -1, &ret, &code), -1);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, 2, &ret, &code), -1);
  CRT_EXPECT_EQ(TVMFuncGetGlobal(NULL, &f), -1);
  CRT_EXPECT_EQ(TVMFuncGetGlobal("x", NULL), -1);
  CRT_EXPECT_EQ(TVMModGetFunction((TVMModuleHandle)(uintptr_t)0x80050000U, "add", 0, &f), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: TVMModGetFunction: invalid module handle");
  CRT_EXPECT_EQ(TVMModGetFunction(system_lib(), NULL, 0, &f), -1);
  CRT_EXPECT_EQ(TVMModFree(NULL), -1);
}

static void test_func_free_and_retain_are_no_ops(void) {
  TVMFunctionHandle f = NULL;
  CRT_EXPECT_EQ(TVMFuncGetGlobal("runtime.SystemLib", &f), 0);
  CRT_EXPECT_EQ(TVMFuncRetain(f), 0);
  CRT_EXPECT_EQ(TVMFuncFree(f), 0);
  CRT_EXPECT_EQ(TVMFuncFree(f), 0);
  CRT_EXPECT_EQ(TVMFuncFree(NULL), 0);
  CRT_EXPECT_EQ(TVMFuncFree((TVMFunctionHandle)(uintptr_t)0x80000000U), -1);
  CRT_EXPECT_EQ(TVMFuncRetain((TVMFunctionHandle)(uintptr_t)0x80000000U), -1);
}

static void test_register_global_alias_and_override(void) {
  TVMFunctionHandle echo = NULL;
  TVMFunctionHandle alias = NULL;
  TVMFunctionHandle mod_func = NULL;
  TVMValue ret;
  int code = 0;
  CRT_EXPECT_EQ(pytvm_crt_func_register_global("test.echo", crt_test_echo_resource, 0), 0);
  CRT_EXPECT_EQ(TVMFuncGetGlobal("test.echo", &echo), 0);
  CRT_EXPECT_EQ(TVMFuncRegisterGlobal("test.alias", echo, 0), 0);
  CRT_EXPECT_EQ(TVMFuncGetGlobal("test.alias", &alias), 0);
  CRT_EXPECT_TRUE((alias != NULL) && (alias != echo));
  CRT_EXPECT_EQ(TVMFuncCall(alias, NULL, NULL, 0, &ret, &code), 0);
  CRT_EXPECT_PTR_EQ(ret.v_handle, NULL);
  CRT_EXPECT_EQ(TVMFuncRegisterGlobal("test.alias", echo, 0), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "KeyError: global function \"test.alias\"");
  CRT_EXPECT_EQ(TVMFuncRegisterGlobal("test.alias", echo, 1), 0);
  /* Module functions keep their module: they cannot become globals. */
  CRT_EXPECT_EQ(TVMModGetFunction(system_lib(), "add", 0, &mod_func), 0);
  CRT_EXPECT_EQ(TVMFuncRegisterGlobal("test.add", mod_func, 0), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "TypeError: ");
  CRT_EXPECT_EQ(TVMFuncRegisterGlobal("test.bad", NULL, 0), -1);
  CRT_EXPECT_EQ(TVMFuncRegisterGlobal("test.bad", (TVMFunctionHandle)(uintptr_t)0x00000050U, 0),
                -1);
  CRT_EXPECT_EQ(pytvm_crt_func_register_global(NULL, crt_test_echo_resource, 0), -1);
  CRT_EXPECT_EQ(pytvm_crt_func_register_global("test.null", NULL, 0), -1);
}

static void test_global_registry_full_is_reported(void) {
  char name[16];
  int i;
  int registered = 0;
  for (i = 0; i < 300; i++) {
    (void)snprintf(name, sizeof(name), "g%d", i);
    if (pytvm_crt_func_register_global(name, crt_test_echo_resource, 0) != 0) {
      break;
    }
    registered++;
  }
  /* runtime.SystemLib and tvm.rpc.server.ModuleGetFunction take two slots. */
  CRT_EXPECT_EQ(registered, TVM_CRT_MAX_REGISTERED_FUNCTIONS - 2);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "MemoryError: global function registry full");
}

static void test_backend_get_func_from_env_prefers_the_module(void) {
  TVMFunctionHandle f = NULL;
  TVMFunctionHandle g = NULL;
  TVMValue ret;
  int code = 0;
  CRT_EXPECT_TRUE(system_lib() != NULL);
  CRT_EXPECT_EQ(pytvm_crt_func_register_global("echo_resource", crt_test_echo_resource, 0), 0);
  CRT_EXPECT_EQ(TVMBackendGetFuncFromEnv((void*)(uintptr_t)crt_test_system_lib_module(),
                                         "echo_resource", &f), 0);
  CRT_EXPECT_EQ(TVMFuncCall(f, NULL, NULL, 0, &ret, &code), 0);
  CRT_EXPECT_PTR_EQ(ret.v_handle, crt_test_system_lib_module());
  CRT_EXPECT_EQ(TVMBackendGetFuncFromEnv(NULL, "echo_resource", &g), 0);
  CRT_EXPECT_EQ(TVMFuncCall(g, NULL, NULL, 0, &ret, &code), 0);
  CRT_EXPECT_PTR_EQ(ret.v_handle, NULL);
  CRT_EXPECT_EQ(TVMBackendGetFuncFromEnv(NULL, "missing", &g), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "AttributeError: function \"missing\"");
  CRT_EXPECT_PTR_EQ(g, NULL);
}

static int g_lambda_calls = 0;
static int lambda(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  g_lambda_calls++;
  *(int*)cdata = (task_id == 0 && penv->num_task == 1) ? 7 : -7;
  return TVMBackendParallelBarrier(task_id, penv);
}

static void test_parallel_launch_runs_one_task_inline(void) {
  int out = 0;
  g_lambda_calls = 0;
  CRT_EXPECT_EQ(TVMBackendParallelLaunch(lambda, &out, 8), 0);
  CRT_EXPECT_EQ(g_lambda_calls, 1);
  CRT_EXPECT_EQ(out, 7);
  CRT_EXPECT_EQ(TVMBackendParallelLaunch(NULL, &out, 1), -1);
}

void crt_suite_packed_call(void) {
  CRT_RUN_TEST(test_global_function_gets_null_resource_handle);
  CRT_RUN_TEST(test_module_function_gets_its_module_as_resource_handle);
  CRT_RUN_TEST(test_arguments_and_return_value_pass_through);
  CRT_RUN_TEST(test_failing_function_code_and_message_propagate);
  CRT_RUN_TEST(test_system_lib_entry_point_runs_once);
  CRT_RUN_TEST(test_system_lib_takes_no_arguments);
  CRT_RUN_TEST(test_missing_names_give_null_and_success);
  CRT_RUN_TEST(test_bad_handles_and_arguments_fail_with_a_message);
  CRT_RUN_TEST(test_func_free_and_retain_are_no_ops);
  CRT_RUN_TEST(test_register_global_alias_and_override);
  CRT_RUN_TEST(test_global_registry_full_is_reported);
  CRT_RUN_TEST(test_backend_get_func_from_env_prefers_the_module);
  CRT_RUN_TEST(test_parallel_launch_runs_one_task_inline);
}
