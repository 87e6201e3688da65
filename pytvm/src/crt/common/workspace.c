/*!
 * \file workspace.c
 * \brief TVMBackendAllocWorkspace / TVMBackendFreeWorkspace: a LIFO stack in a region the page
 *        allocator gives at TVMInitializeRuntime.
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

typedef struct {
  size_t start; /* top of the stack before this block */
  size_t data;  /* offset of the block's (aligned) data */
} WorkspaceBlock;

static uint8_t* g_ws_base = NULL;
static size_t g_ws_top = 0U;
static uint32_t g_ws_depth = 0U;
static WorkspaceBlock g_ws_blocks[TVM_CRT_MAX_WORKSPACE_DEPTH];

tvm_crt_error_t TVMCrtWorkspaceInit(void) {
  DLDevice cpu;
  void* region = NULL;
  int err;
  cpu.device_type = (int32_t)kDLCPU;
  cpu.device_id = 0;
  g_ws_base = NULL;
  g_ws_top = 0U;
  g_ws_depth = 0U;
  err = TVMPlatformMemoryAllocate((size_t)TVM_CRT_WORKSPACE_BYTES, cpu, &region);
  if (err != (int)kTvmErrorNoError) {
    return (tvm_crt_error_t)err;
  }
  g_ws_base = (uint8_t*)region; /* page aligned */
  TVM_CRT_POISON(g_ws_base, (size_t)TVM_CRT_WORKSPACE_BYTES);
  return kTvmErrorNoError;
}

int TVMCrtWorkspaceGetStats(TVMCrtWorkspaceStats* out) {
  if (out == NULL) {
    return kTvmErrorArgumentNull;
  }
  out->capacity_bytes = (g_ws_base != NULL) ? (size_t)TVM_CRT_WORKSPACE_BYTES : 0U;
  out->used_bytes = g_ws_top;
  out->depth = g_ws_depth;
  return kTvmErrorNoError;
}

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  const size_t align = (size_t)TVM_CRT_WORKSPACE_ALIGNMENT;
  const size_t capacity = (size_t)TVM_CRT_WORKSPACE_BYTES;
  size_t data;
  uint64_t want;
  (void)device_id;
  (void)dtype_code_hint;
  (void)dtype_bits_hint;
  if (g_ws_base == NULL) {
    TVMCrtSetLastErrorf("RuntimeError: TVMBackendAllocWorkspace: call TVMInitializeRuntime first");
    return NULL;
  }
  if (device_type != (int)kDLCPU) {
    TVMCrtSetLastErrorf("ValueError: TVMBackendAllocWorkspace: device type %d has no workspace "
                        "(only kDLCPU = 1)", device_type);
    return NULL;
  }
  if (g_ws_depth >= (uint32_t)TVM_CRT_MAX_WORKSPACE_DEPTH) {
    TVMCrtSetLastErrorf("MemoryError: TVMBackendAllocWorkspace: %d blocks alive; raise "
                        "TVM_CRT_MAX_WORKSPACE_DEPTH", TVM_CRT_MAX_WORKSPACE_DEPTH);
    return NULL;
  }
  want = (nbytes == 0U) ? 1U : nbytes; /* a zero-byte block still gets its own address */
  data = ((g_ws_top + align - 1U) / align) * align;
  if ((data > capacity) || (want > (uint64_t)(capacity - data))) {
    TVMCrtSetLastErrorf("MemoryError: TVMBackendAllocWorkspace: %lu bytes requested, %lu of %lu "
                        "free; raise TVM_CRT_WORKSPACE_BYTES", (unsigned long)nbytes,
                        (unsigned long)((data < capacity) ? (capacity - data) : 0U),
                        (unsigned long)capacity);
    return NULL;
  }
  g_ws_blocks[g_ws_depth].start = g_ws_top;
  g_ws_blocks[g_ws_depth].data = data;
  g_ws_depth++;
  g_ws_top = data + (size_t)want;
  TVM_CRT_UNPOISON(&g_ws_base[data], (size_t)nbytes);
  return &g_ws_base[data];
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  const WorkspaceBlock* top;
  (void)device_id;
  if (device_type != (int)kDLCPU) {
    TVMCrtSetLastErrorf("ValueError: TVMBackendFreeWorkspace: device type %d has no workspace",
                        device_type);
    return -1;
  }
  if ((ptr == NULL) || (g_ws_base == NULL) || (g_ws_depth == 0U)) {
    TVMCrtSetLastErrorf("ValueError: TVMBackendFreeWorkspace: %p is not a live workspace block",
                        ptr);
    return -1;
  }
  top = &g_ws_blocks[g_ws_depth - 1U];
  if ((uint8_t*)ptr != &g_ws_base[top->data]) {
    TVMCrtSetLastErrorf("ValueError: TVMBackendFreeWorkspace: %p is not the most recent block "
                        "%p; workspace is freed in LIFO order", ptr,
                        (void*)&g_ws_base[top->data]);
    return -1;
  }
  TVM_CRT_POISON(&g_ws_base[top->start], g_ws_top - top->start);
  g_ws_top = top->start;
  g_ws_depth--;
  return 0;
}
