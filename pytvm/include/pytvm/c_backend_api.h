/*!
 * \file pytvm/c_backend_api.h
 * \brief Calls that generated kernels make into the runtime: errors, functions from the
 *        environment, workspace memory and parallel loops.
 */
#ifndef PYTVM_C_BACKEND_API_H_
#define PYTVM_C_BACKEND_API_H_

#include "pytvm/c_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Signature of every exported kernel (same as TVMPackedCFunc). */
typedef int (*TVMBackendPackedCFunc)(TVMValue* args, int* type_codes, int num_args,
                                     TVMValue* out_ret_value, int* out_ret_tcode,
                                     void* resource_handle);

/*!
 * \brief Find a function visible to a module: its own functions, its imports, then the
 *        global registry. mod_node is the module's context (the __tvm_module_ctx symbol).
 */
TVM_DLL int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name,
                                     TVMFunctionHandle* out)
    PYTVM_API_SYMBOL(TVMBackendGetFuncFromEnv);

/*! \brief Scratch memory for a kernel; NULL (and a last error) on failure. */
TVM_DLL void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                                       int dtype_code_hint, int dtype_bits_hint)
    PYTVM_API_SYMBOL(TVMBackendAllocWorkspace);

/*! \brief Release memory from TVMBackendAllocWorkspace. */
TVM_DLL int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr)
    PYTVM_API_SYMBOL(TVMBackendFreeWorkspace);

/*! \brief What each task of a parallel launch sees. */
typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;

/*! \brief Body of a parallel loop: task task_id of penv->num_task. */
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

/*!
 * \brief Run flambda on num_task tasks (0: one per worker thread) and wait for all.
 *
 * num_task is a request: a launch nested inside a task runs inline as task 0 of 1, so flambda
 * must split its work by penv->num_task, never by the num_task it asked for.
 * \return 0 when every task returned 0.
 */
TVM_DLL int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task)
    PYTVM_API_SYMBOL(TVMBackendParallelLaunch);

/*! \brief Wait until every task of the current launch reaches this barrier. */
TVM_DLL int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv)
    PYTVM_API_SYMBOL(TVMBackendParallelBarrier);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_C_BACKEND_API_H_ */
