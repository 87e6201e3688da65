/*! \file module_table.c \brief The module table: registered modules by index. */
#include "crt_internal.h"
#include "pytvm_crt/module.h"

static const TVMModule* g_modules[TVM_CRT_MAX_REGISTERED_MODULES];

void pytvm_crt_module_table_reset(void) {
  size_t i;
  for (i = 0U; i < (size_t)TVM_CRT_MAX_REGISTERED_MODULES; i++) {
    g_modules[i] = NULL;
  }
}

static int module_is_well_formed(const TVMModule* mod) {
  if ((mod->registry == NULL) || (mod->registry->names == NULL)) {
    return 0;
  }
  if ((TVMFuncRegistry_NumFuncs(mod->registry) > 0U) && (mod->registry->funcs == NULL)) {
    return 0;
  }
  return 1;
}

tvm_crt_error_t pytvm_crt_module_register(const TVMModule* mod, TVMModuleHandle* out_handle) {
  size_t i;
  size_t free_slot = (size_t)TVM_CRT_MAX_REGISTERED_MODULES;
  if ((mod == NULL) || (out_handle == NULL)) {
    return kTvmErrorArgumentNull;
  }
  if (module_is_well_formed(mod) == 0) {
    return kTvmErrorModuleInvalid;
  }
  for (i = 0U; i < (size_t)TVM_CRT_MAX_REGISTERED_MODULES; i++) {
    if (g_modules[i] == mod) {
      return pytvm_crt_encode_module_handle((tvm_module_index_t)i, out_handle);
    }
    if ((g_modules[i] == NULL) && (free_slot == (size_t)TVM_CRT_MAX_REGISTERED_MODULES)) {
      free_slot = i;
    }
  }
  if (free_slot == (size_t)TVM_CRT_MAX_REGISTERED_MODULES) {
    return kTvmErrorModuleTableFull;
  }
  g_modules[free_slot] = mod;
  return pytvm_crt_encode_module_handle((tvm_module_index_t)free_slot, out_handle);
}

tvm_crt_error_t pytvm_crt_module_at(tvm_module_index_t index, const TVMModule** out_mod) {
  if (out_mod == NULL) {
    return kTvmErrorArgumentNull;
  }
  if (((size_t)index >= (size_t)TVM_CRT_MAX_REGISTERED_MODULES) || (g_modules[index] == NULL)) {
    return kTvmErrorModuleInvalidHandle;
  }
  *out_mod = g_modules[index];
  return kTvmErrorNoError;
}

tvm_crt_error_t pytvm_crt_module_from_handle(TVMModuleHandle handle, const TVMModule** out_mod) {
  tvm_module_index_t index;
  tvm_crt_error_t err;
  if (out_mod == NULL) {
    return kTvmErrorArgumentNull;
  }
  err = pytvm_crt_decode_module_handle(handle, &index);
  if (err != kTvmErrorNoError) {
    return err;
  }
  return pytvm_crt_module_at(index, out_mod);
}
