/*!
 * \file minrpc_tables.c
 * \brief What the peer may name: live allocations (for pointer checks) and the function and
 *        module handles it holds (with their reference counts).
 */
#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

static int32_t SameDevice(DLDevice a, DLDevice b) {
  return ((a.device_type == b.device_type) && (a.device_id == b.device_id)) ? 1 : 0;
}

/* ------------------------------------------------------------------ allocations */

MinRPCStep MinRPCAllocationAdd(MinRPCServer* s, DLDevice dev, void* ptr, uint64_t nbytes) {
  MinRPCAllocation* a = NULL;
  if (s->num_allocations >= (uint32_t)MINRPC_MAX_ALLOCS) {
    return MinRPCFail(s, kMinRPCAllocError, "more than %d live allocations",
                      (int)MINRPC_MAX_ALLOCS);
  }
  a = &s->allocations[s->num_allocations];
  a->ptr = (uint8_t*)ptr;
  a->nbytes = nbytes;
  a->device = dev;
  s->num_allocations += 1u;
  return MINRPC_OK;
}

MinRPCStep MinRPCAllocationRemove(MinRPCServer* s, DLDevice dev, const void* ptr) {
  uint32_t i;
  for (i = 0u; i < s->num_allocations; ++i) {
    MinRPCAllocation* a = &s->allocations[i];
    if (((const void*)a->ptr == ptr) && (SameDevice(a->device, dev) != 0)) {
      s->num_allocations -= 1u;
      *a = s->allocations[s->num_allocations];
      return MINRPC_OK;
    }
  }
  return MinRPCFail(s, kMinRPCCheckError,
                    "pointer 0x%llx on device (%ld, %ld) was not allocated by this server (or "
                    "is already freed)",
                    (unsigned long long)(uintptr_t)ptr, (long)dev.device_type,
                    (long)dev.device_id);
}

MinRPCStep MinRPCCheckRange(MinRPCServer* s, DLDevice dev, const void* data,
                            uint64_t byte_offset, uint64_t nbytes, const char* what) {
  uint32_t i;
  uintptr_t start = (uintptr_t)data;
  for (i = 0u; i < s->num_allocations; ++i) {
    const MinRPCAllocation* a = &s->allocations[i];
    uintptr_t base = (uintptr_t)a->ptr;
    if ((SameDevice(a->device, dev) != 0) && (start >= base) &&
        ((uint64_t)(start - base) <= a->nbytes)) {
      uint64_t room = a->nbytes - (uint64_t)(start - base);
      if ((byte_offset <= room) && (nbytes <= (room - byte_offset))) {
        return MINRPC_OK;
      }
    }
  }
  return MinRPCFail(s, kMinRPCCheckError,
                    "%s: pointer 0x%llx + %llu .. +%llu bytes on device (%ld, %ld) is not inside "
                    "memory allocated by this server",
                    what, (unsigned long long)start, (unsigned long long)byte_offset,
                    (unsigned long long)nbytes, (long)dev.device_type, (long)dev.device_id);
}

MinRPCStep MinRPCCheckTensor(MinRPCServer* s, const DLTensor* t, uint64_t nbytes,
                             const char* what) {
  return MinRPCCheckRange(s, t->device, t->data, t->byte_offset, nbytes, what);
}

/* ------------------------------------------------------------------ handles */

static MinRPCHandleEntry* FindHandle(MinRPCServer* s, const void* handle) {
  uint32_t i;
  for (i = 0u; i < s->num_handles; ++i) {
    if (s->handles[i].handle == handle) {
      return &s->handles[i];
    }
  }
  return NULL;
}

MinRPCStep MinRPCHandleAdd(MinRPCServer* s, void* handle, int32_t type_index) {
  MinRPCHandleEntry* e = FindHandle(s, handle);
  if (e != NULL) {
    if (e->refs == UINT32_MAX) {
      return MinRPCFail(s, kMinRPCAllocError, "handle reference count overflow");
    }
    e->refs += 1u;
    return MINRPC_OK;
  }
  if (s->num_handles >= (uint32_t)MINRPC_MAX_HANDLES) {
    return MinRPCFail(s, kMinRPCAllocError, "more than %d live handles; free some first",
                      (int)MINRPC_MAX_HANDLES);
  }
  e = &s->handles[s->num_handles];
  e->handle = handle;
  e->refs = 1u;
  e->type_index = type_index;
  s->num_handles += 1u;
  return MINRPC_OK;
}

MinRPCStep MinRPCHandleRelease(MinRPCServer* s, void* handle) {
  MinRPCHandleEntry* e = FindHandle(s, handle);
  if (e == NULL) {
    return MinRPCFail(s, kMinRPCCheckError, "kFreeHandle: 0x%llx is not a live handle of this "
                      "server", (unsigned long long)(uintptr_t)handle);
  }
  if (e->type_index == (int32_t)kTVMPackedFuncHandle) {
    (void)TVMFuncFree(handle);
  } else {
    (void)TVMModFree(handle);
  }
  e->refs -= 1u;
  if (e->refs == 0u) {
    s->num_handles -= 1u;
    *e = s->handles[s->num_handles];
  }
  return MINRPC_OK;
}

MinRPCStep MinRPCHandleCheck(MinRPCServer* s, void* handle, int32_t type_index,
                             const char* what) {
  const MinRPCHandleEntry* e = FindHandle(s, handle);
  if ((e == NULL) || ((type_index != 0) && (e->type_index != type_index))) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "%s: 0x%llx is not a live %s handle of this server", what,
                      (unsigned long long)(uintptr_t)handle,
                      (type_index == (int32_t)kTVMModuleHandle) ? "module" : "function");
  }
  return MINRPC_OK;
}
