/*!
 * \file host_runtime.h
 * \brief Hooks through which the Python side serves the C runtime API on a host.
 *
 * The host runtime library implements errors, function handles, workspaces and the thread pool
 * in C; registry lookups and module queries are answered by Python through these hooks.
 */
#ifndef PYTVM_HOST_RUNTIME_H_
#define PYTVM_HOST_RUNTIME_H_

#include "pytvm/c_backend_api.h"

typedef struct {
  /* Global registry: *out = NULL when missing; a non-NULL handle carries one reference. */
  int (*get_global)(const char* name, TVMFunctionHandle* out);
  int (*register_global)(const char* name, TVMFunctionHandle f, int override);
  /* Module lookups (mod is a module handle or a module context). */
  int (*mod_get_function)(void* mod, const char* name, int query_imports, TVMFunctionHandle* out);
  /* Workspace on devices other than the CPU. */
  void* (*alloc_workspace)(int device_type, int device_id, uint64_t nbytes, int dtype_code_hint,
                           int dtype_bits_hint);
  int (*free_workspace)(int device_type, int device_id, void* ptr);
} PyTVMHooks;

/*! \brief Install the hooks (copied). */
TVM_DLL void PyTVMSetHooks(const PyTVMHooks* hooks);

/*! \brief The C function and resource behind a handle made by TVMFuncCreateFromCFunc. */
TVM_DLL int PyTVMFuncGetCFunc(TVMFunctionHandle func, TVMPackedCFunc* out_func,
                              void** out_resource);

/*! \brief Call f `number` times with the same arguments; total seconds in *out_seconds. */
TVM_DLL int PyTVMTimeCall(TVMPackedCFunc f, void* resource, TVMValue* args, int* codes,
                          int num_args, int number, double* out_seconds);

/*! \brief Number of worker threads of the parallel launch pool (configured or detected). */
TVM_DLL int PyTVMNumThreads(void);

/*! \brief Set the number of worker threads used by later parallel launches (0: detect). */
TVM_DLL void PyTVMSetNumThreads(int num_threads);

#endif /* PYTVM_HOST_RUNTIME_H_ */
