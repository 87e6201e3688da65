/*!
 * \file minrpc_internal.h
 * \brief Pieces of the MinRPC server shared between its source files (not a public API).
 *
 * Every step of a request returns a MinRPCStep: MINRPC_OK, MINRPC_ERROR (the request failed;
 * server->error holds the text to send back as kException) or MINRPC_FATAL (the channel is
 * unusable; server->status says why).
 */
#ifndef PYTVM_MINRPC_INTERNAL_H_
#define PYTVM_MINRPC_INTERNAL_H_

#include "minrpc_server.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t MinRPCStep;
#define MINRPC_OK 0
#define MINRPC_ERROR 1
#define MINRPC_FATAL 2

/* RPCCode (spec section 4). */
#define MINRPC_CODE_SHUTDOWN 1
#define MINRPC_CODE_INIT_SERVER 2
#define MINRPC_CODE_CALL_FUNC 3
#define MINRPC_CODE_RETURN 4
#define MINRPC_CODE_EXCEPTION 5
#define MINRPC_CODE_COPY_FROM_REMOTE 6
#define MINRPC_CODE_COPY_TO_REMOTE 7
#define MINRPC_CODE_COPY_ACK 8
#define MINRPC_CODE_GET_GLOBAL_FUNC 9
#define MINRPC_CODE_FREE_HANDLE 10
#define MINRPC_CODE_DEV_SET_DEVICE 11
#define MINRPC_CODE_DEV_GET_ATTR 12
#define MINRPC_CODE_DEV_ALLOC_DATA 13
#define MINRPC_CODE_DEV_FREE_DATA 14
#define MINRPC_CODE_DEV_STREAM_SYNC 15
#define MINRPC_CODE_COPY_AMONG_REMOTE 16
#define MINRPC_CODE_DEV_ALLOC_DATA_WITH_SCOPE 17
#define MINRPC_CODE_DEV_CREATE_STREAM 18
#define MINRPC_CODE_DEV_FREE_STREAM 19
#define MINRPC_CODE_DEV_SET_STREAM 20
#define MINRPC_CODE_DEV_GET_CURRENT_STREAM 21

/* tvm-ffi type indices on the wire that have no name in c_runtime_api.h. */
#define MINRPC_TYPE_SMALL_STR 11
#define MINRPC_TYPE_SMALL_BYTES 12
#define MINRPC_TYPE_RPC_OBJECT_REF 115

/* Bytes of a DLTensor descriptor before its shape, and after it (byte_offset). */
#define MINRPC_DESC_HEAD_BYTES 24u
#define MINRPC_DESC_FIXED_BYTES 32u

/* ------------------------------------------------------------------ errors (minrpc_io.c) */

/*! \brief Set server->error to "RPCServerError: <status name>: <detail>"; returns MINRPC_ERROR. */
MinRPCStep MinRPCFail(MinRPCServer* s, int32_t status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*! \brief Set server->error to `text` as it is (a called function's error); MINRPC_ERROR. */
MinRPCStep MinRPCFailText(MinRPCServer* s, const char* text);

/*! \brief Record a fatal status; returns MINRPC_FATAL. */
MinRPCStep MinRPCFatal(MinRPCServer* s, int32_t status);

/* ------------------------------------------------------------------ arena (minrpc_io.c) */

/*! \brief Open the packet's arena of `bytes` (ignored for a fixed arena). */
MinRPCStep MinRPCArenaOpen(MinRPCServer* s, size_t bytes);
/*! \brief `n` bytes aligned to 8 from the arena, or NULL (and an error text) when full. */
void* MinRPCArenaAlloc(MinRPCServer* s, size_t n);
/*! \brief Release the packet's arena. */
void MinRPCArenaClose(MinRPCServer* s);
/*! \brief A staging buffer of n bytes (its own pages, or the fixed arena); NULL when none. */
uint8_t* MinRPCStageOpen(MinRPCServer* s, size_t n);
/*! \brief Release a buffer from MinRPCStageOpen (NULL is ignored). */
void MinRPCStageClose(MinRPCServer* s, uint8_t* stage);

/* ------------------------------------------------------------------ input (minrpc_io.c) */

/*! \brief Exactly n bytes of the packet in progress (n <= packet_left is checked). */
MinRPCStep MinRPCReadBody(MinRPCServer* s, uint8_t* dst, size_t n);
/*! \brief Skip what is left of the packet in progress. */
MinRPCStep MinRPCDrain(MinRPCServer* s);
/*! \brief The next packet header: *len = 0 and MINRPC_OK with *eof = 1 at a clean end. */
MinRPCStep MinRPCReadLength(MinRPCServer* s, uint64_t* len, int32_t* eof);

/* ------------------------------------------------------------------ output (minrpc_io.c) */

/*! \brief Write bytes to the channel (MINRPC_FATAL with kWriteError when it fails). */
MinRPCStep MinRPCWrite(MinRPCServer* s, const uint8_t* data, size_t n);
/*! \brief Send server->error as a kException packet. */
MinRPCStep MinRPCSendException(MinRPCServer* s);

/* ------------------------------------------------------------------ little-endian bytes */

void MinRPCPutU32(uint8_t* p, uint32_t v);
void MinRPCPutU64(uint8_t* p, uint64_t v);
uint32_t MinRPCGetU32(const uint8_t* p);
uint64_t MinRPCGetU64(const uint8_t* p);

/* ------------------------------------------------------------------ decoding (minrpc_decode.c) */

/*! \brief A bounds-checked cursor over a packet body held in the arena. */
typedef struct {
  MinRPCServer* server;
  const uint8_t* p;
  size_t left;
} MinRPCReader;

MinRPCStep MinRPCReadI32(MinRPCReader* r, int32_t* out, const char* field);
MinRPCStep MinRPCReadU64(MinRPCReader* r, uint64_t* out, const char* field);
/*! \brief `u64 len` + bytes; *data points into the packet; len <= MINRPC_MAX_PACKET. */
MinRPCStep MinRPCReadBlob(MinRPCReader* r, const uint8_t** data, uint64_t* len,
                          const char* field);
/*! \brief MINRPC_ERROR unless every byte of the body was consumed. */
MinRPCStep MinRPCReadEnd(MinRPCReader* r, const char* what);

/*! \brief A decoded DLTensor descriptor (arena memory) and the bytes it spans. */
MinRPCStep MinRPCReadTensor(MinRPCReader* r, DLTensor** out, uint64_t* nbytes,
                            const char* field);

/*! \brief Bytes spanned by a compact tensor (0 with an error when it overflows). */
MinRPCStep MinRPCTensorBytes(MinRPCServer* s, const DLTensor* t, uint64_t* nbytes,
                             const char* field);

/*!
 * \brief A packed sequence as C runtime values (arena memory).
 *
 * codes[] hold C runtime type codes: strings of every encoding become kTVMStr with a
 * NUL-terminated v_str, bytes become kTVMBytes pointing at a TVMByteArray, DLTensorPtr becomes
 * kTVMDLTensorHandle pointing at a DLTensor; the rest keep their type index.
 */
typedef struct {
  int32_t num_args;
  TVMValue* values;
  int* codes;
} MinRPCArgs;

MinRPCStep MinRPCReadArgs(MinRPCReader* r, MinRPCArgs* out, const char* what);

/* ------------------------------------------------------------------ encoding (minrpc_encode.c) */

/*!
 * \brief Send kReturn. `with_tag` = 1 for a kCallFunc reply (an Int holding the result's type
 *        index goes first). Strings and bytes are streamed from where they are.
 */
MinRPCStep MinRPCSendReturn(MinRPCServer* s, int32_t with_tag, int32_t code, TVMValue value);

/* ------------------------------------------------------------------ tables (minrpc_tables.c) */

/*! \brief Record an allocation made for the peer (kAllocError when the table is full). */
MinRPCStep MinRPCAllocationAdd(MinRPCServer* s, DLDevice dev, void* ptr, uint64_t nbytes);
/*! \brief Forget the allocation starting at ptr on dev (kCheckError if there is none). */
MinRPCStep MinRPCAllocationRemove(MinRPCServer* s, DLDevice dev, const void* ptr);
/*! \brief MINRPC_OK when [data + byte_offset, + nbytes) lies inside one live allocation of dev. */
MinRPCStep MinRPCCheckRange(MinRPCServer* s, DLDevice dev, const void* data,
                            uint64_t byte_offset, uint64_t nbytes, const char* what);
/*! \brief MinRPCCheckRange for a tensor (its whole extent, or nbytes from its offset). */
MinRPCStep MinRPCCheckTensor(MinRPCServer* s, const DLTensor* t, uint64_t nbytes,
                             const char* what);

/*! \brief Take ownership of one reference to a function/module handle. */
MinRPCStep MinRPCHandleAdd(MinRPCServer* s, void* handle, int32_t type_index);
/*! \brief Release one reference (kCheckError for a handle the peer does not hold). */
MinRPCStep MinRPCHandleRelease(MinRPCServer* s, void* handle);
/*! \brief MINRPC_OK when the peer holds `handle` as `type_index` (0: any kind). */
MinRPCStep MinRPCHandleCheck(MinRPCServer* s, void* handle, int32_t type_index,
                             const char* what);

/* ------------------------------------------------------------------ handlers */

/*! \brief kCopyToRemote with its payload streamed (minrpc_copy.c). */
MinRPCStep MinRPCHandleCopyToRemote(MinRPCServer* s);
/*! \brief kCopyFromRemote (minrpc_copy.c); the body is in the reader. */
MinRPCStep MinRPCHandleCopyFromRemote(MinRPCServer* s, MinRPCReader* r);
/*! \brief Syscalls (codes >= 9, minrpc_syscall.c); the body is in the reader. */
MinRPCStep MinRPCHandleSyscall(MinRPCServer* s, int32_t code, MinRPCReader* r);

/*! \brief Name of an RPC code for messages ("kDevAllocData"), "code" when unknown. */
const char* MinRPCCodeName(int32_t code);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_MINRPC_INTERNAL_H_ */
