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
} workspace_block_t;

static uint8_t* g_ws_base = NULL;
static size_t g_ws_top = 0U;
static uint32_t g_ws_depth = 0U;
static workspace_block_t g_ws_blocks[TVM_CRT_MAX_WORKSPACE_DEPTH];

tvm_crt_error_t pytvm_crt_workspace_init(void) {
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

int pytvm_crt_workspace_get_stats(pytvm_crt_workspace_stats* out) {
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
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", "TVMBackendAllocWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": call TVMInitializeRuntime first");
    return NULL;
  }
  if (device_type != (int)kDLCPU) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMBackendAllocWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": device type ");
    PYTVM_CRT_MSG_I64(msg, device_type);
    PYTVM_CRT_MSG_STR(msg, " has no workspace (only kDLCPU = 1)");
    return NULL;
  }
  if (g_ws_depth >= (uint32_t)TVM_CRT_MAX_WORKSPACE_DEPTH) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("MemoryError", "TVMBackendAllocWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_I64(msg, TVM_CRT_MAX_WORKSPACE_DEPTH);
    PYTVM_CRT_MSG_STR(msg, " blocks alive; raise TVM_CRT_MAX_WORKSPACE_DEPTH");
    return NULL;
  }
  want = (nbytes == 0U) ? 1U : nbytes; /* a zero-byte block still gets its own address */
  data = ((g_ws_top + align - 1U) / align) * align;
  if ((data > capacity) || (want > (uint64_t)(capacity - data))) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("MemoryError", "TVMBackendAllocWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_U64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes requested, ");
    PYTVM_CRT_MSG_U64(msg, ((data < capacity) ? (capacity - data) : 0U));
    PYTVM_CRT_MSG_STR(msg, " of ");
    PYTVM_CRT_MSG_U64(msg, capacity);
    PYTVM_CRT_MSG_STR(msg, " free; raise TVM_CRT_WORKSPACE_BYTES");
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
  const workspace_block_t* top;
  (void)device_id;
  if (device_type != (int)kDLCPU) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMBackendFreeWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": device type ");
    PYTVM_CRT_MSG_I64(msg, device_type);
    PYTVM_CRT_MSG_STR(msg, " has no workspace");
    return -1;
  }
  if ((ptr == NULL) || (g_ws_base == NULL) || (g_ws_depth == 0U)) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMBackendFreeWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_PTR(msg, ptr);
    PYTVM_CRT_MSG_STR(msg, " is not a live workspace block");
    return -1;
  }
  top = &g_ws_blocks[g_ws_depth - 1U];
  if ((uint8_t*)ptr != &g_ws_base[top->data]) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMBackendFreeWorkspace"));
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_PTR(msg, ptr);
    PYTVM_CRT_MSG_STR(msg, " is not the most recent block ");
    PYTVM_CRT_MSG_PTR(msg, (void*)&g_ws_base[top->data]);
    PYTVM_CRT_MSG_STR(msg, "; workspace is freed in LIFO order");
    return -1;
  }
  TVM_CRT_POISON(&g_ws_base[top->start], g_ws_top - top->start);
  g_ws_top = top->start;
  g_ws_depth--;
  return 0;
}
