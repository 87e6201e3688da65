/*! \file backend_parallel.c \brief Parallel launch for kernels: every launch runs inline. */
#include "pytvm_crt/tvm_c_api.h"

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  TVMParallelGroupEnv env;
  (void)num_task; /* a request only: kernels split their work by env.num_task */
  if (flambda == NULL) {
    TVMAPISetLastError("ValueError: TVMBackendParallelLaunch: flambda is NULL");
    return -1;
  }
  env.sync_handle = NULL;
  env.num_task = 1;
  return flambda(0, &env, cdata);
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id;
  (void)penv;
  return 0; /* one task: nothing to wait for */
}
