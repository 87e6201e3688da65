/*!
 * \file minrpc_unit_test.c
 * \brief MinRPC over an in-memory channel that hands out one byte per read, with a caller-given
 *        static arena: packets that fit are served, a packet that does not is answered with
 *        kAllocError and the server keeps serving, kShutdown ends the loop.
 */
#include <stdio.h>
#include <string.h>

#include "../minrpc_server.h"
#include "pytvm_crt/crt.h"

typedef struct {
  uint8_t in[64 * 1024];
  size_t in_len;
  size_t in_pos;
  uint8_t out[64 * 1024];
  size_t out_len;
  size_t out_pos;
} MemoryChannel;

static MemoryChannel g_ch;
static int g_failures = 0;

static int64_t MemRead(void* ctx, uint8_t* buf, size_t n) {
  MemoryChannel* ch = (MemoryChannel*)ctx;
  if ((n == 0u) || (ch->in_pos >= ch->in_len)) {
    return 0;
  }
  buf[0] = ch->in[ch->in_pos]; /* one byte at a time: every partial-read path runs */
  ch->in_pos += 1u;
  return 1;
}

static int32_t MemWrite(void* ctx, const uint8_t* buf, size_t n) {
  MemoryChannel* ch = (MemoryChannel*)ctx;
  if (n > sizeof(ch->out) - ch->out_len) {
    return -1;
  }
  (void)memcpy(ch->out + ch->out_len, buf, n);
  ch->out_len += n;
  return 0;
}

static void Put(const void* data, size_t n) {
  (void)memcpy(g_ch.in + g_ch.in_len, data, n);
  g_ch.in_len += n;
}

static void PutU32(uint32_t v) {
  uint8_t b[4];
  uint32_t i;
  for (i = 0u; i < 4u; ++i) {
    b[i] = (uint8_t)(v >> (8u * i));
  }
  Put(b, 4u);
}

static void PutU64(uint64_t v) {
  PutU32((uint32_t)v);
  PutU32((uint32_t)(v >> 32));
}

/*! \brief A packet whose body is code + `n` bytes of `body`. */
static void Packet(uint32_t code, const uint8_t* body, size_t n) {
  PutU64(4u + (uint64_t)n);
  PutU32(code);
  Put(body, n);
}

static uint32_t GetU32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t GetU64(const uint8_t* p) {
  return (uint64_t)GetU32(p) | ((uint64_t)GetU32(p + 4) << 32);
}

/*! \brief The next reply: its code, body after the code in *body, length in *len. */
static int32_t Reply(const uint8_t** body, size_t* len) {
  uint64_t size = GetU64(g_ch.out + g_ch.out_pos);
  int32_t code = (int32_t)GetU32(g_ch.out + g_ch.out_pos + 8u);
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

static int Echo(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
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

static uint8_t g_arena[8192];
static MinRPCServer g_server;

int main(void) {
  static uint8_t big[16 * 1024];
  uint8_t body[64];
  const uint8_t* r = NULL;
  size_t n = 0u;
  MinRPCChannel channel;
  uint64_t handle;

  CHECK(TVMInitializeRuntime() == 0);
  CHECK(TVMCrtFuncRegisterGlobal("test.echo", Echo, 1) == 0);
  channel.ctx = &g_ch;
  channel.read = MemRead;
  channel.write = MemWrite;
  CHECK(MinRPCServerInit(&g_server, channel, g_arena, sizeof(g_arena)) == 0);

  /* kInitServer "0.8.0" [] */
  (void)memcpy(body, "\x05\0\0\0\0\0\0\0" "0.8.0" "\0\0\0\0", 17u);
  Packet(2u, body, 17u);
  /* empty packet (padding), then kGetGlobalFunc ["test.echo"] */
  PutU64(0u);
  (void)memcpy(body, "\x01\0\0\0" "\x08\0\0\0" "\x09\0\0\0\0\0\0\0" "test.echo", 25u);
  Packet(9u, body, 25u);
  CHECK(MinRPCServerServeOne(&g_server) == kMinRPCServed);
  CHECK(MinRPCServerServeOne(&g_server) == kMinRPCServed);
  CHECK(MinRPCServerServeOne(&g_server) == kMinRPCServed);
  CHECK(Reply(&r, &n) == 4 && n == 8u); /* [None] */
  CHECK(Reply(&r, &n) == 4 && n == 16u);
  handle = GetU64(r + 8);
  CHECK(handle != 0u);

  /* kCallFunc echo(Int 7) -> [Int 1][Int 7] */
  PutU64(4u + 8u + 4u + 12u);
  PutU32(3u);
  PutU64(handle);
  PutU32(1u);
  PutU32(1u);
  PutU64(7u);
  CHECK(MinRPCServerServeOne(&g_server) == kMinRPCServed);
  CHECK(Reply(&r, &n) == 4 && n == 28u && GetU64(r + 8) == 1u && GetU64(r + 20) == 7u);

  /* echo(bytes of 16 KiB): the body does not fit the 8 KiB arena -> kAllocError, keep going */
  PutU64(4u + 8u + 4u + 12u + sizeof(big));
  PutU32(3u);
  PutU64(handle);
  PutU32(1u);
  PutU32(9u);
  PutU64(sizeof(big));
  Put(big, sizeof(big));
  CHECK(MinRPCServerServeOne(&g_server) == kMinRPCServed);
  CHECK(Reply(&r, &n) == 5 && strstr((const char*)r + 16, "kAllocError") != NULL);

  /* an unknown code is answered; then kShutdown ends the loop */
  Packet(42u, body, 3u);
  CHECK(MinRPCServerServeOne(&g_server) == kMinRPCServed);
  CHECK(Reply(&r, &n) == 5 && memcmp(r + 16, "RPCServerError: kUnknownRPCCode: code 42", 40u) == 0);
  Packet(1u, body, 0u);
  CHECK(MinRPCServerServe(&g_server) == 0);
  CHECK(g_ch.out_pos == g_ch.out_len);

  (void)printf("minrpc unit test: %d failed\n", g_failures);
  return (g_failures == 0) ? 0 : 1;
}
