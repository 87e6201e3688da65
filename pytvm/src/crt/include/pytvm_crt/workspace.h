/*!
 * \file pytvm_crt/workspace.h
 * \brief The workspace stack behind TVMBackendAllocWorkspace / TVMBackendFreeWorkspace.
 *
 * TVMInitializeRuntime takes TVM_CRT_WORKSPACE_BYTES from the page allocator; blocks are
 * carved from it bottom-up, each aligned to TVM_CRT_WORKSPACE_ALIGNMENT, and must be freed in
 * LIFO order (freeing any other block fails with kTvmErrorPlatformStackAllocBadFree and frees
 * nothing). Only device type kDLCPU is served. TVMBackendAllocWorkspace and
 * TVMBackendFreeWorkspace are declared in pytvm/c_backend_api.h.
 */
#ifndef PYTVM_CRT_WORKSPACE_H_
#define PYTVM_CRT_WORKSPACE_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief A snapshot of the workspace stack. */
typedef struct {
  size_t capacity_bytes;
  size_t used_bytes;
  uint32_t depth;
} pytvm_crt_workspace_stats;

/*! \brief Fill *out (all zero before TVMInitializeRuntime). */
int pytvm_crt_workspace_get_stats(pytvm_crt_workspace_stats* out);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_WORKSPACE_H_ */
