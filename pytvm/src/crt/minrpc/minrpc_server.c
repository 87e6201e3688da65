/*!
 * \file minrpc_server.c
 * \brief The MinRPC packet loop: framing (spec section 2), dispatch by RPCCode (section 4),
 *        kInitServer and kCallFunc (sections 5.1-5.3), and the exception path.
 */
#include <stdio.h>
#include <string.h>

#include "minrpc_internal.h"
#include "minrpc_trace.h"
#include "pytvm_crt/crt.h"

/*! \brief Arena bytes for the head of a streamed kCopyToRemote (descriptor + DLTensor). */
#define MINRPC_COPY_HEAD_ARENA (512u + 16u * (size_t)MINRPC_MAX_NDIM)
/*! \brief Arena slack for decoded values beyond 3 bytes per body byte (see ArenaBytesFor). */
#define MINRPC_ARENA_SLACK 1024u

static const char* const kCodeNames[] = {
    "kNone",
    "kShutdown",
    "kInitServer",
    "kCallFunc",
    "kReturn",
    "kException",
    "kCopyFromRemote",
    "kCopyToRemote",
    "kCopyAck",
    "kGetGlobalFunc",
    "kFreeHandle",
    "kDevSetDevice",
    "kDevGetAttr",
    "kDevAllocData",
    "kDevFreeData",
    "kDevStreamSync",
    "kCopyAmongRemote",
    "kDevAllocDataWithScope",
    "kDevCreateStream",
    "kDevFreeStream",
    "kDevSetStream",
    "kDevGetCurrentStream",
};

const char* MinRPCCodeName(int32_t code) {
  if ((code < 0) || (code > MINRPC_CODE_DEV_GET_CURRENT_STREAM)) {
    return "code";
  }
  return kCodeNames[code];
}

/* ------------------------------------------------------------------ GetCRTMaxPacketSize */

static int MaxPacketSize(TVMValue* args, int* type_codes, int num_args, TVMValue* ret,
                         int* ret_code, void* resource_handle) {
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)resource_handle;
  ret->v_int64 = (int64_t)MINRPC_MAX_PACKET;
  *ret_code = (int)kTVMArgInt;
  return 0;
}

int32_t MinRPCServerInit(MinRPCServer* server, MinRPCChannel channel, uint8_t* arena,
                         size_t arena_bytes) {
  if ((server == NULL) || (channel.read == NULL) || (channel.write == NULL) ||
      ((arena != NULL) && (arena_bytes < MINRPC_COPY_HEAD_ARENA))) {
    return (int32_t)kMinRPCCheckError;
  }
  (void)memset(server, 0, sizeof(*server));
  server->channel = channel;
  server->fixed_arena = arena;
  server->fixed_arena_bytes = (arena != NULL) ? arena_bytes : 0u;
  if ((TVMCrtFuncRegisterGlobal(MINRPC_MAX_PACKET_FUNC, MaxPacketSize, 1) != 0) ||
      (MinRPCTraceRegister() != 0)) {
    return (int32_t)kMinRPCAllocError;
  }
  return (int32_t)kMinRPCSuccess;
}

/* ------------------------------------------------------------------ kInitServer, kCallFunc */

static MinRPCStep InitServer(MinRPCServer* s, MinRPCReader* r) {
  static const char kVersion[] = MINRPC_PROTOCOL_VERSION;
  const uint8_t* version = NULL;
  uint64_t version_len = 0u;
  MinRPCArgs args;
  TVMValue none;
  if ((MinRPCReadBlob(r, &version, &version_len, "kInitServer version") != MINRPC_OK) ||
      (MinRPCReadArgs(r, &args, "kInitServer constructor args") != MINRPC_OK) ||
      (MinRPCReadEnd(r, "kInitServer") != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (s->initialized != 0) {
    return MinRPCFail(s, kMinRPCCheckError, "Server has already been initialized");
  }
  if ((version_len != (uint64_t)(sizeof(kVersion) - 1u)) ||
      (memcmp(version, kVersion, sizeof(kVersion) - 1u) != 0)) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "Client protocol version mismatch with server: client '%.*s', server '%s'",
                      (int)((version_len < 32u) ? version_len : 32u), (const char*)version,
                      kVersion);
  }
  if (args.num_args != 0) {
    return MinRPCFail(s, kMinRPCRPCCodeNotSupported,
                      "the MinRPC server takes no session constructor (got %ld arguments%s%s)",
                      (long)args.num_args, (args.codes[0] == (int)kTVMStr) ? ", constructor " : "",
                      (args.codes[0] == (int)kTVMStr) ? args.values[0].v_str : "");
  }
  s->initialized = 1;
  none.v_handle = NULL;
  return MinRPCSendReturn(s, 0, (int32_t)kTVMNullptr, none);
}

/*! \brief Tensors must lie in this server's allocations, handles must be held by the peer. */
static MinRPCStep CheckCallArgs(MinRPCServer* s, const MinRPCArgs* a) {
  int32_t i;
  char what[40];
  for (i = 0; i < a->num_args; ++i) {
    int code = a->codes[i];
    (void)snprintf(what, sizeof(what), "kCallFunc argument %ld", (long)i);
    if (code == (int)kTVMDLTensorHandle) {
      const DLTensor* t = (const DLTensor*)a->values[i].v_handle;
      uint64_t nbytes = 0u;
      if ((MinRPCTensorBytes(s, t, &nbytes, what) != MINRPC_OK) ||
          (MinRPCCheckTensor(s, t, nbytes, what) != MINRPC_OK)) {
        return MINRPC_ERROR;
      }
    } else if ((code == (int)kTVMPackedFuncHandle) || (code == (int)kTVMModuleHandle)) {
      if (MinRPCHandleCheck(s, a->values[i].v_handle, (int32_t)code, what) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
    } else {
      /* values need no check */
    }
  }
  return MINRPC_OK;
}

static MinRPCStep CallFunc(MinRPCServer* s, MinRPCReader* r) {
  uint64_t raw_handle = 0u;
  void* handle;
  MinRPCArgs args;
  TVMValue ret;
  int ret_code = (int)kTVMNullptr;
  if ((MinRPCReadU64(r, &raw_handle, "kCallFunc function handle") != MINRPC_OK) ||
      (MinRPCReadArgs(r, &args, "args") != MINRPC_OK) ||
      (MinRPCReadEnd(r, "kCallFunc") != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  handle = (void*)(uintptr_t)raw_handle;
  if ((MinRPCHandleCheck(s, handle, (int32_t)kTVMPackedFuncHandle, "kCallFunc") != MINRPC_OK) ||
      (CheckCallArgs(s, &args) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  ret.v_int64 = 0;
  if (TVMFuncCall(handle, args.values, args.codes, (int)args.num_args, &ret, &ret_code) != 0) {
    return MinRPCFailText(s, TVMGetLastError());
  }
  if ((ret_code == (int)kTVMPackedFuncHandle) || (ret_code == (int)kTVMModuleHandle)) {
    if (ret.v_handle == NULL) {
      ret_code = (int)kTVMNullptr;
    } else if (MinRPCHandleAdd(s, ret.v_handle, (int32_t)ret_code) != MINRPC_OK) {
      if (ret_code == (int)kTVMPackedFuncHandle) {
        (void)TVMFuncFree(ret.v_handle);
      }
      return MINRPC_ERROR;
    } else {
      /* the peer now holds the returned reference */
    }
  }
  return MinRPCSendReturn(s, 1, (int32_t)ret_code, ret);
}

/* ------------------------------------------------------------------ dispatch */

/*! \brief Arena for a buffered body of len bytes: the body plus 3 bytes of decoded values per
 *  body byte (each wire value of n >= 4 bytes decodes into at most 3n bytes) plus slack. */
static size_t ArenaBytesFor(uint64_t len) {
  size_t body = (size_t)len;
  return ((body + 7u) & ~(size_t)7u) + (3u * body) + MINRPC_ARENA_SLACK;
}

/*! \brief Codes whose body is read whole into the arena before handling. */
static int32_t IsBufferedRequest(int32_t code) {
  return ((code == MINRPC_CODE_INIT_SERVER) || (code == MINRPC_CODE_CALL_FUNC) ||
          (code == MINRPC_CODE_COPY_FROM_REMOTE) ||
          ((code >= MINRPC_CODE_GET_GLOBAL_FUNC) && (code <= MINRPC_CODE_DEV_GET_CURRENT_STREAM)))
             ? 1
             : 0;
}

static MinRPCStep Dispatch(MinRPCServer* s, int32_t code) {
  MinRPCReader r;
  uint8_t* body = NULL;
  size_t len = (size_t)s->packet_left;
  if (IsBufferedRequest(code) == 0) {
    if (code == MINRPC_CODE_COPY_TO_REMOTE) {
      if (s->initialized == 0) {
        return MinRPCFail(s, kMinRPCCheckError,
                          "the server is not initialized: send kInitServer first");
      }
      if (MinRPCArenaOpen(s, MINRPC_COPY_HEAD_ARENA) != MINRPC_OK) {
        return MINRPC_ERROR;
      }
      return MinRPCHandleCopyToRemote(s);
    }
    if ((code == MINRPC_CODE_RETURN) || (code == MINRPC_CODE_EXCEPTION) ||
        (code == MINRPC_CODE_COPY_ACK)) {
      return MinRPCFail(s, kMinRPCUnknownRPCCode, "code %ld (%s) is a reply, not a request",
                        (long)code, MinRPCCodeName(code));
    }
    return MinRPCFail(s, kMinRPCUnknownRPCCode, "code %ld", (long)code);
  }
  if ((code != MINRPC_CODE_INIT_SERVER) && (s->initialized == 0)) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "the server is not initialized: send kInitServer first");
  }
  if (MinRPCArenaOpen(s, ArenaBytesFor(s->packet_left)) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  body = (uint8_t*)MinRPCArenaAlloc(s, len);
  if (body == NULL) {
    return MINRPC_ERROR;
  }
  if (MinRPCReadBody(s, body, len) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  r.server = s;
  r.p = body;
  r.left = len;
  if (code == MINRPC_CODE_CALL_FUNC) {
    return CallFunc(s, &r);
  }
  if (code == MINRPC_CODE_INIT_SERVER) {
    return InitServer(s, &r);
  }
  if (code == MINRPC_CODE_COPY_FROM_REMOTE) {
    return MinRPCHandleCopyFromRemote(s, &r);
  }
  return MinRPCHandleSyscall(s, code, &r);
}

MinRPCServeResult MinRPCServerServeOne(MinRPCServer* s) {
  uint64_t len = 0u;
  int32_t eof = 0;
  uint8_t raw[4];
  int32_t code;
  MinRPCStep step;
  if (MinRPCReadLength(s, &len, &eof) != MINRPC_OK) {
    return kMinRPCFailed;
  }
  if (eof != 0) {
    return kMinRPCFinished;
  }
  if (len == 0u) {
    return kMinRPCServed; /* an empty packet is padding */
  }
  s->packet_left = len;
  if (len > (uint64_t)MINRPC_MAX_PACKET) {
    /* the stream cannot be trusted to find the next packet: answer, then end the session */
    (void)MinRPCFail(s, kMinRPCAllocError,
                     "packet length %llu exceeds the server's %lu-byte limit (ask %s); ending "
                     "the session",
                     (unsigned long long)len, (unsigned long)MINRPC_MAX_PACKET,
                     MINRPC_MAX_PACKET_FUNC);
    (void)MinRPCSendException(s);
    (void)MinRPCFatal(s, kMinRPCAllocError);
    return kMinRPCFailed;
  }
  if (len < 4u) {
    step = MinRPCFail(s, kMinRPCCheckError, "a %llu-byte packet has no room for its code",
                      (unsigned long long)len);
    code = 0;
  } else {
    if (MinRPCReadBody(s, raw, sizeof(raw)) != MINRPC_OK) {
      return kMinRPCFailed;
    }
    code = (int32_t)MinRPCGetU32(raw);
    MINRPC_TRACE(MINRPC_TRACE_PACKET, MINRPC_TRACE_BEGIN, (uint32_t)code, len + 8u);
    step = (code == MINRPC_CODE_SHUTDOWN) ? MINRPC_OK : Dispatch(s, code);
  }
  MinRPCArenaClose(s);
  if ((step != MINRPC_FATAL) && (MinRPCDrain(s) != MINRPC_OK)) {
    step = MINRPC_FATAL;
  }
  if (step == MINRPC_ERROR) {
    step = MinRPCSendException(s);
  }
  MINRPC_TRACE(MINRPC_TRACE_PACKET, MINRPC_TRACE_END, (uint32_t)code, len + 8u);
  if (step == MINRPC_FATAL) {
    return kMinRPCFailed;
  }
  return (code == MINRPC_CODE_SHUTDOWN) ? kMinRPCFinished : kMinRPCServed;
}

int32_t MinRPCServerServe(MinRPCServer* server) {
  MinRPCServeResult result = kMinRPCServed;
  while (result == kMinRPCServed) {
    result = MinRPCServerServeOne(server);
  }
  MinRPCServerRelease(server);
  return (result == kMinRPCFinished) ? (int32_t)kMinRPCSuccess : server->status;
}

void MinRPCServerRelease(MinRPCServer* server) {
  while (server->num_allocations > 0u) {
    MinRPCAllocation* a = &server->allocations[server->num_allocations - 1u];
    (void)TVMDeviceFreeDataSpace(a->device, a->ptr);
    server->num_allocations -= 1u;
  }
  while (server->num_handles > 0u) {
    MinRPCHandleEntry* e = &server->handles[server->num_handles - 1u];
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
