/*!
 * \file aot_executor_unit_test.c
 * \brief The AOT executor module over a two-input model written here (out = a * 2 + b, int32):
 *        create, info texts, set_input / run / get_output, and each refusal, called through
 *        TVMFuncCall as MinRPC calls them.
 */
#include "crt_test.h"
#include "pytvm_crt/aot_executor.h"

static const int64_t kShape[2] = {2, 3};
static int32_t g_a[6];
static int32_t g_b[6];
static int32_t g_out[6];
static int32_t g_fail_next = 0;

static int32_t run_model(void* const* inputs, void* const* outputs) {
  const int32_t* a = (const int32_t*)inputs[0];
  const int32_t* b = (const int32_t*)inputs[1];
  int32_t* out = (int32_t*)outputs[0];
  int i;
  if (g_fail_next != 0) {
    g_fail_next = 0;
    return 7;
  }
  for (i = 0; i < 6; ++i) {
    out[i] = a[i] * 2 + b[i];
  }
  return 0;
}

#define INT32_TYPE {(uint8_t)kDLInt, 32U, 1U}
static const pytvm_aot_tensor kInputs[2] = {{"a", INT32_TYPE, 2, kShape, g_a},
                                            {"b", INT32_TYPE, 2, kShape, g_b}};
static const pytvm_aot_tensor kOutputs[1] = {{"output", INT32_TYPE, 2, kShape, g_out}};
static const pytvm_aot_model kModel = {"default", 2, kInputs, 1, kOutputs, run_model};

static TVMModuleHandle g_mod;

/* Call the executor module's `name` with n arguments; the status of TVMFuncCall. */
static int call(const char* name, TVMValue* args, int* codes, int n, TVMValue* ret,
                int* ret_code) {
  TVMFunctionHandle f = NULL;
  if ((TVMModGetFunction(g_mod, name, 0, &f) != 0) || (f == NULL)) {
    return -2;
  }
  return TVMFuncCall(f, args, codes, n, ret, ret_code);
}

static int create_module(TVMValue* args, int* codes, int n) {
  TVMFunctionHandle create = NULL;
  TVMValue ret;
  int ret_code = 0;
  if ((TVMFuncGetGlobal("tvm.aot_executor.create", &create) != 0) || (create == NULL)) {
    return -2;
  }
  if (TVMFuncCall(create, args, codes, n, &ret, &ret_code) != 0) {
    return -1;
  }
  g_mod = ret.v_handle;
  return (ret_code == (int)kTVMModuleHandle) ? 0 : -3;
}

static DLTensor tensor_of(int32_t* data, const int64_t* shape, int32_t ndim) {
  DLTensor t;
  (void)memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = (uint8_t)kDLInt;
  t.dtype.bits = 32U;
  t.dtype.lanes = 1U;
  t.shape = (int64_t*)(uintptr_t)shape;
  return t;
}

static void test_create_forms(void) {
  TVMValue args[3];
  int codes[3];
  CRT_EXPECT_EQ(pytvm_aot_executor_register(&kModel), 0);
  CRT_EXPECT_EQ(create_module(args, codes, 0), 0);
  args[0].v_str = "default";
  codes[0] = kTVMStr;
  CRT_EXPECT_EQ(create_module(args, codes, 1), 0);
  args[0].v_str = "other";
  CRT_EXPECT_EQ(create_module(args, codes, 1), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: tvm.aot_executor.create: no model named");
  args[0].v_handle = g_mod;
  codes[0] = kTVMModuleHandle;
  args[1].v_device.device_type = kDLCPU;
  args[1].v_device.device_id = 0;
  codes[1] = kDLDeviceTypeCode;
  args[2].v_str = "default";
  codes[2] = kTVMStr;
  CRT_EXPECT_EQ(create_module(args, codes, 3), 0);
  args[1].v_device.device_type = 2;
  CRT_EXPECT_EQ(create_module(args, codes, 3), -1);
  CRT_EXPECT_CONTAINS(TVMGetLastError(), "device type 2");
}

static void test_counts_and_info(void) {
  TVMValue arg;
  TVMValue ret;
  int code = 0;
  int ret_code = 0;
  CRT_EXPECT_EQ(pytvm_aot_executor_register(&kModel), 0);
  CRT_EXPECT_EQ(create_module(&arg, &code, 0), 0);
  CRT_EXPECT_EQ(call("get_num_inputs", &arg, &code, 0, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(ret.v_int64, 2);
  CRT_EXPECT_EQ(call("get_num_outputs", &arg, &code, 0, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(ret.v_int64, 1);
  arg.v_str = "b";
  code = kTVMStr;
  CRT_EXPECT_EQ(call("get_input_index", &arg, &code, 1, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(ret.v_int64, 1);
  arg.v_str = "missing";
  CRT_EXPECT_EQ(call("get_input_index", &arg, &code, 1, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(ret.v_int64, -1);
  arg.v_int64 = 1;
  code = kTVMArgInt;
  CRT_EXPECT_EQ(call("get_input_info", &arg, &code, 1, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(ret_code, kTVMStr);
  CRT_EXPECT_STR_EQ(ret.v_str, "b|int32|2,3");
  CRT_EXPECT_EQ(call("get_input_name", &arg, &code, 1, &ret, &ret_code), 0);
  CRT_EXPECT_STR_EQ(ret.v_str, "b");
  arg.v_int64 = 0;
  CRT_EXPECT_EQ(call("get_output_info", &arg, &code, 1, &ret, &ret_code), 0);
  CRT_EXPECT_STR_EQ(ret.v_str, "output|int32|2,3");
  arg.v_int64 = 1;
  CRT_EXPECT_EQ(call("get_output_info", &arg, &code, 1, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "IndexError: tvm.aot_executor get_output_info");
}

static void test_set_run_get(void) {
  int32_t a[6] = {1, 2, 3, 4, 5, 6};
  int32_t b[6] = {10, 20, 30, 40, 50, 60};
  int32_t out[6] = {0, 0, 0, 0, 0, 0};
  DLTensor ta = tensor_of(a, kShape, 2);
  DLTensor tb = tensor_of(b, kShape, 2);
  DLTensor tout = tensor_of(out, kShape, 2);
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMDLTensorHandle};
  TVMValue ret;
  int ret_code = 0;
  int i;
  CRT_EXPECT_EQ(pytvm_aot_executor_register(&kModel), 0);
  CRT_EXPECT_EQ(create_module(args, codes, 0), 0);
  args[0].v_int64 = 0;
  args[1].v_handle = &ta;
  CRT_EXPECT_EQ(call("set_input", args, codes, 2, &ret, &ret_code), 0);
  args[0].v_str = "b";
  codes[0] = kTVMStr;
  args[1].v_handle = &tb;
  CRT_EXPECT_EQ(call("set_input", args, codes, 2, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(call("run", args, codes, 0, &ret, &ret_code), 0);
  args[0].v_int64 = 0;
  codes[0] = kTVMArgInt;
  args[1].v_handle = &tout;
  CRT_EXPECT_EQ(call("get_output", args, codes, 2, &ret, &ret_code), 0);
  for (i = 0; i < 6; ++i) {
    CRT_EXPECT_EQ(out[i], a[i] * 2 + b[i]);
  }
  args[0].v_int64 = 1;
  CRT_EXPECT_EQ(call("get_input", args, codes, 2, &ret, &ret_code), 0);
  CRT_EXPECT_EQ(out[5], 60);
  g_fail_next = 1;
  CRT_EXPECT_EQ(call("run", args, codes, 0, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "RuntimeError: tvm.aot_executor run: tvmgen_default_run returned 7");
}

static void test_refusals(void) {
  static const int64_t kWrongShape[2] = {3, 2};
  int32_t a[6] = {0, 0, 0, 0, 0, 0};
  DLTensor t = tensor_of(a, kWrongShape, 2);
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMDLTensorHandle};
  TVMValue ret;
  int ret_code = 0;
  CRT_EXPECT_EQ(pytvm_aot_executor_register(&kModel), 0);
  CRT_EXPECT_EQ(create_module(args, codes, 0), 0);
  args[0].v_int64 = 0;
  args[1].v_handle = &t;
  CRT_EXPECT_EQ(call("set_input", args, codes, 2, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(),
                         "ValueError: tvm.aot_executor set_input: tensor 'a' has shape [2,3], "
                         "the array given [3,2]");
  t.shape = (int64_t*)(uintptr_t)kShape;
  t.dtype.code = (uint8_t)kDLFloat;
  CRT_EXPECT_EQ(call("set_input", args, codes, 2, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(),
                         "TypeError: tvm.aot_executor set_input: tensor 'a' has dtype int32, "
                         "the array given float32");
  t.dtype.code = (uint8_t)kDLInt;
  args[0].v_int64 = 2;
  CRT_EXPECT_EQ(call("set_input", args, codes, 2, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "IndexError: tvm.aot_executor set_input: index 2");
  args[0].v_str = "c";
  codes[0] = kTVMStr;
  CRT_EXPECT_EQ(call("set_input", args, codes, 2, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "KeyError: tvm.aot_executor set_input");
  CRT_EXPECT_EQ(call("set_input", args, codes, 1, &ret, &ret_code), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "TypeError: tvm.aot_executor set_input expects");
  CRT_EXPECT_EQ(call("run", args, codes, 1, &ret, &ret_code), -1);
}

static void test_register_refuses_malformed_models(void) {
  pytvm_aot_model bad = kModel;
  bad.run = NULL;
  CRT_EXPECT_EQ(pytvm_aot_executor_register(&bad), -1);
  CRT_EXPECT_PREFIX(TVMGetLastError(), "ValueError: pytvm_aot_executor_register");
  bad = kModel;
  bad.num_inputs = PYTVM_AOT_MAX_TENSORS + 1;
  CRT_EXPECT_EQ(pytvm_aot_executor_register(&bad), -1);
  CRT_EXPECT_EQ(pytvm_aot_executor_register(NULL), -1);
}

int main(void) {
  CRT_RUN_TEST(test_create_forms);
  CRT_RUN_TEST(test_counts_and_info);
  CRT_RUN_TEST(test_set_run_get);
  CRT_RUN_TEST(test_refusals);
  CRT_RUN_TEST(test_register_refuses_malformed_models);
  return crt_test_summary();
}
