/*!
 * \file test_system_lib.c
 * \brief The unit tests' system lib: a const registry in the seed-001 layout, and
 *        TVMSystemLibEntryPoint counting its calls.
 */
#include "crt_test.h"

int g_crt_test_syslib_entry_calls = 0;

int crt_test_echo_resource(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                        void* resource_handle) {
  (void)args;
  (void)codes;
  (void)num_args;
  ret->v_handle = resource_handle;
  *ret_code = kTVMOpaqueHandle;
  return 0;
}

static int add(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
               void* resource_handle) {
  (void)resource_handle;
  if ((num_args != 2) || (codes[0] != kTVMArgInt) || (codes[1] != kTVMArgInt)) {
    TVMAPISetLastError("TypeError: add takes two ints");
    return -1;
  }
  ret->v_int64 = args[0].v_int64 + args[1].v_int64;
  *ret_code = kTVMArgInt;
  return 0;
}

static int fail(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                void* resource_handle) {
  (void)args;
  (void)codes;
  (void)num_args;
  (void)ret;
  (void)ret_code;
  (void)resource_handle;
  TVMAPISetLastError("ValueError: fail was called");
  return -2;
}

static const char kNames[] = "\x03" "echo_resource\0" "add\0" "fail\0";
static const TVMBackendPackedCFunc kFuncs[3] = {crt_test_echo_resource, add, fail};
static const TVMFuncRegistry kRegistry = {kNames, kFuncs};
static const TVMModule kModule = {&kRegistry};

const TVMModule* crt_test_system_lib_module(void) { return &kModule; }

const TVMModule* TVMSystemLibEntryPoint(void) {
  g_crt_test_syslib_entry_calls++;
  return &kModule;
}
