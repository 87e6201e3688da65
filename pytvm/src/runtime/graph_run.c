/*!
 * \file graph_run.c
 * \brief Runs a graph executor's prebuilt packed calls back to back, in one call from Python.
 *
 * pytvm.runtime.graph_executor builds, once per executor, one PyTVMGraphOp per operator: the
 * compiled function, its resource handle and its argument arrays (DLTensor pointers of the
 * node's inputs then outputs). run() then costs one foreign call for a stretch of operators
 * instead of one Python call per operator. Built on its own (it needs only the packed signature).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdint.h>
#include <time.h>

#include "pytvm/c_runtime_api.h"

typedef struct {
  TVMPackedCFunc func;
  void* resource;
  TVMValue* values;
  int* codes;
  int32_t num_args;
  int32_t reserved;
} PyTVMGraphOp;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*! \brief Run ops[begin, end); 0 on success, else 1 + the index of the op that failed (its
 *  error is the thread's last error). */
int PyTVMGraphRun(const PyTVMGraphOp* ops, int32_t begin, int32_t end) {
  int32_t i;
  for (i = begin; i < end; ++i) {
    TVMValue ret;
    int ret_code = kTVMNullptr;
    const PyTVMGraphOp* op = &ops[i];
    if (op->func(op->values, op->codes, op->num_args, &ret, &ret_code, op->resource) != 0) {
      return i + 1;
    }
  }
  return 0;
}

/*! \brief As PyTVMGraphRun, recording each op's start (CLOCK_MONOTONIC seconds) and duration
 *  into starts[i] and seconds[i]. */
int PyTVMGraphRunTimed(const PyTVMGraphOp* ops, int32_t begin, int32_t end, double* starts,
                       double* seconds) {
  int32_t i;
  for (i = begin; i < end; ++i) {
    TVMValue ret;
    int ret_code = kTVMNullptr;
    const PyTVMGraphOp* op = &ops[i];
    double start = now_seconds();
    int rc = op->func(op->values, op->codes, op->num_args, &ret, &ret_code, op->resource);
    seconds[i] = now_seconds() - start;
    starts[i] = start;
    if (rc != 0) return i + 1;
  }
  return 0;
}

/*! \brief CLOCK_MONOTONIC in seconds (the clock of PyTVMGraphRunTimed's starts). */
double PyTVMGraphNow(void) { return now_seconds(); }
