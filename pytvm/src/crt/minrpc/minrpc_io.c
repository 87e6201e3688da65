/*!
 * \file minrpc_io.c
 * \brief MinRPC channel input/output, the per-packet arena and error texts.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

static const char* const kStatusNames[] = {
    "kSuccess",
    "kInvalidTypeCodeObject",
    "kInvalidTypeCodeTensor",
    "kInvalidDLTensorFieldStride",
    "kInvalidDLTensorFieldByteOffset",
    "kUnknownTypeIndex",
    "kUnknownRPCCode",
    "kRPCCodeNotSupported",
    "kUnknownRPCSyscall",
    "kCheckError",
    "kReadError",
    "kWriteError",
    "kAllocError",
};

const char* MinRPCStatusName(int32_t status) {
  if ((status < 0) || (status > (int32_t)kMinRPCAllocError)) {
    return "kUnknownStatus";
  }
  return kStatusNames[status];
}

/* ------------------------------------------------------------------ little-endian bytes */

void MinRPCPutU32(uint8_t* p, uint32_t v) {
  uint32_t i;
  for (i = 0u; i < 4u; ++i) {
    p[i] = (uint8_t)(v >> (8u * i));
  }
}

void MinRPCPutU64(uint8_t* p, uint64_t v) {
  uint32_t i;
  for (i = 0u; i < 8u; ++i) {
    p[i] = (uint8_t)(v >> (8u * i));
  }
}

uint32_t MinRPCGetU32(const uint8_t* p) {
  uint32_t v = 0u;
  uint32_t i;
  for (i = 0u; i < 4u; ++i) {
    v |= (uint32_t)p[i] << (8u * i);
  }
  return v;
}

uint64_t MinRPCGetU64(const uint8_t* p) {
  uint64_t v = 0u;
  uint32_t i;
  for (i = 0u; i < 8u; ++i) {
    v |= (uint64_t)p[i] << (8u * i);
  }
  return v;
}

/* ------------------------------------------------------------------ errors */

MinRPCStep MinRPCFail(MinRPCServer* s, int32_t status, const char* fmt, ...) {
  va_list ap;
  int used = snprintf(s->error, sizeof(s->error), "RPCServerError: %s: ", MinRPCStatusName(status));
  if ((used > 0) && ((size_t)used < sizeof(s->error))) {
    va_start(ap, fmt);
    (void)vsnprintf(s->error + used, sizeof(s->error) - (size_t)used, fmt, ap);
    va_end(ap);
  }
  return MINRPC_ERROR;
}

MinRPCStep MinRPCFailText(MinRPCServer* s, const char* text) {
  const char* shown = ((text != NULL) && (text[0] != '\0')) ? text : "RuntimeError: call failed";
  (void)snprintf(s->error, sizeof(s->error), "%s", shown);
  return MINRPC_ERROR;
}

MinRPCStep MinRPCFatal(MinRPCServer* s, int32_t status) {
  if (s->status == (int32_t)kMinRPCSuccess) {
    s->status = status;
  }
  return MINRPC_FATAL;
}

/* ------------------------------------------------------------------ arena */

static const DLDevice kArenaDevice = {1, 0};

MinRPCStep MinRPCArenaOpen(MinRPCServer* s, size_t bytes) {
  void* pages = NULL;
  s->arena_used = 0u;
  if (s->fixed_arena != NULL) {
    s->arena = s->fixed_arena;
    s->arena_cap = s->fixed_arena_bytes;
    return MINRPC_OK;
  }
  if (TVMPlatformMemoryAllocate(bytes, kArenaDevice, &pages) != 0) {
    s->arena = NULL;
    s->arena_cap = 0u;
    return MinRPCFail(s, kMinRPCAllocError, "no memory for a %lu-byte packet arena",
                      (unsigned long)bytes);
  }
  s->arena = (uint8_t*)pages;
  s->arena_cap = bytes;
  return MINRPC_OK;
}

void* MinRPCArenaAlloc(MinRPCServer* s, size_t n) {
  size_t start = (s->arena_used + 7u) & ~(size_t)7u;
  if ((s->arena == NULL) || (start > s->arena_cap) || (n > (s->arena_cap - start))) {
    (void)MinRPCFail(s, kMinRPCAllocError,
                     "the packet needs more than its %lu-byte arena (%lu more bytes asked)",
                     (unsigned long)s->arena_cap, (unsigned long)n);
    return NULL;
  }
  s->arena_used = start + n;
  return s->arena + start;
}

void MinRPCArenaClose(MinRPCServer* s) {
  if ((s->fixed_arena == NULL) && (s->arena != NULL)) {
    (void)TVMPlatformMemoryFree(s->arena, kArenaDevice);
  }
  s->arena = NULL;
  s->arena_cap = 0u;
  s->arena_used = 0u;
}

uint8_t* MinRPCStageOpen(MinRPCServer* s, size_t n) {
  void* pages = NULL;
  if (s->fixed_arena != NULL) {
    return (uint8_t*)MinRPCArenaAlloc(s, n);
  }
  if (TVMPlatformMemoryAllocate(n, kArenaDevice, &pages) != 0) {
    (void)MinRPCFail(s, kMinRPCAllocError, "no memory for a %lu-byte staging buffer",
                     (unsigned long)n);
    return NULL;
  }
  return (uint8_t*)pages;
}

void MinRPCStageClose(MinRPCServer* s, uint8_t* stage) {
  if ((s->fixed_arena == NULL) && (stage != NULL)) {
    (void)TVMPlatformMemoryFree(stage, kArenaDevice);
  }
}

/* ------------------------------------------------------------------ input */

/*! \brief Refill the read-ahead buffer (it must be empty). *got = bytes read (0 at EOF). */
static MinRPCStep Refill(MinRPCServer* s, size_t* got) {
  int64_t n = s->channel.read(s->channel.ctx, s->rx, sizeof(s->rx));
  s->rx_pos = 0u;
  s->rx_len = 0u;
  *got = 0u;
  if (n < 0) {
    return MinRPCFatal(s, kMinRPCReadError);
  }
  if ((uint64_t)n > (uint64_t)sizeof(s->rx)) {
    return MinRPCFatal(s, kMinRPCReadError);
  }
  s->rx_len = (size_t)n;
  *got = (size_t)n;
  return MINRPC_OK;
}

/*! \brief Exactly n bytes from the channel; EOF before the last one is a read error. */
static MinRPCStep ReadExact(MinRPCServer* s, uint8_t* dst, size_t n) {
  size_t done = 0u;
  while (done < n) {
    size_t have = s->rx_len - s->rx_pos;
    size_t want = n - done;
    if (have > 0u) {
      size_t take = (have < want) ? have : want;
      (void)memcpy(dst + done, s->rx + s->rx_pos, take);
      s->rx_pos += take;
      done += take;
    } else if (want >= sizeof(s->rx)) {
      /* large pieces go straight to their destination */
      int64_t got = s->channel.read(s->channel.ctx, dst + done, want);
      if ((got <= 0) || ((uint64_t)got > (uint64_t)want)) {
        return MinRPCFatal(s, kMinRPCReadError);
      }
      done += (size_t)got;
    } else {
      size_t got = 0u;
      if (Refill(s, &got) != MINRPC_OK) {
        return MINRPC_FATAL;
      }
      if (got == 0u) {
        return MinRPCFatal(s, kMinRPCReadError);
      }
    }
  }
  return MINRPC_OK;
}

MinRPCStep MinRPCReadBody(MinRPCServer* s, uint8_t* dst, size_t n) {
  if ((uint64_t)n > s->packet_left) {
    return MinRPCFail(s, kMinRPCCheckError, "the packet ends %lu bytes before its last field",
                      (unsigned long)((uint64_t)n - s->packet_left));
  }
  if (ReadExact(s, dst, n) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  s->packet_left -= (uint64_t)n;
  return MINRPC_OK;
}

MinRPCStep MinRPCDrain(MinRPCServer* s) {
  while (s->packet_left > 0u) {
    size_t have = s->rx_len - s->rx_pos;
    if (have == 0u) {
      size_t got = 0u;
      if (Refill(s, &got) != MINRPC_OK) {
        return MINRPC_FATAL;
      }
      if (got == 0u) {
        return MinRPCFatal(s, kMinRPCReadError);
      }
      have = got;
    }
    if ((uint64_t)have > s->packet_left) {
      have = (size_t)s->packet_left;
    }
    s->rx_pos += have;
    s->packet_left -= (uint64_t)have;
  }
  return MINRPC_OK;
}

MinRPCStep MinRPCReadLength(MinRPCServer* s, uint64_t* len, int32_t* eof) {
  uint8_t raw[8];
  *len = 0u;
  *eof = 0;
  if (s->rx_pos == s->rx_len) {
    size_t got = 0u;
    if (Refill(s, &got) != MINRPC_OK) {
      return MINRPC_FATAL;
    }
    if (got == 0u) {
      *eof = 1;
      return MINRPC_OK;
    }
  }
  if (ReadExact(s, raw, sizeof(raw)) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  *len = MinRPCGetU64(raw);
  return MINRPC_OK;
}

/* ------------------------------------------------------------------ output */

MinRPCStep MinRPCWrite(MinRPCServer* s, const uint8_t* data, size_t n) {
  if (n == 0u) {
    return MINRPC_OK;
  }
  if (s->channel.write(s->channel.ctx, data, n) != 0) {
    return MinRPCFatal(s, kMinRPCWriteError);
  }
  return MINRPC_OK;
}

MinRPCStep MinRPCSendException(MinRPCServer* s) {
  /* u64 len, i32 kException, i32 num_args = 1, i32 RawStr, u64 text length, text */
  uint8_t* p = s->exception_packet;
  size_t text_len = strlen(s->error);
  if (text_len > (sizeof(s->exception_packet) - 28u)) {
    text_len = sizeof(s->exception_packet) - 28u;
  }
  MinRPCPutU64(p, (uint64_t)(20u + text_len));
  MinRPCPutU32(p + 8, (uint32_t)MINRPC_CODE_EXCEPTION);
  MinRPCPutU32(p + 12, 1u);
  MinRPCPutU32(p + 16, (uint32_t)kTVMStr);
  MinRPCPutU64(p + 20, (uint64_t)text_len);
  (void)memcpy(p + 28, s->error, text_len);
  return MinRPCWrite(s, p, 28u + text_len);
}
