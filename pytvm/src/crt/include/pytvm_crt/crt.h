/*!
 * \file pytvm_crt/crt.h
 * \brief The pytvm C runtime: one include for the TVM C API (with PYTVM_CRT defined) and every
 *        CRT header, plus the runtime's life cycle and function-call entry points.
 *
 * TVM C API calls (TVMFuncCall, TVMFuncGetGlobal, ...) return 0 on success and -1 on failure,
 * with the message in TVMGetLastError(). CRT-specific calls return tvm_crt_error_t codes.
 * The runtime is single-threaded: the integrator serialises every call into it. It never calls
 * malloc; all memory comes from the static pool of pytvm_crt/page_allocator.h.
 */
#ifndef PYTVM_CRT_CRT_H_
#define PYTVM_CRT_CRT_H_

#include "pytvm_crt/tvm_c_api.h"

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/device_api.h"
#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/func_handle.h"
#include "pytvm_crt/func_registry.h"
#include "pytvm_crt/last_error.h"
#include "pytvm_crt/module.h"
#include "pytvm_crt/ndarray.h"
#include "pytvm_crt/page_allocator.h"
#include "pytvm_crt/platform.h"
#include "pytvm_crt/workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief Initialize internal runtime components; call before any other runtime function.
 *
 * Resets the page allocator, module table, device API table, global function registry and
 * last error, reserves the workspace stack, registers the CPU device API and the global
 * `runtime.SystemLib`. Calling it again resets the runtime: every handle and allocation made
 * before becomes invalid.
 * \return 0, or -1 after TVMAPISetLastError.
 */
int TVMInitializeRuntime(void);

/*!
 * \brief Register a C function as a global function (called with resource_handle NULL).
 * \return 0, or -1 after TVMAPISetLastError (exists and override == 0, registry full, name too
 *         long or empty, NULL pointer, runtime not initialized).
 */
int pytvm_crt_func_register_global(const char* name, TVMBackendPackedCFunc func, int override);

/*!
 * \brief Register `runtime.RPCTimeEvaluator` (common/time_evaluator.c), the timing loop of
 *        `module.time_evaluator(...)`, for a program whose platform has a timer; call it after
 *        TVMInitializeRuntime (which forgets it). Uses two entries of the global registry.
 * \return 0, or -1 after TVMAPISetLastError.
 */
int pytvm_crt_register_time_evaluator(void);

/*!
 * \brief Free a module handle: a no-op for a valid handle (modules are static).
 * \return 0, or -1 for an invalid handle.
 */
int TVMModFree(TVMModuleHandle mod);

/*
 * From pytvm/c_runtime_api.h, as implemented here:
 *  - TVMFuncGetGlobal(name, out): 0 with *out = NULL when name is not registered.
 *  - TVMFuncRegisterGlobal(name, f, override): f must be a global function handle of this
 *    runtime; name becomes another name for the same C function. Module function handles are
 *    refused (globals are called with resource_handle NULL); register the C function with
 *    pytvm_crt_func_register_global instead.
 *  - TVMFuncCall(f, ...): calls the TVMBackendPackedCFunc with resource_handle = the module
 *    (TVMModule*) for a module function, NULL for a global function; returns the function's
 *    own non-zero code on failure. *ret_type_code is kTVMNullptr unless the function sets it.
 *  - TVMFuncFree(f), TVMFuncRetain(f): no-ops (0) for NULL and valid handles (static tables).
 *  - TVMModGetFunction(mod, name, query_imports, out): 0 with *out = NULL when not found;
 *    query_imports is ignored (CRT modules have no imports).
 *  - TVMFuncCreateFromCFunc is not provided (no closures without dynamic allocation).
 * From pytvm/c_backend_api.h:
 *  - TVMBackendGetFuncFromEnv(mod_node, name, out): mod_node's own functions when it is a
 *    registered TVMModule*, then the globals; -1 when not found.
 *  - TVMBackendAllocWorkspace / TVMBackendFreeWorkspace: see pytvm_crt/workspace.h.
 *  - TVMBackendParallelLaunch runs flambda inline as task 0 of 1; TVMBackendParallelBarrier
 *    returns 0.
 */

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_CRT_H_ */
