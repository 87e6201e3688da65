/*!
 * \file minrpc_trace.h
 * \brief The device side of `pytvm.trace()`: a fixed ring of timed events recorded by MinRPC
 *        (one begin and one end per packet) and by the device-API table (copy, alloc, free,
 *        sync), which the host collects through MinRPC. C99, no heap.
 *
 * Recording is off until the host calls `pytvm.hop.trace_start(hop)`; while it is off a
 * recording site costs one branch (MINRPC_TRACE tests a flag; the device-API table tests its
 * hook pointer, NULL while off). `pytvm.hop.trace_stop()` turns it off and
 * `pytvm.hop.trace_collect()` returns the ring as Bytes (oldest event first; when more than
 * MINRPC_TRACE_EVENTS were recorded the oldest ones are overwritten and counted as dropped):
 *
 *   u8[4] "PTVT", u32 version (1), u32 pid, u32 hop, u32 count, u32 dropped,
 *   count x { u64 t_ns, u16 kind, u16 phase, u32 code, u64 bytes }     (little-endian)
 *
 * t_ns is CLOCK_MONOTONIC (TVMPlatformMonotonicNs), the clock the host's Python processes read
 * with time.monotonic_ns(), so device events merge into the host's timeline. For a packet,
 * code is the RPC code and bytes the packet length; for a device-API call, code is the device
 * type and bytes the bytes copied or allocated. pytvm.rpc.hop.decode_collected reads it.
 */
#ifndef PYTVM_MINRPC_TRACE_H_
#define PYTVM_MINRPC_TRACE_H_

#include <stdint.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/device_api.h"
#include "pytvm_crt/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Events the ring holds. */
#ifndef MINRPC_TRACE_EVENTS
#define MINRPC_TRACE_EVENTS 256
#endif

/* Event kinds. */
#define MINRPC_TRACE_PACKET 1u
#define MINRPC_TRACE_DEVICE_COPY TVM_CRT_DEVICE_TRACE_COPY
#define MINRPC_TRACE_DEVICE_ALLOC TVM_CRT_DEVICE_TRACE_ALLOC
#define MINRPC_TRACE_DEVICE_FREE TVM_CRT_DEVICE_TRACE_FREE
#define MINRPC_TRACE_DEVICE_SYNC TVM_CRT_DEVICE_TRACE_SYNC

/* Event phases. */
#define MINRPC_TRACE_BEGIN 0u
#define MINRPC_TRACE_END 1u

/*! \brief Names of the trace functions pytvm_minrpc_trace_register registers. */
#define MINRPC_TRACE_START_FUNC "pytvm.hop.trace_start"
#define MINRPC_TRACE_STOP_FUNC "pytvm.hop.trace_stop"
#define MINRPC_TRACE_COLLECT_FUNC "pytvm.hop.trace_collect"

/*! \brief Non-zero while recording. Read it through MINRPC_TRACE. */
extern int32_t pytvm_minrpc_trace_on;

/*! \brief Append one event to the ring (call only while pytvm_minrpc_trace_on). */
void pytvm_minrpc_trace_record(uint32_t kind, uint32_t phase, uint32_t code, uint64_t bytes);

/*! \brief Record an event when tracing is on: one branch when it is off, nothing without
 *  TVM_CRT_TRACE. */
#if TVM_CRT_TRACE
#define MINRPC_TRACE(kind, phase, code, bytes)                          \
  do {                                                                  \
    if (pytvm_minrpc_trace_on != 0) {                                   \
      pytvm_minrpc_trace_record((kind), (phase), (code), (bytes));      \
    }                                                                   \
  } while (0)
#else
#define MINRPC_TRACE(kind, phase, code, bytes) \
  ((void)(kind), (void)(phase), (void)(code), (void)(bytes))
#endif

/*!
 * \brief Register pytvm.hop.trace_start / trace_stop / trace_collect as global functions and
 *        reset the ring (pytvm_minrpc_server_init calls it).
 * Without TVM_CRT_TRACE it registers nothing and returns 0.
 * \return 0, or -1 when the registry is full.
 */
int32_t pytvm_minrpc_trace_register(void);

/* The platform hooks (TVMPlatformMonotonicNs, TVMPlatformProcessId) and the device-API
 * table's trace hook are declared in pytvm_crt/platform.h and pytvm_crt/device_api.h. */

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_MINRPC_TRACE_H_ */
