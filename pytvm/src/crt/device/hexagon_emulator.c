/*!
 * \file hexagon_emulator.c
 * \brief device_api.hexagon of the accelerator emulator: a first-fit allocator over a static
 *        pool (a sorted table of live blocks), copies by memmove with every pool range checked.
 */
#include "hexagon_emulator.h"

#include <stdio.h>
#include <string.h>

#include "pytvm_crt/crt.h"

/*! \brief One live block of the pool: [offset, offset + size). */
typedef struct {
  size_t offset;
  size_t size;
} hexagon_block_t;

/*! \brief Largest alignment served: the pool starts on such a boundary. */
#define HEXAGON_MAX_ALIGNMENT 4096u

static uint8_t g_storage[(size_t)PYTVM_HEXAGON_POOL_BYTES + HEXAGON_MAX_ALIGNMENT];
static uint8_t* g_pool = NULL; /* g_storage rounded up to HEXAGON_MAX_ALIGNMENT */

/*! \brief Live blocks sorted by offset. */
static hexagon_block_t g_blocks[PYTVM_HEXAGON_MAX_BLOCKS];
static uint32_t g_num_blocks = 0u;
static size_t g_used_bytes = 0u;

static char g_range_text[64];
static TVMByteArray g_peek_result;

int32_t pytvm_hexagon_pool_contains(const void* ptr, uint64_t nbytes) {
  uintptr_t base = (uintptr_t)g_pool;
  if (g_pool == NULL) {
    return 0;
  }
  uintptr_t p = (uintptr_t)ptr;
  if ((p < base) || ((uint64_t)(p - base) > (uint64_t)PYTVM_HEXAGON_POOL_BYTES)) {
    return 0;
  }
  return (nbytes <= ((uint64_t)PYTVM_HEXAGON_POOL_BYTES - (uint64_t)(p - base))) ? 1 : 0;
}

static int fail(const char* msg) {
  TVMAPISetLastError(msg);
  return -1;
}

/* ------------------------------------------------------------------ device API */

static int hexagon_alloc(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint,
                        void** out) {
  size_t align = (alignment < 1u) ? 1u : alignment;
  size_t size = (nbytes == 0u) ? 1u : nbytes;
  size_t cursor = 0u;
  uint32_t i;
  (void)hint;
  *out = NULL;
  if (dev.device_id != 0) {
    return fail("ValueError: the hexagon emulator has only device 0");
  }
  if (((align & (align - 1u)) != 0u) || (align > HEXAGON_MAX_ALIGNMENT)) {
    return fail("ValueError: hexagon alignment must be a power of two up to 4096");
  }
  if (g_num_blocks >= (uint32_t)PYTVM_HEXAGON_MAX_BLOCKS) {
    return fail("MemoryError: too many live hexagon allocations");
  }
  /* first fit: the gap before block i, then the tail after the last block */
  for (i = 0u; i <= g_num_blocks; ++i) {
    size_t gap_end = (i < g_num_blocks) ? g_blocks[i].offset : (size_t)PYTVM_HEXAGON_POOL_BYTES;
    size_t start = (cursor + (align - 1u)) & ~(align - 1u);
    if ((start >= cursor) && (start <= gap_end) && (size <= (gap_end - start))) {
      uint32_t j;
      for (j = g_num_blocks; j > i; --j) {
        g_blocks[j] = g_blocks[j - 1u];
      }
      g_blocks[i].offset = start;
      g_blocks[i].size = size;
      g_num_blocks += 1u;
      g_used_bytes += size;
      *out = &g_pool[start];
      return 0;
    }
    if (i < g_num_blocks) {
      cursor = g_blocks[i].offset + g_blocks[i].size;
    }
  }
  return fail("MemoryError: the hexagon emulator pool is full");
}

static int hexagon_free(DLDevice dev, void* ptr) {
  uint32_t i;
  (void)dev;
  for (i = 0u; i < g_num_blocks; ++i) {
    if ((void*)&g_pool[g_blocks[i].offset] == ptr) {
      g_used_bytes -= g_blocks[i].size;
      for (; (i + 1u) < g_num_blocks; ++i) {
        g_blocks[i] = g_blocks[i + 1u];
      }
      g_num_blocks -= 1u;
      return 0;
    }
  }
  return fail("ValueError: pointer was not allocated from the hexagon emulator pool");
}

static uint64_t tensor_bytes(const DLTensor* t) {
  uint64_t count = 1u;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) {
    count *= (uint64_t)t->shape[i];
  }
  return count * (((uint64_t)t->dtype.bits * (uint64_t)t->dtype.lanes + 7u) / 8u);
}

static int hexagon_copy(const DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  uint64_t nbytes = tensor_bytes(from);
  const uint8_t* src = (const uint8_t*)from->data + from->byte_offset;
  uint8_t* dst = (uint8_t*)to->data + to->byte_offset;
  (void)stream;
  if (((from->device.device_type == PYTVM_HEXAGON_DEVICE_TYPE) &&
       (pytvm_hexagon_pool_contains(src, nbytes) == 0)) ||
      ((to->device.device_type == PYTVM_HEXAGON_DEVICE_TYPE) &&
       (pytvm_hexagon_pool_contains(dst, nbytes) == 0))) {
    return fail("ValueError: hexagon copy range is outside the emulator pool");
  }
  if (nbytes > (uint64_t)SIZE_MAX) {
    return fail("ValueError: hexagon copy too large");
  }
  (void)memmove(dst, src, (size_t)nbytes);
  return 0;
}

static int hexagon_sync(DLDevice dev, TVMStreamHandle stream) {
  (void)dev;
  (void)stream;
  return 0; /* the emulator finishes every copy before returning */
}

static int hexagon_get_attr(DLDevice dev, int kind, TVMValue* out, int* out_code) {
  (void)dev;
  *out_code = (int)kTVMArgInt;
  switch (kind) {
    case TVM_CRT_DEVICE_ATTR_DEVICE_NAME:
      out->v_str = "hexagon-emulator";
      *out_code = (int)kTVMStr;
      break;
    case TVM_CRT_DEVICE_ATTR_TOTAL_GLOBAL_MEMORY:
      out->v_int64 = (int64_t)PYTVM_HEXAGON_POOL_BYTES;
      break;
    case TVM_CRT_DEVICE_ATTR_AVAILABLE_GLOBAL_MEMORY:
      out->v_int64 = (int64_t)((size_t)PYTVM_HEXAGON_POOL_BYTES - g_used_bytes);
      break;
    default:
      out->v_handle = NULL;
      *out_code = (int)kTVMNullptr;
      break;
  }
  return 0;
}

static const pytvm_crt_device_api kHexagonAPI = {hexagon_alloc, hexagon_free, hexagon_copy, hexagon_sync,
                                            hexagon_get_attr};

/* ------------------------------------------------------------------ global functions */

static int pool_range(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                     void* resource) {
  (void)args;
  (void)codes;
  (void)num_args;
  (void)resource;
  (void)snprintf(g_range_text, sizeof(g_range_text), "%llu,%llu",
                 (unsigned long long)(uintptr_t)g_pool,
                 (unsigned long long)PYTVM_HEXAGON_POOL_BYTES);
  ret->v_str = g_range_text;
  *ret_code = (int)kTVMStr;
  return 0;
}

/*! \brief An address argument: Int or OpaquePtr. */
static int address_arg(const TVMValue* v, int code, uint64_t* out) {
  if ((code == (int)kTVMArgInt) && (v->v_int64 >= 0)) {
    *out = (uint64_t)v->v_int64;
    return 0;
  }
  if ((code == (int)kTVMOpaqueHandle) || (code == (int)kTVMNullptr)) {
    *out = (uint64_t)(uintptr_t)v->v_handle;
    return 0;
  }
  return -1;
}

static int peek(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                void* resource) {
  uint64_t ptr = 0u;
  const uint8_t* at;
  (void)resource;
  if ((num_args != 3) || (address_arg(&args[0], codes[0], &ptr) != 0) ||
      (codes[1] != (int)kTVMArgInt) || (codes[2] != (int)kTVMArgInt) || (args[1].v_int64 < 0) ||
      (args[2].v_int64 < 0)) {
    return fail("TypeError: pytvm.hexagon.peek(ptr, offset, n) takes an address and two "
                "non-negative ints");
  }
  if (((uint64_t)args[1].v_int64 > (uint64_t)PYTVM_HEXAGON_POOL_BYTES) ||
      (ptr > (uint64_t)UINTPTR_MAX - (uint64_t)args[1].v_int64)) {
    return fail("ValueError: pytvm.hexagon.peek range is outside the emulator pool");
  }
  at = (const uint8_t*)(uintptr_t)(ptr + (uint64_t)args[1].v_int64);
  if (pytvm_hexagon_pool_contains(at, (uint64_t)args[2].v_int64) == 0) {
    return fail("ValueError: pytvm.hexagon.peek range is outside the emulator pool");
  }
  g_peek_result.data = (const char*)at;
  g_peek_result.size = (size_t)args[2].v_int64;
  ret->v_handle = &g_peek_result;
  *ret_code = (int)kTVMBytes;
  return 0;
}

int32_t pytvm_hexagon_emulator_install(void) {
  uintptr_t raw = (uintptr_t)&g_storage[0];
  g_pool = &g_storage[(HEXAGON_MAX_ALIGNMENT - (raw % HEXAGON_MAX_ALIGNMENT)) %
                      HEXAGON_MAX_ALIGNMENT];
  g_num_blocks = 0u;
  g_used_bytes = 0u;
  if (pytvm_crt_register_device_api(PYTVM_HEXAGON_DEVICE_TYPE, &kHexagonAPI) != 0) {
    return -1;
  }
  if ((pytvm_crt_func_register_global("pytvm.hexagon.pool_range", pool_range, 1) != 0) ||
      (pytvm_crt_func_register_global("pytvm.hexagon.peek", peek, 1) != 0)) {
    return -1;
  }
  return 0;
}
