/*!
 * \file pytvm_crt/module.h
 * \brief CRT modules (a struct whose first member is a TVMModule), the module table, and the
 *        system-lib entry point.
 */
#ifndef PYTVM_CRT_MODULE_H_
#define PYTVM_CRT_MODULE_H_

#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/func_handle.h"
#include "pytvm_crt/func_registry.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Module container: its functions are found through its (usually const) registry. */
typedef struct TVMModule {
  /*! \brief The function registry associated with this module. */
  const TVMFuncRegistry* registry;
} TVMModule;

/*!
 * \brief Entry point of the system lib: returns its module (which must outlive the runtime).
 *
 * Not defined by this library: generated code for a system lib defines it (or link
 * platform/empty_system_lib.c). Called once, on the first call of `runtime.SystemLib`.
 */
const TVMModule* TVMSystemLibEntryPoint(void);

/*!
 * \brief Put a module into the module table (the same module twice gives the same handle).
 *
 * The module and its registry are borrowed and must stay valid until TVMInitializeRuntime runs
 * again. Functions of the module are called with resource_handle = the module pointer.
 * \return kTvmErrorNoError; kTvmErrorModuleTableFull; kTvmErrorModuleInvalid when the module
 *         has no registry or names blob (or no funcs while its count is non-zero);
 *         kTvmErrorArgumentNull.
 */
tvm_crt_error_t pytvm_crt_module_register(const TVMModule* mod, TVMModuleHandle* out_handle);

/*!
 * \brief The module behind a handle.
 * \return kTvmErrorNoError; kTvmErrorModuleInvalidHandle when the handle is malformed or names an
 *         empty slot; kTvmErrorArgumentNull.
 */
tvm_crt_error_t pytvm_crt_module_from_handle(TVMModuleHandle handle, const TVMModule** out_mod);

/*!
 * \brief The module at a table index.
 * \return kTvmErrorNoError; kTvmErrorModuleInvalidHandle for an empty or out-of-range slot.
 */
tvm_crt_error_t pytvm_crt_module_at(tvm_module_index_t index, const TVMModule** out_mod);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_MODULE_H_ */
