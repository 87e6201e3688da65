/*!
 * \file minrpc_server.h
 * \brief MinRPC: a TVM 0.27 RPC server (spec/rpc-protocol.md sections 2-6) over an injected
 *        byte channel, for the C runtime. C99, no heap, no recursion.
 *
 * The server answers kInitServer (no constructor), kCallFunc, kCopyToRemote, kCopyFromRemote,
 * kShutdown and the syscalls kGetGlobalFunc, kFreeHandle, kDevSetDevice, kDevGetAttr,
 * kDevAllocData, kDevAllocDataWithScope, kDevFreeData, kDevStreamSync, kCopyAmongRemote and the
 * four stream calls (CRT devices are synchronous: the only stream is the null one).
 *
 * Memory. Each packet gets an arena (pages from TVMPlatformMemoryAllocate, or a caller-given
 * static buffer) that holds its body and its decoded values; the arena is released after the
 * packet. Copy payloads never enter the arena: kCopyToRemote/kCopyFromRemote stream straight
 * between the channel and CPU memory, or through a staging piece of MINRPC_STAGE_BYTES and
 * TVMDeviceCopyDataFromTo for other devices. Every length, count and ndim read from the wire
 * is checked against the packet, the limits below and the arena before it is used.
 *
 * Trust. Function handles are only those this server handed out (a table with reference
 * counts); data pointers are only those inside allocations this server made (a table of live
 * allocations), so a bad handle or pointer from the wire is answered with an error.
 *
 * Errors. A request that fails is answered with kException whose text names the status of
 * spec section 4.1 ("RPCServerError: kUnknownRPCCode: code 42"), or carries the called
 * function's TVMGetLastError text; the server keeps serving. Only a broken channel or a packet
 * length over MINRPC_MAX_PACKET (which cannot be trusted to find the next packet) ends the
 * session, with the status kReadError, kWriteError or kAllocError.
 *
 * The server registers `tvm.rpc.server.GetCRTMaxPacketSize` (returns MINRPC_MAX_PACKET), so
 * TVM and pytvm clients split copies into packets that fit.
 */
#ifndef PYTVM_MINRPC_SERVER_H_
#define PYTVM_MINRPC_SERVER_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/text.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ build-time limits
 * Defaults follow TVM_CRT_CONFIG_MINIMAL (pytvm_crt/crt_config.h); each can be given with -D. */

/*! \brief Largest packet body accepted and advertised by GetCRTMaxPacketSize. */
#ifndef MINRPC_MAX_PACKET
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_MAX_PACKET 2048u
#else
#define MINRPC_MAX_PACKET (256u * 1024u)
#endif
#endif
#if MINRPC_MAX_PACKET > SIZE_MAX
#error "MINRPC_MAX_PACKET must fit size_t (the bytes left of a packet are a size_t)"
#endif
/*! \brief Most values in one packed sequence. */
#ifndef MINRPC_MAX_ARGS
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_MAX_ARGS 16
#else
#define MINRPC_MAX_ARGS 64
#endif
#endif
/*! \brief Most dimensions of a DLTensor descriptor. */
#ifndef MINRPC_MAX_NDIM
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_MAX_NDIM 6
#else
#define MINRPC_MAX_NDIM 16
#endif
#endif
/*! \brief Live allocations tracked (kDevAllocData*); more is an allocation error. */
#ifndef MINRPC_MAX_ALLOCS
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_MAX_ALLOCS 16
#else
#define MINRPC_MAX_ALLOCS 512
#endif
#endif
/*! \brief Live function/module handles tracked; more is an allocation error. */
#ifndef MINRPC_MAX_HANDLES
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_MAX_HANDLES 8
#else
#define MINRPC_MAX_HANDLES 128
#endif
#endif
/*! \brief Staging piece for copies to or from a non-CPU device. */
#ifndef MINRPC_STAGE_BYTES
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_STAGE_BYTES 512u
#else
#define MINRPC_STAGE_BYTES (64u * 1024u)
#endif
#endif
/*! \brief Read-ahead buffer of the channel. */
#ifndef MINRPC_RX_BYTES
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_RX_BYTES 64u
#else
#define MINRPC_RX_BYTES 4096u
#endif
#endif
/*! \brief Longest error text sent back (longer texts are cut). */
#ifndef MINRPC_ERROR_BYTES
#if TVM_CRT_CONFIG_MINIMAL
#define MINRPC_ERROR_BYTES 96u
#else
#define MINRPC_ERROR_BYTES 1024u
#endif
#endif

/*! \brief The protocol version kInitServer must carry. */
#define MINRPC_PROTOCOL_VERSION "0.8.0"
/*! \brief Name of the global function advertising MINRPC_MAX_PACKET. */
#define MINRPC_MAX_PACKET_FUNC "tvm.rpc.server.GetCRTMaxPacketSize"

/* ------------------------------------------------------------------ statuses */

/*! \brief RPCServerStatus (spec section 4.1); also the binary's exit status. */
typedef enum {
  kMinRPCSuccess = 0,
  kMinRPCInvalidTypeCodeObject = 1,
  kMinRPCInvalidTypeCodeTensor = 2,
  kMinRPCInvalidDLTensorFieldStride = 3,
  kMinRPCInvalidDLTensorFieldByteOffset = 4,
  kMinRPCUnknownTypeIndex = 5,
  kMinRPCUnknownRPCCode = 6,
  kMinRPCRPCCodeNotSupported = 7,
  kMinRPCUnknownRPCSyscall = 8,
  kMinRPCCheckError = 9,
  kMinRPCReadError = 10,
  kMinRPCWriteError = 11,
  kMinRPCAllocError = 12
} pytvm_minrpc_status;

/*! \brief The status's name as TVM spells it ("kUnknownRPCCode"); "kUnknownStatus" if none. */
const char* pytvm_minrpc_status_name(int32_t status);

/*! \brief What pytvm_minrpc_server_serve_one did. */
typedef enum {
  kMinRPCServed = 0,   /*!< one packet handled (answered if it needed an answer) */
  kMinRPCFinished = 1, /*!< kShutdown, or the peer closed the channel at a packet boundary */
  kMinRPCFailed = 2    /*!< the session cannot go on; pytvm_minrpc_server.status says why */
} pytvm_minrpc_serve_result;

/* ------------------------------------------------------------------ channel */

/*!
 * \brief Read up to n bytes into buf.
 * \return bytes read (1..n), 0 when the peer closed the channel, negative on error.
 */
typedef int64_t (*pytvm_minrpc_read_fn)(void* ctx, uint8_t* buf, size_t n);

/*!
 * \brief Write all n bytes of buf.
 * \return 0 when every byte was written, non-zero on error.
 */
typedef int32_t (*pytvm_minrpc_write_fn)(void* ctx, const uint8_t* buf, size_t n);

/*! \brief The byte stream the server talks over (pipes, a socket, a framing layer ...). */
typedef struct {
  void* ctx;
  pytvm_minrpc_read_fn read;
  pytvm_minrpc_write_fn write;
} pytvm_minrpc_channel;

/* ------------------------------------------------------------------ server state */

/*! \brief One live allocation made through the device API for the peer. */
typedef struct {
  uint8_t* ptr;
  uint64_t nbytes;
  DLDevice device;
} pytvm_minrpc_allocation;

/*! \brief One function or module handle given to the peer, with the references it holds. */
typedef struct {
  void* handle;
  uint32_t refs;
  int32_t type_index; /*!< kTVMPackedFuncHandle or kTVMModuleHandle */
} pytvm_minrpc_handle_entry;

/*!
 * \brief A MinRPC server. Plain data: place it in static storage and set it up with
 *        pytvm_minrpc_server_init; the fields are private to the server.
 */
typedef struct {
  pytvm_minrpc_channel channel;
  /* per-packet arena */
  uint8_t* fixed_arena; /*!< caller-given buffer, or NULL for pages from the platform */
  size_t fixed_arena_bytes;
  uint8_t* arena;
  size_t arena_cap;
  size_t arena_used;
  /* input */
  uint8_t rx[MINRPC_RX_BYTES];
  size_t rx_pos;
  size_t rx_len;
  size_t packet_left; /*!< body bytes of the packet in progress not read yet (<= MINRPC_MAX_PACKET) */
  /* session */
  int32_t initialized;
  int32_t status; /*!< why the session ended (pytvm_minrpc_status) */
  uint32_t num_allocations;
  uint32_t num_handles;
  pytvm_minrpc_allocation allocations[MINRPC_MAX_ALLOCS];
  pytvm_minrpc_handle_entry handles[MINRPC_MAX_HANDLES];
  /* the error text of the request being answered */
  char error[MINRPC_ERROR_BYTES];
  pytvm_crt_text error_text;
} pytvm_minrpc_server;

/*!
 * \brief Set up `server` on `channel` and register MINRPC_MAX_PACKET_FUNC.
 *
 * Call TVMInitializeRuntime first. `arena`/`arena_bytes`: a static buffer for the per-packet
 * arena, or NULL/0 to take each packet's arena from TVMPlatformMemoryAllocate (sized to the
 * packet). A static arena smaller than MINRPC_MAX_PACKET + MINRPC_STAGE_BYTES limits the
 * packets it can hold; such packets are refused with kAllocError.
 * \return 0, or a pytvm_minrpc_status when the arguments are unusable or registration failed.
 */
int32_t pytvm_minrpc_server_init(pytvm_minrpc_server* server, pytvm_minrpc_channel channel, uint8_t* arena,
                         size_t arena_bytes);

/*! \brief Read and answer one packet (empty packets are skipped silently). */
pytvm_minrpc_serve_result pytvm_minrpc_server_serve_one(pytvm_minrpc_server* server);

/*!
 * \brief Serve packets until kShutdown, a clean end of the channel or a fatal error.
 * \return kMinRPCSuccess (0) for a clean end, else the pytvm_minrpc_status that ended the session.
 */
int32_t pytvm_minrpc_server_serve(pytvm_minrpc_server* server);

/*!
 * \brief Free every allocation and handle the peer still holds (call after the session).
 */
void pytvm_minrpc_server_release(pytvm_minrpc_server* server);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_MINRPC_SERVER_H_ */
