/*!
 * \file minrpc_tables.c
 * \brief What the peer may name: live allocations (for pointer checks) and the function and
 *        module handles it holds (with their reference counts).
 */
#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

static int32_t same_device(DLDevice a, DLDevice b) {
  return ((a.device_type == b.device_type) && (a.device_id == b.device_id)) ? 1 : 0;
}

/* ------------------------------------------------------------------ allocations */

pytvm_minrpc_step pytvm_minrpc_allocation_add(pytvm_minrpc_server* s, DLDevice dev, void* ptr, uint64_t nbytes) {
  pytvm_minrpc_allocation* a = NULL;
  if (s->num_allocations >= (uint32_t)MINRPC_MAX_ALLOCS) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": more than ");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_ALLOCS);
    PYTVM_CRT_MSG_STR(msg, " live allocations");
    return MINRPC_ERROR;
  }
  a = &s->allocations[s->num_allocations];
  a->ptr = (uint8_t*)ptr;
  a->nbytes = nbytes;
  a->device = dev;
  s->num_allocations += 1u;
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_allocation_remove(pytvm_minrpc_server* s, DLDevice dev, const void* ptr) {
  uint32_t i;
  for (i = 0u; i < s->num_allocations; ++i) {
    pytvm_minrpc_allocation* a = &s->allocations[i];
    if (((const void*)a->ptr == ptr) && (same_device(a->device, dev) != 0)) {
      s->num_allocations -= 1u;
      *a = s->allocations[s->num_allocations];
      return MINRPC_OK;
    }
  }
  {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": pointer ");
    PYTVM_CRT_MSG_HEX(msg, (uintptr_t)ptr);
    PYTVM_CRT_MSG_STR(msg, " on device ");
    pytvm_minrpc_msg_device(msg, dev);
    PYTVM_CRT_MSG_STR(msg, " was not allocated by this server (or is already freed)");
  }
  return MINRPC_ERROR;
}

pytvm_minrpc_step pytvm_minrpc_check_range(pytvm_minrpc_server* s, DLDevice dev, const void* data,
                            uint64_t byte_offset, uint64_t nbytes, const char* what) {
  uint32_t i;
  uintptr_t start = (uintptr_t)data;
  for (i = 0u; i < s->num_allocations; ++i) {
    const pytvm_minrpc_allocation* a = &s->allocations[i];
    uintptr_t base = (uintptr_t)a->ptr;
    if ((same_device(a->device, dev) != 0) && (start >= base) &&
        ((uint64_t)(start - base) <= a->nbytes)) {
      uint64_t room = a->nbytes - (uint64_t)(start - base);
      if ((byte_offset <= room) && (nbytes <= (room - byte_offset))) {
        return MINRPC_OK;
      }
    }
  }
  {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, what);
    PYTVM_CRT_MSG_STR(msg, ": pointer ");
    PYTVM_CRT_MSG_HEX(msg, start);
    PYTVM_CRT_MSG_STR(msg, " + ");
    PYTVM_CRT_MSG_U64(msg, byte_offset);
    PYTVM_CRT_MSG_STR(msg, " .. +");
    PYTVM_CRT_MSG_U64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes on device ");
    pytvm_minrpc_msg_device(msg, dev);
    PYTVM_CRT_MSG_STR(msg, " is not inside memory allocated by this server");
  }
  return MINRPC_ERROR;
}

pytvm_minrpc_step pytvm_minrpc_check_tensor(pytvm_minrpc_server* s, const DLTensor* t, uint64_t nbytes,
                             const char* what) {
  return pytvm_minrpc_check_range(s, t->device, t->data, t->byte_offset, nbytes, what);
}

pytvm_minrpc_step pytvm_minrpc_check_whole_tensor(pytvm_minrpc_server* s, const DLTensor* t,
                                                  uint64_t* nbytes, const char* what) {
  if (pytvm_minrpc_tensor_bytes(s, t, nbytes, what) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  return pytvm_minrpc_check_tensor(s, t, *nbytes, what);
}

/* ------------------------------------------------------------------ handles */

static pytvm_minrpc_handle_entry* find_handle(pytvm_minrpc_server* s, const void* handle) {
  uint32_t i;
  for (i = 0u; i < s->num_handles; ++i) {
    if (s->handles[i].handle == handle) {
      return &s->handles[i];
    }
  }
  return NULL;
}

pytvm_minrpc_step pytvm_minrpc_handle_add(pytvm_minrpc_server* s, void* handle, int32_t type_index) {
  pytvm_minrpc_handle_entry* e = find_handle(s, handle);
  if (e != NULL) {
    if (e->refs == UINT32_MAX) {
      pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
      PYTVM_CRT_MSG_STR(msg, ": handle reference count overflow");
      return MINRPC_ERROR;
    }
    e->refs += 1u;
    return MINRPC_OK;
  }
  if (s->num_handles >= (uint32_t)MINRPC_MAX_HANDLES) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": more than ");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_HANDLES);
    PYTVM_CRT_MSG_STR(msg, " live handles; free some first");
    return MINRPC_ERROR;
  }
  e = &s->handles[s->num_handles];
  e->handle = handle;
  e->refs = 1u;
  e->type_index = type_index;
  s->num_handles += 1u;
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_handle_release(pytvm_minrpc_server* s, void* handle) {
  pytvm_minrpc_handle_entry* e = find_handle(s, handle);
  if (e == NULL) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kFreeHandle: ");
    PYTVM_CRT_MSG_HEX(msg, (uintptr_t)handle);
    PYTVM_CRT_MSG_STR(msg, " is not a live handle of this server");
    return MINRPC_ERROR;
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

pytvm_minrpc_step pytvm_minrpc_handle_check(pytvm_minrpc_server* s, void* handle, int32_t type_index,
                             const char* what) {
  const pytvm_minrpc_handle_entry* e = find_handle(s, handle);
  if ((e == NULL) || ((type_index != 0) && (e->type_index != type_index))) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_STR(msg, what);
    PYTVM_CRT_MSG_STR(msg, ": ");
    PYTVM_CRT_MSG_HEX(msg, (uintptr_t)handle);
    PYTVM_CRT_MSG_STR(msg, " is not a live ");
    PYTVM_CRT_MSG_STR(msg, (type_index == (int32_t)kTVMModuleHandle) ? "module" : "function");
    PYTVM_CRT_MSG_STR(msg, " handle of this server");
    return MINRPC_ERROR;
  }
  return MINRPC_OK;
}
