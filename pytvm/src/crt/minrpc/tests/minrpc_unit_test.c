/*!
 * \file minrpc_unit_test.c
 * \brief MinRPC over an in-memory channel that hands out one byte per read, with a caller-given
 *        static arena: packets that fit are served, a packet that does not is answered with
 *        kAllocError and the server keeps serving, kShutdown ends the loop.
 */
#include <stdio.h>
#include <string.h>

#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/crt.h"

typedef struct {
  uint8_t in[64 * 1024];
  size_t in_len;
  size_t in_pos;
  uint8_t out[64 * 1024];
  size_t out_len;
  size_t out_pos;
} memory_channel_t;

static memory_channel_t g_ch;
static int g_failures = 0;

static int64_t mem_read(void* ctx, uint8_t* buf, size_t n) {
  memory_channel_t* ch = (memory_channel_t*)ctx;
  if ((n == 0u) || (ch->in_pos >= ch->in_len)) {
    return 0;
  }
  buf[0] = ch->in[ch->in_pos]; /* one byte at a time: every partial-read path runs */
  ch->in_pos += 1u;
  return 1;
}

static int32_t mem_write(void* ctx, const uint8_t* buf, size_t n) {
  memory_channel_t* ch = (memory_channel_t*)ctx;
  if (n > sizeof(ch->out) - ch->out_len) {
    return -1;
  }
  (void)memcpy(ch->out + ch->out_len, buf, n);
  ch->out_len += n;
  return 0;
}

static void put(const void* data, size_t n) {
  (void)memcpy(g_ch.in + g_ch.in_len, data, n);
  g_ch.in_len += n;
}

static void put_u32(uint32_t v) {
  uint8_t b[4];
  uint32_t i;
  for (i = 0u; i < 4u; ++i) {
    b[i] = (uint8_t)(v >> (8u * i));
  }
  put(b, 4u);
}

static void put_u64(uint64_t v) {
  put_u32((uint32_t)v);
  put_u32((uint32_t)(v >> 32));
}

/*! \brief A packet whose body is code + `n` bytes of `body`. */
static void packet(uint32_t code, const uint8_t* body, size_t n) {
  put_u64(4u + (uint64_t)n);
  put_u32(code);
  put(body, n);
}

static uint32_t get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t get_u64(const uint8_t* p) {
  return (uint64_t)get_u32(p) | ((uint64_t)get_u32(p + 4) << 32);
}

/*! \brief The next reply: its code, body after the code in *body, length in *len. */
static int32_t reply(const uint8_t** body, size_t* len) {
  uint64_t size = get_u64(g_ch.out + g_ch.out_pos);
  int32_t code = (int32_t)get_u32(g_ch.out + g_ch.out_pos + 8u);
  *body = g_ch.out + g_ch.out_pos + 12u;
  *len = (size_t)size - 4u;
  g_ch.out_pos += 8u + (size_t)size;
  return code;
}

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      (void)printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
      g_failures += 1;                                               \
    }                                                                \
  } while (0)

static int echo(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                void* resource) {
  (void)resource;
  if (num_args != 1) {
    TVMAPISetLastError("TypeError: echo takes one argument");
    return -1;
  }
  *ret = args[0];
  *ret_code = codes[0];
  return 0;
}

/* An arena smaller than the largest packet, and a payload between the two. */
#define ARENA_BYTES ((MINRPC_MAX_PACKET / 2u < 8192u) ? MINRPC_MAX_PACKET / 2u : 8192u)
#define BIG_BYTES (ARENA_BYTES + ARENA_BYTES / 2u)
static uint8_t g_arena[ARENA_BYTES];
static pytvm_minrpc_server g_server;

int main(void) {
  static uint8_t big[BIG_BYTES];
  uint8_t body[64];
  const uint8_t* r = NULL;
  size_t n = 0u;
  pytvm_minrpc_channel channel;
  uint64_t handle;

  CHECK(TVMInitializeRuntime() == 0);
  CHECK(pytvm_crt_func_register_global("test.echo", echo, 1) == 0);
  channel.ctx = &g_ch;
  channel.read = mem_read;
  channel.write = mem_write;
  CHECK(pytvm_minrpc_server_init(&g_server, channel, g_arena, sizeof(g_arena)) == 0);

  /* kInitServer "0.8.0" [] */
  (void)memcpy(body, "\x05\0\0\0\0\0\0\0" "0.8.0" "\0\0\0\0", 17u);
  packet(2u, body, 17u);
  /* empty packet (padding), then kGetGlobalFunc ["test.echo"] */
  put_u64(0u);
  (void)memcpy(body, "\x01\0\0\0" "\x08\0\0\0" "\x09\0\0\0\0\0\0\0" "test.echo", 25u);
  packet(9u, body, 25u);
  CHECK(pytvm_minrpc_server_serve_one(&g_server) == kMinRPCServed);
  CHECK(pytvm_minrpc_server_serve_one(&g_server) == kMinRPCServed);
  CHECK(pytvm_minrpc_server_serve_one(&g_server) == kMinRPCServed);
  CHECK(reply(&r, &n) == 4 && n == 8u); /* [None] */
  CHECK(reply(&r, &n) == 4 && n == 16u);
  handle = get_u64(r + 8);
  CHECK(handle != 0u);

  /* kCallFunc echo(Int 7) -> [Int 1][Int 7] */
  put_u64(4u + 8u + 4u + 12u);
  put_u32(3u);
  put_u64(handle);
  put_u32(1u);
  put_u32(1u);
  put_u64(7u);
  CHECK(pytvm_minrpc_server_serve_one(&g_server) == kMinRPCServed);
  CHECK(reply(&r, &n) == 4 && n == 28u && get_u64(r + 8) == 1u && get_u64(r + 20) == 7u);

  /* echo(bytes larger than the arena): the body does not fit -> kAllocError, keep going */
  put_u64(4u + 8u + 4u + 12u + sizeof(big));
  put_u32(3u);
  put_u64(handle);
  put_u32(1u);
  put_u32(9u);
  put_u64(sizeof(big));
  put(big, sizeof(big));
  CHECK(pytvm_minrpc_server_serve_one(&g_server) == kMinRPCServed);
  CHECK(reply(&r, &n) == 5 && strstr((const char*)r + 16, "kAllocError") != NULL);

  /* an unknown code is answered; then kShutdown ends the loop */
  packet(42u, body, 3u);
  CHECK(pytvm_minrpc_server_serve_one(&g_server) == kMinRPCServed);
#if TVM_CRT_ERROR_TEXTS
  CHECK(reply(&r, &n) == 5 && memcmp(r + 16, "RPCServerError: kUnknownRPCCode: code 42", 40u) == 0);
#else
  CHECK(reply(&r, &n) == 5 && n == 16u + 31u &&
        memcmp(r + 16, "RPCServerError: kUnknownRPCCode", 31u) == 0);
#endif
  packet(1u, body, 0u);
  CHECK(pytvm_minrpc_server_serve(&g_server) == 0);
  CHECK(g_ch.out_pos == g_ch.out_len);

  (void)printf("minrpc unit test: %d failed\n", g_failures);
  return (g_failures == 0) ? 0 : 1;
}
