/*!
 * \file serial_rpc.c
 * \brief Whole RPC packets over a serial stream; the protocol is described in serial_rpc.h.
 */
#include "pytvm_crt/serial_rpc.h"

#include <string.h>

#include "pytvm_crt/crt_config.h"

/* Wire constants of the answer (spec sections 2 and 4): kException carrying one RawStr. */
#define RPC_CODE_EXCEPTION 5u
#define TYPE_INDEX_RAW_STR 8u
#define ANSWER_HEAD 28u

static uint32_t get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t get_u64(const uint8_t* p) { /* two halves: no 64-bit shifts */
  return (uint64_t)get_u32(p) | ((uint64_t)get_u32(p + 4) << 32);
}

int pytvm_serial_rpc_init(pytvm_serial_rpc* r, pytvm_serial_stream* stream, uint8_t* buffer,
                          size_t capacity) {
  if (r == NULL || stream == NULL || buffer == NULL ||
      capacity < PYTVM_SERIAL_RPC_LENGTH_SIZE + 4u) {
    return PYTVM_SERIAL_ERR_ARG;
  }
  memset(r, 0, sizeof(*r));
  r->stream = stream;
  r->buffer = buffer;
  r->capacity = capacity;
  return PYTVM_SERIAL_OK;
}

static void drop_packet(pytvm_serial_rpc* r) {
  r->have = 0;
  r->need = 0;
  r->out = 0;
  r->ready = 0;
}

#define ANSWER_FIXED "RPCServerError: kReadError: serial link: torn packet"

#if TVM_CRT_ERROR_TEXTS
static void put_le(uint8_t* p, uint64_t v, unsigned n) {
  unsigned i;
  for (i = 0; i < n; ++i) p[i] = (uint8_t)(v >> (8u * i));
}

/* A tiny text builder (no stdio on a board). */
typedef struct {
  char* p;
  size_t len;
  size_t cap;
} text_t;

static void add(text_t* t, const char* s) {
  while (*s != '\0' && t->len < t->cap) t->p[t->len++] = *s++;
}

static void add_u64(text_t* t, uint64_t v) {
  /* digits by subtracting powers of ten: no 64-bit division helper on a 32-bit board */
  static const uint64_t powers[] = {
      10000000000000000000ull, 1000000000000000000ull, 100000000000000000ull,
      10000000000000000ull, 1000000000000000ull, 100000000000000ull, 10000000000000ull,
      1000000000000ull, 100000000000ull, 10000000000ull, 1000000000ull, 100000000ull,
      10000000ull, 1000000ull, 100000ull, 10000ull, 1000ull, 100ull, 10ull, 1ull};
  size_t i;
  int started = 0;
  for (i = 0; i < sizeof(powers) / sizeof(powers[0]); i++) {
    char digit = '0';
    while (v >= powers[i]) {
      v -= powers[i];
      digit++;
    }
    if (digit != '0' || started || powers[i] == 1u) {
      started = 1;
      if (t->len < t->cap) t->p[t->len++] = digit;
    }
  }
}

/* Why a packet was torn, appended to the answer. */
#define WHY(t, s) add((t), (s))
#define WHY_U64(t, v) add_u64((t), (v))

/* The answer to a torn or lost packet: one kException whose text is built in place. */
typedef struct {
  uint8_t packet[ANSWER_HEAD + PYTVM_SERIAL_RPC_TEXT_BYTES];
  text_t text;
} answer_t;

static text_t* begin_answer(answer_t* a) {
  a->text.p = (char*)a->packet + ANSWER_HEAD;
  a->text.len = 0;
  a->text.cap = PYTVM_SERIAL_RPC_TEXT_BYTES;
  add(&a->text, ANSWER_FIXED);
  add(&a->text, ": ");
  return &a->text;
}

static int send_answer(pytvm_serial_rpc* r, answer_t* a) {
  WHY(&a->text, "; it was discarded, not run");
  put_le(a->packet, 20u + a->text.len, 8u);
  put_le(a->packet + 8, RPC_CODE_EXCEPTION, 4u);
  put_le(a->packet + 12, 1u, 4u);
  put_le(a->packet + 16, TYPE_INDEX_RAW_STR, 4u);
  put_le(a->packet + 20, a->text.len, 8u);
  r->answered++;
  return pytvm_serial_rpc_write(r, a->packet, ANSWER_HEAD + a->text.len);
}
#else
/* Without TVM_CRT_ERROR_TEXTS the answer is its fixed head alone, one constant packet. */
#define ANSWER_TEXT_LEN (sizeof(ANSWER_FIXED) - 1u)
#define LE4(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24)
#define LE8(v) LE4(v), 0u, 0u, 0u, 0u

typedef struct {
  uint8_t unused;
} answer_t;
typedef answer_t text_t;

static const struct {
  uint8_t head[ANSWER_HEAD];
  char text[ANSWER_TEXT_LEN];
} kAnswer = {{LE8(20u + ANSWER_TEXT_LEN), LE4(RPC_CODE_EXCEPTION), LE4(1u), LE4(TYPE_INDEX_RAW_STR),
              LE8(ANSWER_TEXT_LEN)},
             ANSWER_FIXED};
/* The packet is the two arrays back to back (no padding between bytes). */
typedef char answer_is_packed[(sizeof(kAnswer) == ANSWER_HEAD + ANSWER_TEXT_LEN) ? 1 : -1];

/* The callers below are written for the texts: here they describe nothing and send kAnswer. */
#define WHY(t, s) ((void)(t))
#define WHY_U64(t, v) ((void)(t), (void)(v))
#define begin_answer(a) (a)
#define send_answer(r, a) send_fixed_answer(r)

static int send_fixed_answer(pytvm_serial_rpc* r) {
  r->answered++;
  return pytvm_serial_rpc_write(r, (const uint8_t*)&kAnswer, sizeof(kAnswer));
}
#endif

/* A dropped frame: tears the packet in progress, or may have held a whole packet. */
static int on_lost(pytvm_serial_rpc* r) {
  answer_t a;
  text_t* t;
  if (r->discarding) return PYTVM_SERIAL_OK;
  if (r->have == 0) {
    r->lost = 1;
    return PYTVM_SERIAL_OK;
  }
  t = begin_answer(&a);
  WHY(t, "a frame of it was dropped (truncated or corrupt) after ");
  WHY_U64(t, r->have);
  WHY(t, " bytes");
  drop_packet(r);
  r->discarding = 1;
  return send_answer(r, &a);
}

/* An end mark: the sender is at a packet boundary; whatever is unfinished here is torn. */
static int on_mark(pytvm_serial_rpc* r) {
  answer_t a;
  text_t* t;
  int torn = !r->discarding && (r->have > 0 || r->lost);
  r->marks++;
  r->discarding = 0;
  r->lost = 0;
  if (!torn) {
    drop_packet(r);
    return PYTVM_SERIAL_OK;
  }
  t = begin_answer(&a);
  if (r->have == 0) {
    WHY(t, "its frame was dropped (truncated or corrupt)");
  } else if (r->need == 0) {
    WHY(t, "it ended after ");
    WHY_U64(t, r->have);
    WHY(t, " of the 8 length bytes");
  } else {
    WHY(t, "its length field claims ");
    WHY_U64(t, r->need - PYTVM_SERIAL_RPC_LENGTH_SIZE);
    WHY(t, " body bytes but only ");
    WHY_U64(t, r->have - PYTVM_SERIAL_RPC_LENGTH_SIZE);
    WHY(t, " arrived before the end mark");
  }
  drop_packet(r);
  return send_answer(r, &a);
}

/* Body bytes: the next piece of the packet in progress. */
static int on_data(pytvm_serial_rpc* r, const uint8_t* data, size_t n) {
  r->lost = 0;
  if (r->discarding) return PYTVM_SERIAL_OK;
  memcpy(r->buffer + r->have, data, n);
  r->have += n;
  if (r->need == 0 && r->have == PYTVM_SERIAL_RPC_LENGTH_SIZE) {
    uint64_t body = get_u64(r->buffer);
    if (body > (uint64_t)(r->capacity - PYTVM_SERIAL_RPC_LENGTH_SIZE)) {
      answer_t a;
      text_t* t = begin_answer(&a);
      WHY(t, "its length field claims ");
      WHY_U64(t, body);
      WHY(t, " body bytes, over the limit of ");
      WHY_U64(t, (uint64_t)(r->capacity - PYTVM_SERIAL_RPC_LENGTH_SIZE));
      drop_packet(r);
      r->discarding = 1;
      return send_answer(r, &a);
    }
    r->need = PYTVM_SERIAL_RPC_LENGTH_SIZE + (size_t)body; /* <= capacity */
  }
  if (r->need != 0 && r->have == r->need) {
    r->ready = 1;
    r->out = 0;
  }
  return PYTVM_SERIAL_OK;
}

int64_t pytvm_serial_rpc_read(pytvm_serial_rpc* r, uint8_t* buf, size_t n) {
  for (;;) {
    const uint8_t* data = NULL;
    size_t got = 0;
    size_t want;
    int64_t kind;
    int rc = PYTVM_SERIAL_OK;
    if (r->ready) {
      size_t left = r->need - r->out;
      size_t take = n < left ? n : left;
      memcpy(buf, r->buffer + r->out, take);
      r->out += take;
      if (r->out == r->need) drop_packet(r);
      return (int64_t)take;
    }
    if (r->discarding) {
      want = SIZE_MAX;
    } else if (r->need == 0) {
      want = PYTVM_SERIAL_RPC_LENGTH_SIZE - r->have;
    } else {
      want = r->need - r->have;
    }
    kind = pytvm_serial_stream_next(r->stream, &data, &got, want);
    if (kind <= 0 || kind == PYTVM_SERIAL_NEXT_RESET) {
      drop_packet(r);
      r->discarding = 0;
      r->lost = 0;
      return kind == PYTVM_SERIAL_NEXT_RESET ? 0 : kind;
    }
    if (kind == PYTVM_SERIAL_NEXT_LOST) {
      rc = on_lost(r);
    } else if (kind == PYTVM_SERIAL_NEXT_MARK) {
      rc = on_mark(r);
    } else {
      rc = on_data(r, data, got);
    }
    if (rc != PYTVM_SERIAL_OK) return rc;
  }
}

int pytvm_serial_rpc_write(pytvm_serial_rpc* r, const uint8_t* data, size_t n) {
  size_t i = 0;
  int rc = pytvm_serial_stream_write(r->stream, data, n);
  if (rc != PYTVM_SERIAL_OK || n == 0) return rc;
  while (i < n) { /* follow the packets written, to mark where each ends */
    if (r->tx_left > 0) {
      size_t left = n - i;
      size_t take = (uint64_t)left < r->tx_left ? left : (size_t)r->tx_left;
      r->tx_left -= take;
      i += take;
    } else {
      r->tx_head[r->tx_head_len++] = data[i++];
      if (r->tx_head_len == PYTVM_SERIAL_RPC_LENGTH_SIZE) {
        r->tx_left = get_u64(r->tx_head);
        r->tx_head_len = 0;
      }
    }
  }
  if (r->tx_left == 0 && r->tx_head_len == 0) rc = pytvm_serial_stream_mark(r->stream);
  return rc;
}
