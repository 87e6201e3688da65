/*!
 * \file aot_executor.c
 * \brief The AOT executor module (pytvm_crt/aot_executor.h): `tvm.aot_executor.create` and the
 *        functions of the module it returns, over one registered pytvm_aot_model.
 *
 * Checks of the tensors a client passes and the texts describing the model's tensors are in
 * aot_tensor.c; this file holds the model, the module and its function registry.
 */
#include <string.h>

#include "aot_executor_internal.h"
#include "pytvm_crt/crt.h"

#define CREATE_NAME "tvm.aot_executor.create"

/*! \brief The model served (NULL before pytvm_aot_executor_register). */
static const pytvm_aot_model* g_model = NULL;
/*! \brief Data pointers passed to the model's run, in the model's order. */
static void* g_input_data[PYTVM_AOT_MAX_TENSORS];
static void* g_output_data[PYTVM_AOT_MAX_TENSORS];

static int wrong_arguments(const char* where, const char* expected, int num_args) {
  pytvm_crt_text* msg = pytvm_crt_error_begin("TypeError");
  PYTVM_CRT_MSG_STR(msg, ": tvm.aot_executor ");
  PYTVM_CRT_MSG_STR(msg, where);
  PYTVM_CRT_MSG_STR(msg, " expects ");
  PYTVM_CRT_MSG_STR(msg, expected);
  PYTVM_CRT_MSG_STR(msg, ", got ");
  PYTVM_CRT_MSG_I64(msg, num_args);
  PYTVM_CRT_MSG_STR(msg, " argument(s) of other types");
  return -1;
}

static void return_int(TVMValue* ret, int* ret_code, int64_t value) {
  ret->v_int64 = value;
  *ret_code = (int)kTVMArgInt;
}

static int get_num_inputs(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                          void* resource) {
  (void)args;
  (void)codes;
  (void)resource;
  if (num_args != 0) {
    return wrong_arguments("get_num_inputs", "no arguments", num_args);
  }
  return_int(ret, ret_code, g_model->num_inputs);
  return 0;
}

static int get_num_outputs(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                           void* resource) {
  (void)args;
  (void)codes;
  (void)resource;
  if (num_args != 0) {
    return wrong_arguments("get_num_outputs", "no arguments", num_args);
  }
  return_int(ret, ret_code, g_model->num_outputs);
  return 0;
}

static int get_input_index(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                           void* resource) {
  (void)resource;
  if ((num_args != 1) || (codes[0] != (int)kTVMStr)) {
    return wrong_arguments("get_input_index", "(name: str)", num_args);
  }
  return_int(ret, ret_code, pytvm_aot_find_tensor(g_model->inputs, g_model->num_inputs,
                                                  args[0].v_str));
  return 0;
}

static int get_input_name(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                          void* resource) {
  int32_t index = -1;
  (void)resource;
  if ((num_args != 1) || (codes[0] != (int)kTVMArgInt)) {
    return wrong_arguments("get_input_name", "(index: int)", num_args);
  }
  if (pytvm_aot_tensor_index(g_model->inputs, g_model->num_inputs, &args[0], codes[0],
                             "get_input_name", &index) != 0) {
    return -1;
  }
  ret->v_str = g_model->inputs[index].name;
  *ret_code = (int)kTVMStr;
  return 0;
}

static int tensor_info(const pytvm_aot_tensor* tensors, int32_t count, const char* where,
                       TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code) {
  int32_t index = -1;
  if ((num_args != 1) || (codes[0] != (int)kTVMArgInt)) {
    return wrong_arguments(where, "(index: int)", num_args);
  }
  if (pytvm_aot_tensor_index(tensors, count, &args[0], codes[0], where, &index) != 0) {
    return -1;
  }
  ret->v_str = pytvm_aot_tensor_info(&tensors[index]);
  *ret_code = (int)kTVMStr;
  return 0;
}

static int get_input_info(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                          void* resource) {
  (void)resource;
  return tensor_info(g_model->inputs, g_model->num_inputs, "get_input_info", args, codes,
                     num_args, ret, ret_code);
}

static int get_output_info(TVMValue* args, int* codes, int num_args, TVMValue* ret,
                           int* ret_code, void* resource) {
  (void)resource;
  return tensor_info(g_model->outputs, g_model->num_outputs, "get_output_info", args, codes,
                     num_args, ret, ret_code);
}

/* (index or name, tensor) of set_input / get_input / get_output: the model tensor it names. */
static int index_and_tensor(const pytvm_aot_tensor* tensors, int32_t count, const char* where,
                            TVMValue* args, int* codes, int num_args, int32_t* out_index) {
  if ((num_args != 2) || (codes[1] != (int)kTVMDLTensorHandle) ||
      ((codes[0] != (int)kTVMArgInt) && (codes[0] != (int)kTVMStr))) {
    return wrong_arguments(where, "(index: int or name: str, tensor)", num_args);
  }
  return pytvm_aot_tensor_index(tensors, count, &args[0], codes[0], where, out_index);
}

static int set_input(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                     void* resource) {
  int32_t index = -1;
  (void)ret;
  (void)ret_code;
  (void)resource;
  if (index_and_tensor(g_model->inputs, g_model->num_inputs, "set_input", args, codes, num_args,
                       &index) != 0) {
    return -1;
  }
  return pytvm_aot_copy(&g_model->inputs[index], (DLTensor*)args[1].v_handle, 1, "set_input");
}

static int get_input(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                     void* resource) {
  int32_t index = -1;
  (void)ret;
  (void)ret_code;
  (void)resource;
  if (index_and_tensor(g_model->inputs, g_model->num_inputs, "get_input", args, codes, num_args,
                       &index) != 0) {
    return -1;
  }
  return pytvm_aot_copy(&g_model->inputs[index], (DLTensor*)args[1].v_handle, 0, "get_input");
}

static int get_output(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                      void* resource) {
  int32_t index = -1;
  (void)ret;
  (void)ret_code;
  (void)resource;
  if (index_and_tensor(g_model->outputs, g_model->num_outputs, "get_output", args, codes,
                       num_args, &index) != 0) {
    return -1;
  }
  return pytvm_aot_copy(&g_model->outputs[index], (DLTensor*)args[1].v_handle, 0, "get_output");
}

static int run(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
               void* resource) {
  int32_t status;
  (void)args;
  (void)codes;
  (void)ret;
  (void)ret_code;
  (void)resource;
  if (num_args != 0) {
    return wrong_arguments("run", "no arguments", num_args);
  }
  status = g_model->run(g_input_data, g_output_data);
  if (status != 0) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", "tvm.aot_executor run"));
    PYTVM_CRT_MSG_STR(msg, ": tvmgen_");
    PYTVM_CRT_MSG_STR(msg, g_model->mod_name);
    PYTVM_CRT_MSG_STR(msg, "_run returned ");
    PYTVM_CRT_MSG_I64(msg, status);
    return -1;
  }
  return 0;
}

/* The module's registry: count byte, names, final NUL (pytvm_crt/func_registry.h). */
static const char kNames[] =
    "\x0a"
    "get_num_inputs\0get_num_outputs\0get_input_index\0get_input_name\0get_input_info\0"
    "get_output_info\0set_input\0get_input\0get_output\0run\0";
static const TVMBackendPackedCFunc kFuncs[] = {
    get_num_inputs, get_num_outputs, get_input_index, get_input_name, get_input_info,
    get_output_info, set_input,      get_input,       get_output,     run};
static const TVMFuncRegistry kRegistry = {kNames, kFuncs};
static const TVMModule kModule = {&kRegistry};

/* `tvm.aot_executor.create([module, device,] [mod_name])`: the executor module. */
static int create(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                  void* resource) {
  TVMModuleHandle handle = NULL;
  tvm_crt_error_t err;
  int name_at = num_args - 1;
  (void)resource;
  if ((num_args > 3) || (num_args == 2) ||
      ((num_args == 3) &&
       ((codes[0] != (int)kTVMModuleHandle) || (codes[1] != (int)kDLDeviceTypeCode))) ||
      ((num_args >= 1) && (codes[name_at] != (int)kTVMStr))) {
    return wrong_arguments("create", "(module, device, mod_name: str), (mod_name: str) or ()",
                           num_args);
  }
  if ((num_args == 3) && (args[1].v_device.device_type != (int32_t)kDLCPU)) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", CREATE_NAME));
    PYTVM_CRT_MSG_STR(msg, ": the model runs on the CPU (device type 1), not device type ");
    PYTVM_CRT_MSG_I64(msg, args[1].v_device.device_type);
    return -1;
  }
  if ((num_args >= 1) && (strcmp(args[name_at].v_str, g_model->mod_name) != 0)) {
    pytvm_crt_text* msg = pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", CREATE_NAME));
    PYTVM_CRT_MSG_STR(msg, ": no model named '");
    PYTVM_CRT_MSG_STRN(msg, args[name_at].v_str, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "'; this program serves '");
    PYTVM_CRT_MSG_STR(msg, g_model->mod_name);
    PYTVM_CRT_MSG_STR(msg, "'");
    return -1;
  }
  err = pytvm_crt_module_register(&kModule, &handle);
  if (err != kTvmErrorNoError) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", CREATE_NAME));
    PYTVM_CRT_MSG_STR(msg, ": cannot register the executor module: ");
    PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
    return -1;
  }
  ret->v_handle = handle;
  *ret_code = (int)kTVMModuleHandle;
  return 0;
}

static int bad_model(const char* what) {
  pytvm_crt_text* msg = pytvm_crt_error_begin(
      PYTVM_CRT_ERROR_HEAD("ValueError", "pytvm_aot_executor_register"));
  PYTVM_CRT_MSG_STR(msg, ": ");
  PYTVM_CRT_MSG_STR(msg, what);
  return -1;
}

static int tensors_are_well_formed(const pytvm_aot_tensor* tensors, int32_t count) {
  int32_t i;
  for (i = 0; i < count; ++i) {
    if ((tensors[i].name == NULL) || (tensors[i].data == NULL) || (tensors[i].ndim < 0) ||
        (tensors[i].ndim > TVM_CRT_MAX_NDIM) ||
        ((tensors[i].ndim > 0) && (tensors[i].shape == NULL))) {
      return 0;
    }
  }
  return 1;
}

int pytvm_aot_executor_register(const pytvm_aot_model* model) {
  int32_t i;
  if ((model == NULL) || (model->mod_name == NULL) || (model->run == NULL) ||
      ((model->num_inputs > 0) && (model->inputs == NULL)) ||
      ((model->num_outputs > 0) && (model->outputs == NULL))) {
    return bad_model("the model, its mod_name, run and tensor arrays must not be NULL");
  }
  if ((model->num_inputs < 0) || (model->num_outputs < 0) ||
      (model->num_inputs > PYTVM_AOT_MAX_TENSORS) ||
      (model->num_outputs > PYTVM_AOT_MAX_TENSORS)) {
    return bad_model("more inputs or outputs than PYTVM_AOT_MAX_TENSORS (or a negative count)");
  }
  if ((tensors_are_well_formed(model->inputs, model->num_inputs) == 0) ||
      (tensors_are_well_formed(model->outputs, model->num_outputs) == 0)) {
    return bad_model("every tensor needs a name, a buffer and 0..TVM_CRT_MAX_NDIM dimensions");
  }
  for (i = 0; i < model->num_inputs; ++i) {
    g_input_data[i] = model->inputs[i].data;
  }
  for (i = 0; i < model->num_outputs; ++i) {
    g_output_data[i] = model->outputs[i].data;
  }
  g_model = model;
  return pytvm_crt_func_register_global(CREATE_NAME, create, 1);
}
