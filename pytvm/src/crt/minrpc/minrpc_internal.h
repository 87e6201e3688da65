/*!
 * \file minrpc_internal.h
 * \brief Pieces of the MinRPC server shared between its source files (not a public API).
 *
 * Every step of a request returns a pytvm_minrpc_step: MINRPC_OK, MINRPC_ERROR (the request failed;
 * server->error holds the text to send back as kException) or MINRPC_FATAL (the channel is
 * unusable; server->status says why).
 */
#ifndef PYTVM_MINRPC_INTERNAL_H_
#define PYTVM_MINRPC_INTERNAL_H_

#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/text.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t pytvm_minrpc_step;
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

/*!
 * \brief Set server->error to "RPCServerError: <status name>" and return the text, for details
 *        appended with PYTVM_CRT_MSG_* (": <detail>", compiled out with TVM_CRT_ERROR_TEXTS 0).
 *        The caller then returns MINRPC_ERROR.
 */
pytvm_crt_text* pytvm_minrpc_error(pytvm_minrpc_server* s, int32_t status);

/*! \brief Append "(<device_type>, <device_id>)" to an error text. */
static inline void pytvm_minrpc_msg_device(pytvm_crt_text* msg, DLDevice dev) {
  PYTVM_CRT_MSG_STR(msg, "(");
  PYTVM_CRT_MSG_I64(msg, dev.device_type);
  PYTVM_CRT_MSG_STR(msg, ", ");
  PYTVM_CRT_MSG_I64(msg, dev.device_id);
  PYTVM_CRT_MSG_STR(msg, ")");
}

/*! \brief Set server->error to `text` as it is (a called function's error); MINRPC_ERROR. */
pytvm_minrpc_step pytvm_minrpc_fail_text(pytvm_minrpc_server* s, const char* text);

/*! \brief Record a fatal status; returns MINRPC_FATAL. */
pytvm_minrpc_step pytvm_minrpc_fatal(pytvm_minrpc_server* s, int32_t status);

/* ------------------------------------------------------------------ arena (minrpc_io.c) */

/*! \brief Open the packet's arena of `bytes` (ignored for a fixed arena). */
pytvm_minrpc_step pytvm_minrpc_arena_open(pytvm_minrpc_server* s, size_t bytes);
/*! \brief `n` bytes aligned to 8 from the arena, or NULL (and an error text) when full. */
void* pytvm_minrpc_arena_alloc(pytvm_minrpc_server* s, size_t n);
/*! \brief Release the packet's arena. */
void pytvm_minrpc_arena_close(pytvm_minrpc_server* s);
/*! \brief A staging buffer of n bytes (its own pages, or the fixed arena); NULL when none. */
uint8_t* pytvm_minrpc_stage_open(pytvm_minrpc_server* s, size_t n);
/*! \brief Release a buffer from pytvm_minrpc_stage_open (NULL is ignored). */
void pytvm_minrpc_stage_close(pytvm_minrpc_server* s, uint8_t* stage);

/* ------------------------------------------------------------------ input (minrpc_io.c) */

/*! \brief Exactly n bytes of the packet in progress (n <= packet_left is checked). */
pytvm_minrpc_step pytvm_minrpc_read_body(pytvm_minrpc_server* s, uint8_t* dst, size_t n);
/*! \brief Skip what is left of the packet in progress. */
pytvm_minrpc_step pytvm_minrpc_drain(pytvm_minrpc_server* s);
/*! \brief The next packet header: *len = 0 and MINRPC_OK with *eof = 1 at a clean end. */
pytvm_minrpc_step pytvm_minrpc_read_length(pytvm_minrpc_server* s, uint64_t* len, int32_t* eof);

/* ------------------------------------------------------------------ output (minrpc_io.c) */

/*! \brief Write bytes to the channel (MINRPC_FATAL with kWriteError when it fails). */
pytvm_minrpc_step pytvm_minrpc_write(pytvm_minrpc_server* s, const uint8_t* data, size_t n);
/*! \brief Send server->error as a kException packet. */
pytvm_minrpc_step pytvm_minrpc_send_exception(pytvm_minrpc_server* s);

/* ------------------------------------------------------------------ little-endian bytes */

void pytvm_minrpc_put_u32(uint8_t* p, uint32_t v);
void pytvm_minrpc_put_u64(uint8_t* p, uint64_t v);
uint32_t pytvm_minrpc_get_u32(const uint8_t* p);
uint64_t pytvm_minrpc_get_u64(const uint8_t* p);

/* ------------------------------------------------------------------ decoding (minrpc_decode.c) */

/*! \brief A bounds-checked cursor over a packet body held in the arena. */
typedef struct {
  pytvm_minrpc_server* server;
  const uint8_t* p;
  size_t left;
} pytvm_minrpc_reader;

pytvm_minrpc_step pytvm_minrpc_read_i32(pytvm_minrpc_reader* r, int32_t* out, const char* field);
pytvm_minrpc_step pytvm_minrpc_read_u64(pytvm_minrpc_reader* r, uint64_t* out, const char* field);
/*! \brief `u64 len` + bytes; *data points into the packet; len <= MINRPC_MAX_PACKET. */
pytvm_minrpc_step pytvm_minrpc_read_blob(pytvm_minrpc_reader* r, const uint8_t** data, uint64_t* len,
                          const char* field);
/*! \brief MINRPC_ERROR unless every byte of the body was consumed. */
pytvm_minrpc_step pytvm_minrpc_read_end(pytvm_minrpc_reader* r, const char* what);

/*! \brief A decoded DLTensor descriptor (arena memory) and the bytes it spans. */
pytvm_minrpc_step pytvm_minrpc_read_tensor(pytvm_minrpc_reader* r, DLTensor** out, uint64_t* nbytes,
                            const char* field);

/*! \brief Bytes spanned by a compact tensor (0 with an error when it overflows). */
pytvm_minrpc_step pytvm_minrpc_tensor_bytes(pytvm_minrpc_server* s, const DLTensor* t, uint64_t* nbytes,
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
} pytvm_minrpc_args;

pytvm_minrpc_step pytvm_minrpc_read_args(pytvm_minrpc_reader* r, pytvm_minrpc_args* out, const char* what);

/* ------------------------------------------------------------------ encoding (minrpc_encode.c) */

/*!
 * \brief Send kReturn. `with_tag` = 1 for a kCallFunc reply (an Int holding the result's type
 *        index goes first). Strings and bytes are streamed from where they are.
 */
pytvm_minrpc_step pytvm_minrpc_send_return(pytvm_minrpc_server* s, int32_t with_tag, int32_t code, TVMValue value);

/* ------------------------------------------------------------------ tables (minrpc_tables.c) */

/*! \brief Record an allocation made for the peer (kAllocError when the table is full). */
pytvm_minrpc_step pytvm_minrpc_allocation_add(pytvm_minrpc_server* s, DLDevice dev, void* ptr, uint64_t nbytes);
/*! \brief Forget the allocation starting at ptr on dev (kCheckError if there is none). */
pytvm_minrpc_step pytvm_minrpc_allocation_remove(pytvm_minrpc_server* s, DLDevice dev, const void* ptr);
/*! \brief MINRPC_OK when [data + byte_offset, + nbytes) lies inside one live allocation of dev. */
pytvm_minrpc_step pytvm_minrpc_check_range(pytvm_minrpc_server* s, DLDevice dev, const void* data,
                            uint64_t byte_offset, uint64_t nbytes, const char* what);
/*! \brief pytvm_minrpc_check_range for a tensor (its whole extent, or nbytes from its offset). */
pytvm_minrpc_step pytvm_minrpc_check_tensor(pytvm_minrpc_server* s, const DLTensor* t, uint64_t nbytes,
                             const char* what);
/*! \brief The bytes a decoded tensor spans (*nbytes) and pytvm_minrpc_check_tensor on them. */
pytvm_minrpc_step pytvm_minrpc_check_whole_tensor(pytvm_minrpc_server* s, const DLTensor* t,
                                                  uint64_t* nbytes, const char* what);

/*! \brief Take ownership of one reference to a function/module handle. */
pytvm_minrpc_step pytvm_minrpc_handle_add(pytvm_minrpc_server* s, void* handle, int32_t type_index);
/*! \brief Release one reference (kCheckError for a handle the peer does not hold). */
pytvm_minrpc_step pytvm_minrpc_handle_release(pytvm_minrpc_server* s, void* handle);
/*! \brief MINRPC_OK when the peer holds `handle` as `type_index` (0: any kind). */
pytvm_minrpc_step pytvm_minrpc_handle_check(pytvm_minrpc_server* s, void* handle, int32_t type_index,
                             const char* what);

/* ------------------------------------------------------------------ handlers */

/*! \brief kCopyToRemote with its payload streamed (minrpc_copy.c). */
pytvm_minrpc_step pytvm_minrpc_handle_copy_to_remote(pytvm_minrpc_server* s);
/*! \brief kCopyFromRemote (minrpc_copy.c); the body is in the reader. */
pytvm_minrpc_step pytvm_minrpc_handle_copy_from_remote(pytvm_minrpc_server* s, pytvm_minrpc_reader* r);
/*! \brief Syscalls (codes >= 9, minrpc_syscall.c); the body is in the reader. */
pytvm_minrpc_step pytvm_minrpc_handle_syscall(pytvm_minrpc_server* s, int32_t code, pytvm_minrpc_reader* r);

/*!
 * \brief 1: also make the checks a lower layer repeats (the device API, the tables) before
 *        calling it, to word the refusal precisely; 0 (without TVM_CRT_ERROR_TEXTS): the lower
 *        layer's refusal is the answer. Either way the request is refused.
 */
#define MINRPC_WORDED_CHECKS TVM_CRT_ERROR_TEXTS

/* ------------------------------------------------------------------ names (minrpc_names.c) */

#if TVM_CRT_ERROR_TEXTS
/*! \brief Name of an RPC code for messages ("kDevAllocData"), "code" when unknown. */
const char* pytvm_minrpc_code_name(int32_t code);
#endif

/*!
 * \brief The name of a field, request or RPC code passed down for error details
 *        ("kCallFunc function handle"): the text with TVM_CRT_ERROR_TEXTS, else NULL, so that
 *        neither the names nor the code-name table enter a minimal image.
 */
#if TVM_CRT_ERROR_TEXTS
#define MINRPC_NAME(text) (text)
#define MINRPC_CODE_NAME(code) pytvm_minrpc_code_name(code)
#else
#define MINRPC_NAME(text) ((const char*)NULL)
#define MINRPC_CODE_NAME(code) ((void)(code), (const char*)NULL)
#endif

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_MINRPC_INTERNAL_H_ */
