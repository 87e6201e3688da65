/*!
 * \file minrpc_trace.c
 * \brief The device's trace ring and its three global functions (see minrpc_trace.h).
 */
#include "pytvm_crt/minrpc_trace.h"

#include <string.h>

#include "pytvm_crt/crt.h"

#if TVM_CRT_TRACE

#define TRACE_VERSION 1u
#define TRACE_HEAD_BYTES 24u
#define TRACE_EVENT_BYTES 24u

typedef struct {
  uint64_t t_ns;
  uint64_t bytes;
  uint32_t code;
  uint16_t kind;
  uint16_t phase;
} trace_event_t;

int32_t pytvm_minrpc_trace_on = 0;

static trace_event_t g_ring[MINRPC_TRACE_EVENTS];
static uint32_t g_next;    /* slot of the next event */
static uint32_t g_count;   /* events in the ring */
static uint32_t g_dropped; /* events overwritten */
static uint32_t g_hop;
static uint8_t g_dump[TRACE_HEAD_BYTES + (TRACE_EVENT_BYTES * (size_t)MINRPC_TRACE_EVENTS)];
static TVMByteArray g_dump_array;

void pytvm_minrpc_trace_record(uint32_t kind, uint32_t phase, uint32_t code, uint64_t bytes) {
  trace_event_t* e = &g_ring[g_next];
  e->t_ns = TVMPlatformMonotonicNs();
  e->bytes = bytes;
  e->code = code;
  e->kind = (uint16_t)kind;
  e->phase = (uint16_t)phase;
  g_next = (g_next + 1u) % (uint32_t)MINRPC_TRACE_EVENTS;
  if (g_count < (uint32_t)MINRPC_TRACE_EVENTS) {
    g_count += 1u;
  } else {
    g_dropped += 1u;
  }
}

static void device_hook(uint32_t kind, uint32_t phase, int32_t device_type, uint64_t bytes) {
  MINRPC_TRACE(kind, phase, (uint32_t)device_type, bytes);
}

static void reset(void) {
  g_next = 0u;
  g_count = 0u;
  g_dropped = 0u;
}

static void put32(uint8_t* p, uint32_t v) {
  uint32_t i;
  for (i = 0u; i < 4u; ++i) {
    p[i] = (uint8_t)(v >> (8u * i));
  }
}

static void put64(uint8_t* p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4u, (uint32_t)(v >> 32));
}

/* pytvm.hop.trace_start(hop): empty the ring and record as hop number `hop`. */
static int trace_start(TVMValue* args, int* type_codes, int num_args, TVMValue* ret,
                      int* ret_code, void* resource_handle) {
  (void)resource_handle;
  if ((num_args != 1) || (type_codes[0] != (int)kTVMArgInt) || (args[0].v_int64 < 0)) {
    TVMAPISetLastError("TypeError: pytvm.hop.trace_start takes the hop index (an int >= 0)");
    return -1;
  }
  reset();
  g_hop = (uint32_t)args[0].v_int64;
  pytvm_crt_device_trace_hook = device_hook;
  pytvm_minrpc_trace_on = 1;
  ret->v_handle = NULL;
  *ret_code = (int)kTVMNullptr;
  return 0;
}

/* pytvm.hop.trace_stop(): stop recording (the ring is kept for trace_collect). */
static int trace_stop(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code,
                     void* resource_handle) {
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)resource_handle;
  pytvm_minrpc_trace_on = 0;
  pytvm_crt_device_trace_hook = NULL;
  ret->v_handle = NULL;
  *ret_code = (int)kTVMNullptr;
  return 0;
}

/* pytvm.hop.trace_collect() -> Bytes: the ring, oldest event first (format in the header). */
static int trace_collect(TVMValue* args, int* type_codes, int num_args, TVMValue* ret,
                        int* ret_code, void* resource_handle) {
  uint32_t i;
  uint32_t first = (g_next + (uint32_t)MINRPC_TRACE_EVENTS - g_count) % (uint32_t)MINRPC_TRACE_EVENTS;
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)resource_handle;
  (void)memcpy(g_dump, "PTVT", 4u);
  put32(g_dump + 4u, TRACE_VERSION);
  put32(g_dump + 8u, TVMPlatformProcessId());
  put32(g_dump + 12u, g_hop);
  put32(g_dump + 16u, g_count);
  put32(g_dump + 20u, g_dropped);
  for (i = 0u; i < g_count; ++i) {
    const trace_event_t* e = &g_ring[(first + i) % (uint32_t)MINRPC_TRACE_EVENTS];
    uint8_t* p = g_dump + TRACE_HEAD_BYTES + ((size_t)i * TRACE_EVENT_BYTES);
    put64(p, e->t_ns);
    p[8] = (uint8_t)(e->kind & 0xFFu);
    p[9] = (uint8_t)(e->kind >> 8);
    p[10] = (uint8_t)(e->phase & 0xFFu);
    p[11] = (uint8_t)(e->phase >> 8);
    put32(p + 12u, e->code);
    put64(p + 16u, e->bytes);
  }
  g_dump_array.data = (const char*)g_dump;
  g_dump_array.size = TRACE_HEAD_BYTES + ((size_t)g_count * TRACE_EVENT_BYTES);
  ret->v_handle = &g_dump_array;
  *ret_code = (int)kTVMBytes;
  return 0;
}

int32_t pytvm_minrpc_trace_register(void) {
  pytvm_minrpc_trace_on = 0;
  pytvm_crt_device_trace_hook = NULL;
  reset();
  if ((pytvm_crt_func_register_global(MINRPC_TRACE_START_FUNC, trace_start, 1) != 0) ||
      (pytvm_crt_func_register_global(MINRPC_TRACE_STOP_FUNC, trace_stop, 1) != 0) ||
      (pytvm_crt_func_register_global(MINRPC_TRACE_COLLECT_FUNC, trace_collect, 1) != 0)) {
    return -1;
  }
  return 0;
}

#else /* !TVM_CRT_TRACE */

int32_t pytvm_minrpc_trace_register(void) { return 0; }

#endif /* TVM_CRT_TRACE */
