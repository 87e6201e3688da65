/*!
 * \file minrpc_io.c
 * \brief MinRPC channel input/output, the per-packet arena and error texts.
 */
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

/* ------------------------------------------------------------------ little-endian bytes */

void pytvm_minrpc_put_u32(uint8_t* p, uint32_t v) {
  uint32_t i;
  for (i = 0u; i < 4u; ++i) {
    p[i] = (uint8_t)(v >> (8u * i));
  }
}

void pytvm_minrpc_put_u64(uint8_t* p, uint64_t v) { /* two halves: no 64-bit shifts */
  pytvm_minrpc_put_u32(p, (uint32_t)v);
  pytvm_minrpc_put_u32(p + 4, (uint32_t)(v >> 32));
}

uint32_t pytvm_minrpc_get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

uint64_t pytvm_minrpc_get_u64(const uint8_t* p) {
  return (uint64_t)pytvm_minrpc_get_u32(p) | ((uint64_t)pytvm_minrpc_get_u32(p + 4) << 32);
}

/* ------------------------------------------------------------------ errors */

pytvm_crt_text* pytvm_minrpc_error(pytvm_minrpc_server* s, int32_t status) {
  pytvm_crt_text_init(&s->error_text, s->error, sizeof(s->error));
  pytvm_crt_text_str(&s->error_text, "RPCServerError: ");
  pytvm_crt_text_str(&s->error_text, pytvm_minrpc_status_name(status));
  return &s->error_text;
}

pytvm_minrpc_step pytvm_minrpc_fail_text(pytvm_minrpc_server* s, const char* text) {
  const char* shown = ((text != NULL) && (text[0] != '\0')) ? text : "RuntimeError: call failed";
  pytvm_crt_text_init(&s->error_text, s->error, sizeof(s->error));
  pytvm_crt_text_str(&s->error_text, shown);
  return MINRPC_ERROR;
}

pytvm_minrpc_step pytvm_minrpc_fatal(pytvm_minrpc_server* s, int32_t status) {
  if (s->status == (int32_t)kMinRPCSuccess) {
    s->status = status;
  }
  return MINRPC_FATAL;
}

/* ------------------------------------------------------------------ arena */

static const DLDevice kArenaDevice = {1, 0};

pytvm_minrpc_step pytvm_minrpc_arena_open(pytvm_minrpc_server* s, size_t bytes) {
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
    {
      pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
      PYTVM_CRT_MSG_STR(msg, ": no memory for a ");
      PYTVM_CRT_MSG_U64(msg, bytes);
      PYTVM_CRT_MSG_STR(msg, "-byte packet arena");
    }
    return MINRPC_ERROR;
  }
  s->arena = (uint8_t*)pages;
  s->arena_cap = bytes;
  return MINRPC_OK;
}

void* pytvm_minrpc_arena_alloc(pytvm_minrpc_server* s, size_t n) {
  size_t start = (s->arena_used + 7u) & ~(size_t)7u;
  if ((s->arena == NULL) || (start > s->arena_cap) || (n > (s->arena_cap - start))) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": the packet needs more than its ");
    PYTVM_CRT_MSG_U64(msg, s->arena_cap);
    PYTVM_CRT_MSG_STR(msg, "-byte arena (");
    PYTVM_CRT_MSG_U64(msg, n);
    PYTVM_CRT_MSG_STR(msg, " more bytes asked)");
    return NULL;
  }
  s->arena_used = start + n;
  return s->arena + start;
}

void pytvm_minrpc_arena_close(pytvm_minrpc_server* s) {
  if ((s->fixed_arena == NULL) && (s->arena != NULL)) {
    (void)TVMPlatformMemoryFree(s->arena, kArenaDevice);
  }
  s->arena = NULL;
  s->arena_cap = 0u;
  s->arena_used = 0u;
}

#if TVM_CRT_ACCELERATOR
uint8_t* pytvm_minrpc_stage_open(pytvm_minrpc_server* s, size_t n) {
  void* pages = NULL;
  if (s->fixed_arena != NULL) {
    return (uint8_t*)pytvm_minrpc_arena_alloc(s, n);
  }
  if (TVMPlatformMemoryAllocate(n, kArenaDevice, &pages) != 0) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCAllocError);
    PYTVM_CRT_MSG_STR(msg, ": no memory for a ");
    PYTVM_CRT_MSG_U64(msg, n);
    PYTVM_CRT_MSG_STR(msg, "-byte staging buffer");
    return NULL;
  }
  return (uint8_t*)pages;
}

void pytvm_minrpc_stage_close(pytvm_minrpc_server* s, uint8_t* stage) {
  if ((s->fixed_arena == NULL) && (stage != NULL)) {
    (void)TVMPlatformMemoryFree(stage, kArenaDevice);
  }
}
#endif /* TVM_CRT_ACCELERATOR */

/* ------------------------------------------------------------------ input */

/*! \brief refill the read-ahead buffer (it must be empty). *got = bytes read (0 at EOF). */
static pytvm_minrpc_step refill(pytvm_minrpc_server* s, size_t* got) {
  int64_t n = s->channel.read(s->channel.ctx, s->rx, sizeof(s->rx));
  s->rx_pos = 0u;
  s->rx_len = 0u;
  *got = 0u;
  if (n < 0) {
    return pytvm_minrpc_fatal(s, kMinRPCReadError);
  }
  if ((uint64_t)n > (uint64_t)sizeof(s->rx)) {
    return pytvm_minrpc_fatal(s, kMinRPCReadError);
  }
  s->rx_len = (size_t)n;
  *got = (size_t)n;
  return MINRPC_OK;
}

/*! \brief Exactly n bytes from the channel; EOF before the last one is a read error. */
static pytvm_minrpc_step read_exact(pytvm_minrpc_server* s, uint8_t* dst, size_t n) {
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
        return pytvm_minrpc_fatal(s, kMinRPCReadError);
      }
      done += (size_t)got;
    } else {
      size_t got = 0u;
      if (refill(s, &got) != MINRPC_OK) {
        return MINRPC_FATAL;
      }
      if (got == 0u) {
        return pytvm_minrpc_fatal(s, kMinRPCReadError);
      }
    }
  }
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_read_body(pytvm_minrpc_server* s, uint8_t* dst, size_t n) {
  if (n > s->packet_left) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": the packet ends ");
    PYTVM_CRT_MSG_U64(msg, n - s->packet_left);
    PYTVM_CRT_MSG_STR(msg, " bytes before its last field");
    return MINRPC_ERROR;
  }
  if (read_exact(s, dst, n) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  s->packet_left -= n;
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_drain(pytvm_minrpc_server* s) {
  while (s->packet_left > 0u) {
    size_t have = s->rx_len - s->rx_pos;
    if (have == 0u) {
      size_t got = 0u;
      if (refill(s, &got) != MINRPC_OK) {
        return MINRPC_FATAL;
      }
      if (got == 0u) {
        return pytvm_minrpc_fatal(s, kMinRPCReadError);
      }
      have = got;
    }
    if (have > s->packet_left) {
      have = s->packet_left;
    }
    s->rx_pos += have;
    s->packet_left -= have;
  }
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_read_length(pytvm_minrpc_server* s, uint64_t* len, int32_t* eof) {
  uint8_t raw[8];
  *len = 0u;
  *eof = 0;
  if (s->rx_pos == s->rx_len) {
    size_t got = 0u;
    if (refill(s, &got) != MINRPC_OK) {
      return MINRPC_FATAL;
    }
    if (got == 0u) {
      *eof = 1;
      return MINRPC_OK;
    }
  }
  if (read_exact(s, raw, sizeof(raw)) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  *len = pytvm_minrpc_get_u64(raw);
  return MINRPC_OK;
}

/* ------------------------------------------------------------------ output */

pytvm_minrpc_step pytvm_minrpc_write(pytvm_minrpc_server* s, const uint8_t* data, size_t n) {
  if (n == 0u) {
    return MINRPC_OK;
  }
  if (s->channel.write(s->channel.ctx, data, n) != 0) {
    return pytvm_minrpc_fatal(s, kMinRPCWriteError);
  }
  return MINRPC_OK;
}

pytvm_minrpc_step pytvm_minrpc_send_exception(pytvm_minrpc_server* s) {
  /* u64 len, i32 kException, i32 num_args = 1, i32 RawStr, u64 text length, then the text */
  uint8_t head[28];
  size_t text_len = strlen(s->error);
  pytvm_minrpc_put_u64(head, (uint64_t)(20u + text_len));
  pytvm_minrpc_put_u32(head + 8, (uint32_t)MINRPC_CODE_EXCEPTION);
  pytvm_minrpc_put_u32(head + 12, 1u);
  pytvm_minrpc_put_u32(head + 16, (uint32_t)kTVMStr);
  pytvm_minrpc_put_u64(head + 20, (uint64_t)text_len);
  if (pytvm_minrpc_write(s, head, sizeof(head)) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  return pytvm_minrpc_write(s, (const uint8_t*)s->error, text_len);
}
