/*!
 * \file minrpc_server.c
 * \brief The MinRPC packet loop: framing (spec section 2), dispatch by RPCCode (section 4),
 *        kInitServer and kCallFunc (sections 5.1-5.3), and the exception path.
 */
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/minrpc_trace.h"
#include "pytvm_crt/crt.h"

/*! \brief Arena bytes for the head of a streamed kCopyToRemote (descriptor + DLTensor). */
#define MINRPC_COPY_HEAD_ARENA (512u + 16u * (size_t)MINRPC_MAX_NDIM)
/*! \brief Arena slack for decoded values beyond 3 bytes per body byte (see arena_bytes_for). */
#define MINRPC_ARENA_SLACK 1024u

/* ------------------------------------------------------------------ GetCRTMaxPacketSize */

static int max_packet_size(TVMValue* args, int* type_codes, int num_args, TVMValue* ret,
                         int* ret_code, void* resource_handle) {
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)resource_handle;
  ret->v_int64 = (int64_t)MINRPC_MAX_PACKET;
  *ret_code = (int)kTVMArgInt;
  return 0;
}

int32_t pytvm_minrpc_server_init(pytvm_minrpc_server* server, pytvm_minrpc_channel channel, uint8_t* arena,
                         size_t arena_bytes) {
  if ((server == NULL) || (channel.read == NULL) || (channel.write == NULL) ||
      ((arena != NULL) && (arena_bytes < MINRPC_COPY_HEAD_ARENA))) {
    return (int32_t)kMinRPCCheckError;
  }
  (void)memset(server, 0, sizeof(*server));
  server->channel = channel;
  server->fixed_arena = arena;
  server->fixed_arena_bytes = (arena != NULL) ? arena_bytes : 0u;
  if ((pytvm_crt_func_register_global(MINRPC_MAX_PACKET_FUNC, max_packet_size, 1) != 0) ||
      (pytvm_minrpc_trace_register() != 0)) {
    return (int32_t)kMinRPCAllocError;
  }
  return (int32_t)kMinRPCSuccess;
}

/* ------------------------------------------------------------------ kInitServer, kCallFunc */

static pytvm_minrpc_step init_server(pytvm_minrpc_server* s, pytvm_minrpc_reader* r) {
  static const char kVersion[] = MINRPC_PROTOCOL_VERSION;
  const uint8_t* version = NULL;
  uint64_t version_len = 0u;
  pytvm_minrpc_args args;
  TVMValue none;
  if ((pytvm_minrpc_read_blob(r, &version, &version_len,
                              MINRPC_NAME("kInitServer version")) != MINRPC_OK) ||
      (pytvm_minrpc_read_args(r, &args,
                              MINRPC_NAME("kInitServer constructor args")) != MINRPC_OK) ||
      (pytvm_minrpc_read_end(r, MINRPC_NAME("kInitServer")) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (s->initialized != 0) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": Server has already been initialized");
    return MINRPC_ERROR;
  }
  if ((version_len != (uint64_t)(sizeof(kVersion) - 1u)) ||
      (memcmp(version, kVersion, sizeof(kVersion) - 1u) != 0)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": Client protocol version mismatch with server: client '");
    PYTVM_CRT_MSG_STRN(msg, (const char*)version, (int)((version_len < 32u) ? version_len : 32u));
    PYTVM_CRT_MSG_STR(msg, "', server '");
    PYTVM_CRT_MSG_STR(msg, kVersion);
    PYTVM_CRT_MSG_STR(msg, "'");
    return MINRPC_ERROR;
  }
  if (args.num_args != 0) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCRPCCodeNotSupported);
    PYTVM_CRT_MSG_STR(msg, ": the MinRPC server takes no session constructor (got ");
    PYTVM_CRT_MSG_I64(msg, args.num_args);
    PYTVM_CRT_MSG_STR(msg, " arguments");
    PYTVM_CRT_MSG_STR(msg, (args.codes[0] == (int)kTVMStr) ? ", constructor " : "");
    PYTVM_CRT_MSG_STR(msg, (args.codes[0] == (int)kTVMStr) ? args.values[0].v_str : "");
    PYTVM_CRT_MSG_STR(msg, ")");
    return MINRPC_ERROR;
  }
  s->initialized = 1;
  none.v_handle = NULL;
  return pytvm_minrpc_send_return(s, 0, (int32_t)kTVMNullptr, none);
}

/*! \brief Tensors must lie in this server's allocations, handles must be held by the peer. */
static pytvm_minrpc_step check_call_args(pytvm_minrpc_server* s, const pytvm_minrpc_args* a) {
  int32_t i;
#if TVM_CRT_ERROR_TEXTS
  char what[40];
#else
  const char* const what = NULL;
#endif
  for (i = 0; i < a->num_args; ++i) {
    int code = a->codes[i];
#if TVM_CRT_ERROR_TEXTS
    {
      pytvm_crt_text name;
      pytvm_crt_text_init(&name, what, sizeof(what));
      pytvm_crt_text_str(&name, "kCallFunc argument ");
      pytvm_crt_text_i64(&name, (int64_t)i);
    }
#endif
    if (code == (int)kTVMDLTensorHandle) {
      const DLTensor* t = (const DLTensor*)a->values[i].v_handle;
      uint64_t nbytes = 0u;
      if (pytvm_minrpc_check_whole_tensor(s, t, &nbytes, what) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
    } else if ((code == (int)kTVMPackedFuncHandle) || (code == (int)kTVMModuleHandle)) {
      if (pytvm_minrpc_handle_check(s, a->values[i].v_handle, (int32_t)code, what) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
    } else {
      /* values need no check */
    }
  }
  return MINRPC_OK;
}

static pytvm_minrpc_step call_func(pytvm_minrpc_server* s, pytvm_minrpc_reader* r) {
  uint64_t raw_handle = 0u;
  void* handle;
  pytvm_minrpc_args args;
  TVMValue ret;
  int ret_code = (int)kTVMNullptr;
  if ((pytvm_minrpc_read_u64(r, &raw_handle,
                             MINRPC_NAME("kCallFunc function handle")) != MINRPC_OK) ||
      (pytvm_minrpc_read_args(r, &args, MINRPC_NAME("args")) != MINRPC_OK) ||
      (pytvm_minrpc_read_end(r, MINRPC_NAME("kCallFunc")) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  handle = (void*)(uintptr_t)raw_handle;
  if ((pytvm_minrpc_handle_check(s, handle, (int32_t)kTVMPackedFuncHandle,
                                 MINRPC_NAME("kCallFunc")) != MINRPC_OK) ||
      (check_call_args(s, &args) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  ret.v_int64 = 0;
  if (TVMFuncCall(handle, args.values, args.codes, (int)args.num_args, &ret, &ret_code) != 0) {
    return pytvm_minrpc_fail_text(s, TVMGetLastError());
  }
  if ((ret_code == (int)kTVMPackedFuncHandle) || (ret_code == (int)kTVMModuleHandle)) {
    if (ret.v_handle == NULL) {
      ret_code = (int)kTVMNullptr;
    } else if (pytvm_minrpc_handle_add(s, ret.v_handle, (int32_t)ret_code) != MINRPC_OK) {
      if (ret_code == (int)kTVMPackedFuncHandle) {
        (void)TVMFuncFree(ret.v_handle);
      }
      return MINRPC_ERROR;
    } else {
      /* the peer now holds the returned reference */
    }
  }
  return pytvm_minrpc_send_return(s, 1, (int32_t)ret_code, ret);
}

/* ------------------------------------------------------------------ dispatch */

/*! \brief Arena for a buffered body of len bytes: the body plus 3 bytes of decoded values per
 *  body byte (each wire value of n >= 4 bytes decodes into at most 3n bytes) plus slack. */
static size_t arena_bytes_for(size_t body) {
  return ((body + 7u) & ~(size_t)7u) + (3u * body) + MINRPC_ARENA_SLACK;
}

/*! \brief Codes whose body is read whole into the arena before handling. */
static int32_t is_buffered_request(int32_t code) {
  return ((code == MINRPC_CODE_INIT_SERVER) || (code == MINRPC_CODE_CALL_FUNC) ||
          (code == MINRPC_CODE_COPY_FROM_REMOTE) ||
          ((code >= MINRPC_CODE_GET_GLOBAL_FUNC) && (code <= MINRPC_CODE_DEV_GET_CURRENT_STREAM)))
             ? 1
             : 0;
}

static pytvm_minrpc_step dispatch(pytvm_minrpc_server* s, int32_t code) {
  pytvm_minrpc_reader r;
  uint8_t* body = NULL;
  size_t len = s->packet_left;
  int32_t buffered = is_buffered_request(code);
  if ((buffered == 0) && (code != MINRPC_CODE_COPY_TO_REMOTE)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCUnknownRPCCode);
    PYTVM_CRT_MSG_STR(msg, ": code ");
    PYTVM_CRT_MSG_I64(msg, code);
#if TVM_CRT_ERROR_TEXTS
    if ((code == MINRPC_CODE_RETURN) || (code == MINRPC_CODE_EXCEPTION) ||
        (code == MINRPC_CODE_COPY_ACK)) {
      PYTVM_CRT_MSG_STR(msg, " (");
      PYTVM_CRT_MSG_STR(msg, MINRPC_CODE_NAME(code));
      PYTVM_CRT_MSG_STR(msg, ") is a reply, not a request");
    }
#endif
    return MINRPC_ERROR;
  }
  if ((code != MINRPC_CODE_INIT_SERVER) && (s->initialized == 0)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": the server is not initialized: send kInitServer first");
    return MINRPC_ERROR;
  }
  if (buffered == 0) { /* kCopyToRemote: its payload is streamed, not buffered */
    if (pytvm_minrpc_arena_open(s, MINRPC_COPY_HEAD_ARENA) != MINRPC_OK) {
      return MINRPC_ERROR;
    }
    return pytvm_minrpc_handle_copy_to_remote(s);
  }
  if (pytvm_minrpc_arena_open(s, arena_bytes_for(s->packet_left)) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  body = (uint8_t*)pytvm_minrpc_arena_alloc(s, len);
  if (body == NULL) {
    return MINRPC_ERROR;
  }
  if (pytvm_minrpc_read_body(s, body, len) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  r.server = s;
  r.p = body;
  r.left = len;
  if (code == MINRPC_CODE_CALL_FUNC) {
    return call_func(s, &r);
  }
  if (code == MINRPC_CODE_INIT_SERVER) {
    return init_server(s, &r);
  }
  if (code == MINRPC_CODE_COPY_FROM_REMOTE) {
    return pytvm_minrpc_handle_copy_from_remote(s, &r);
  }
  return pytvm_minrpc_handle_syscall(s, code, &r);
}

pytvm_minrpc_serve_result pytvm_minrpc_server_serve_one(pytvm_minrpc_server* s) {
  uint64_t len = 0u;
  int32_t eof = 0;
  uint8_t raw[4];
  int32_t code;
  pytvm_minrpc_step step;
  if (pytvm_minrpc_read_length(s, &len, &eof) != MINRPC_OK) {
    return kMinRPCFailed;
  }
  if (eof != 0) {
    return kMinRPCFinished;
  }
  if (len == 0u) {
    return kMinRPCServed; /* an empty packet is padding */
  }
  if (len > (uint64_t)MINRPC_MAX_PACKET) {
    /* the stream cannot be trusted to find the next packet: answer, then end the session */
    {
      pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
      PYTVM_CRT_MSG_STR(msg, ": packet length ");
      PYTVM_CRT_MSG_U64(msg, len);
      PYTVM_CRT_MSG_STR(msg, " exceeds the server's ");
      PYTVM_CRT_MSG_U64(msg, MINRPC_MAX_PACKET);
      PYTVM_CRT_MSG_STR(msg, "-byte limit (ask ");
      PYTVM_CRT_MSG_STR(msg, MINRPC_MAX_PACKET_FUNC);
      PYTVM_CRT_MSG_STR(msg, "); ending the session");
    }
    (void)pytvm_minrpc_send_exception(s);
    (void)pytvm_minrpc_fatal(s, kMinRPCAllocError);
    return kMinRPCFailed;
  }
  s->packet_left = (size_t)len;
  if (len < 4u) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": a ");
    PYTVM_CRT_MSG_U64(msg, len);
    PYTVM_CRT_MSG_STR(msg, "-byte packet has no room for its code");
    step = MINRPC_ERROR;
    code = 0;
  } else {
    if (pytvm_minrpc_read_body(s, raw, sizeof(raw)) != MINRPC_OK) {
      return kMinRPCFailed;
    }
    code = (int32_t)pytvm_minrpc_get_u32(raw);
    MINRPC_TRACE(MINRPC_TRACE_PACKET, MINRPC_TRACE_BEGIN, (uint32_t)code, len + 8u);
    step = (code == MINRPC_CODE_SHUTDOWN) ? MINRPC_OK : dispatch(s, code);
  }
  pytvm_minrpc_arena_close(s);
  if ((step != MINRPC_FATAL) && (pytvm_minrpc_drain(s) != MINRPC_OK)) {
    step = MINRPC_FATAL;
  }
  if (step == MINRPC_ERROR) {
    step = pytvm_minrpc_send_exception(s);
  }
  MINRPC_TRACE(MINRPC_TRACE_PACKET, MINRPC_TRACE_END, (uint32_t)code, len + 8u);
  if (step == MINRPC_FATAL) {
    return kMinRPCFailed;
  }
  return (code == MINRPC_CODE_SHUTDOWN) ? kMinRPCFinished : kMinRPCServed;
}

int32_t pytvm_minrpc_server_serve(pytvm_minrpc_server* server) {
  pytvm_minrpc_serve_result result = kMinRPCServed;
  while (result == kMinRPCServed) {
    result = pytvm_minrpc_server_serve_one(server);
  }
  pytvm_minrpc_server_release(server);
  return (result == kMinRPCFinished) ? (int32_t)kMinRPCSuccess : server->status;
}

void pytvm_minrpc_server_release(pytvm_minrpc_server* server) {
  while (server->num_allocations > 0u) {
    pytvm_minrpc_allocation* a = &server->allocations[server->num_allocations - 1u];
    (void)TVMDeviceFreeDataSpace(a->device, a->ptr);
    server->num_allocations -= 1u;
  }
  while (server->num_handles > 0u) {
    pytvm_minrpc_handle_entry* e = &server->handles[server->num_handles - 1u];
    uint32_t i;
    for (i = 0u; i < e->refs; ++i) {
      if (e->type_index == (int32_t)kTVMPackedFuncHandle) {
        (void)TVMFuncFree(e->handle);
      } else {
        (void)TVMModFree(e->handle);
      }
    }
    server->num_handles -= 1u;
  }
}
