/*!
 * \file hexagon_rpc_impl.c
 * \brief hexagon_rpc_open/send/receive/close on top of the MinRPC server (see
 *        hexagon_rpc_impl.h): what the generated skel calls on the accelerator side, as
 *        seed 000's HexagonRPCServer does (io.SetReadBuffer(data); ProcessOnePacket()).
 *
 * The server's channel reads from the input buffer but never past the end of the packet
 * being served (`limit`), so pytvm_minrpc_server_serve_one is only started on a complete packet and
 * leaves nothing of the next one in its read-ahead buffer.
 */
#include "hexagon_rpc_impl.h"

#include <stdio.h>
#include <string.h>

#include "pytvm_crt/crt.h"

/* The reserve must fit in the output buffer, and a packet in the input buffer. */
typedef char pytvm_hexagon_rpc_out_check_t[(PYTVM_HEXAGON_RPC_OUT_BYTES >=
                                      PYTVM_HEXAGON_RPC_OUT_RESERVE) ? 1 : -1];
typedef char pytvm_hexagon_rpc_in_check_t[(PYTVM_HEXAGON_RPC_IN_BYTES >=
                                     (size_t)MINRPC_MAX_PACKET + 8u) ? 1 : -1];

typedef enum {
  kRpcClosed = 0,   /* no session */
  kRpcServing = 1,  /* open, the server takes packets */
  kRpcEnded = 2     /* open, the server ended (kShutdown or fatal): replies drain, then EOF */
} rpc_state_t;

typedef struct {
  rpc_state_t state;
  uint32_t handle;     /* of the open session; 0 when closed */
  uint32_t last_handle;
  int32_t stack_size;
  /* input: [in_pos, in_len) not yet served; the server reads up to `limit` */
  size_t in_pos;
  size_t in_len;
  size_t limit;
  /* output: [out_pos, out_len) not yet received */
  size_t out_pos;
  size_t out_len;
  size_t reply_mark;   /* out_len when the packet being served started */
  int32_t overflow;    /* the packet being served wrote more than the output holds */
  char uri[PYTVM_HEXAGON_RPC_URI_BYTES];
  char info[PYTVM_HEXAGON_RPC_URI_BYTES + 64u];
} rpc_session_t;

static pytvm_minrpc_server g_server;
static rpc_session_t g_rpc;
static uint8_t g_in[PYTVM_HEXAGON_RPC_IN_BYTES];
static uint8_t g_out[PYTVM_HEXAGON_RPC_OUT_BYTES];

/* ------------------------------------------------------------------ the server's channel */

static int64_t rpc_read(void* ctx, uint8_t* buf, size_t n) {
  size_t avail = g_rpc.limit - g_rpc.in_pos;
  (void)ctx;
  if (n > avail) {
    n = avail;
  }
  (void)memcpy(buf, g_in + g_rpc.in_pos, n);
  g_rpc.in_pos += n;
  return (int64_t)n; /* 0 only if the server reads past the packet (it does not) */
}

static int32_t rpc_write(void* ctx, const uint8_t* buf, size_t n) {
  (void)ctx;
  if (n > (PYTVM_HEXAGON_RPC_OUT_BYTES - g_rpc.out_len)) {
    if (g_rpc.overflow == 0) {
      (void)fprintf(stderr,
                    "pytvm-device: hexagon_rpc: a reply exceeds the %lu bytes of free output "
                    "buffer; ending the session\n",
                    (unsigned long)(PYTVM_HEXAGON_RPC_OUT_BYTES - g_rpc.reply_mark));
    }
    g_rpc.overflow = 1;
    return -1;
  }
  (void)memcpy(g_out + g_rpc.out_len, buf, n);
  g_rpc.out_len += n;
  return 0;
}

/* ------------------------------------------------------------------ serving */

static uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0u;
  uint32_t i;
  for (i = 0u; i < 8u; ++i) {
    v |= (uint64_t)p[i] << (8u * i);
  }
  return v;
}

/*! \brief Move the unconsumed bytes [*pos, *len) of `buf` to its start. */
static void compact(uint8_t* buf, size_t* pos, size_t* len) {
  if (*pos == *len) {
    *pos = 0u;
    *len = 0u;
  } else if (*pos > 0u) {
    (void)memmove(buf, buf + *pos, *len - *pos);
    *len -= *pos;
    *pos = 0u;
  } else {
    /* already at the start */
  }
}

/*! \brief Serve every complete packet in the input while the output has room for a reply. */
static void pump(void) {
  while (g_rpc.state == kRpcServing) {
    size_t avail = g_rpc.in_len - g_rpc.in_pos;
    uint64_t len;
    size_t need;
    pytvm_minrpc_serve_result result;
    if (avail < 8u) {
      break;
    }
    len = get_u64(g_in + g_rpc.in_pos);
    if (len > (uint64_t)MINRPC_MAX_PACKET) {
      need = 8u; /* the server answers from the length alone, then ends the session */
    } else {
      need = 8u + (size_t)len;
      if (avail < need) {
        break; /* wait for the rest of the packet */
      }
    }
    compact(g_out, &g_rpc.out_pos, &g_rpc.out_len);
    if ((PYTVM_HEXAGON_RPC_OUT_BYTES - g_rpc.out_len) < PYTVM_HEXAGON_RPC_OUT_RESERVE) {
      break; /* wait for receive to drain the replies */
    }
    g_rpc.limit = g_rpc.in_pos + need;
    g_rpc.reply_mark = g_rpc.out_len;
    g_rpc.overflow = 0;
    result = pytvm_minrpc_server_serve_one(&g_server);
    if (g_rpc.overflow != 0) {
      g_rpc.out_len = g_rpc.reply_mark; /* never hand out half a reply */
    }
    g_rpc.in_pos = g_rpc.limit;
    if (result != kMinRPCServed) {
      g_rpc.state = kRpcEnded; /* kShutdown, or a fatal error already answered */
      g_rpc.in_pos = g_rpc.in_len;
    }
  }
  compact(g_in, &g_rpc.in_pos, &g_rpc.in_len);
}

static int32_t valid(uint32_t h) {
  return ((h != 0u) && (g_rpc.state != kRpcClosed) && (h == g_rpc.handle)) ? 1 : 0;
}

static int skel_info(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                    void* resource) {
  (void)args;
  (void)codes;
  (void)num_args;
  (void)resource;
  ret->v_str = g_rpc.info;
  *ret_code = (int)kTVMStr;
  return 0;
}

/* ------------------------------------------------------------------ the four calls */

int32_t hexagon_rpc_open(const char* uri, int32_t stack_size, uint32_t* h) {
  pytvm_minrpc_channel channel;
  size_t uri_len;
  *h = 0u;
  if (g_rpc.state != kRpcClosed) {
    return PYTVM_HEXAGON_RPC_EBUSY;
  }
  uri_len = strlen(uri);
  if ((uri_len == 0u) || (uri_len >= sizeof(g_rpc.uri)) || (stack_size < 0)) {
    return PYTVM_HEXAGON_RPC_EARG;
  }
  channel.ctx = NULL;
  channel.read = rpc_read;
  channel.write = rpc_write;
  if ((pytvm_minrpc_server_init(&g_server, channel, NULL, 0u) != 0) ||
      (pytvm_crt_func_register_global(PYTVM_HEXAGON_RPC_INFO_FUNC, skel_info, 1) != 0)) {
    return PYTVM_HEXAGON_RPC_EINIT;
  }
  g_rpc.last_handle += 1u;
  if (g_rpc.last_handle == 0u) {
    g_rpc.last_handle = 1u;
  }
  g_rpc.handle = g_rpc.last_handle;
  g_rpc.state = kRpcServing;
  g_rpc.stack_size = stack_size;
  g_rpc.in_pos = g_rpc.in_len = g_rpc.limit = 0u;
  g_rpc.out_pos = g_rpc.out_len = g_rpc.reply_mark = 0u;
  g_rpc.overflow = 0;
  (void)memcpy(g_rpc.uri, uri, uri_len + 1u);
  (void)snprintf(g_rpc.info, sizeof(g_rpc.info), "uri=%s;stack_size=%ld;handle=%lu", g_rpc.uri,
                 (long)stack_size, (unsigned long)g_rpc.handle);
  *h = g_rpc.handle;
  return 0;
}

int32_t hexagon_rpc_send(uint32_t h, const uint8_t* data, uint32_t data_len) {
  size_t n = (size_t)data_len;
  if (valid(h) == 0) {
    return PYTVM_HEXAGON_RPC_EHANDLE;
  }
  if (g_rpc.state != kRpcServing) {
    return PYTVM_HEXAGON_RPC_ECLOSED;
  }
  if (n > (PYTVM_HEXAGON_RPC_IN_BYTES - g_rpc.in_len)) {
    compact(g_in, &g_rpc.in_pos, &g_rpc.in_len);
    if (n > (PYTVM_HEXAGON_RPC_IN_BYTES - g_rpc.in_len)) {
      return PYTVM_HEXAGON_RPC_EFULL;
    }
  }
  if (n > 0u) {
    (void)memcpy(g_in + g_rpc.in_len, data, n);
    g_rpc.in_len += n;
  }
  pump();
  return 0;
}

int32_t hexagon_rpc_receive(uint32_t h, uint32_t max, uint8_t* data, uint32_t data_cap,
                            uint32_t* data_len) {
  size_t n;
  *data_len = 0u;
  if (valid(h) == 0) {
    return PYTVM_HEXAGON_RPC_EHANDLE;
  }
  if (g_rpc.out_pos == g_rpc.out_len) {
    pump(); /* packets held back while the output was full */
  }
  n = g_rpc.out_len - g_rpc.out_pos;
  if (n > (size_t)max) {
    n = (size_t)max;
  }
  if (n > (size_t)data_cap) {
    n = (size_t)data_cap;
  }
  if ((n == 0u) && (max > 0u) && (data_cap > 0u) && (g_rpc.state == kRpcServing)) {
    return PYTVM_HEXAGON_RPC_ENODATA;
  }
  if (n > 0u) {
    (void)memcpy(data, g_out + g_rpc.out_pos, n);
    g_rpc.out_pos += n;
  }
  *data_len = (uint32_t)n;
  return 0;
}

int32_t hexagon_rpc_close(uint32_t h) {
  if (valid(h) == 0) {
    return PYTVM_HEXAGON_RPC_EHANDLE;
  }
  pytvm_minrpc_server_release(&g_server);
  g_rpc.state = kRpcClosed;
  g_rpc.handle = 0u;
  g_rpc.in_pos = g_rpc.in_len = g_rpc.limit = 0u;
  g_rpc.out_pos = g_rpc.out_len = g_rpc.reply_mark = 0u;
  (void)snprintf(g_rpc.info, sizeof(g_rpc.info), "closed");
  return 0;
}

void pytvm_hexagon_rpc_shutdown(void) {
  if (g_rpc.state != kRpcClosed) {
    (void)hexagon_rpc_close(g_rpc.handle);
  }
}
