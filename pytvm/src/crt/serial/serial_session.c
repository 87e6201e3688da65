/*!
 * \file serial_session.c
 * \brief Session state machine over serial framing; the protocol is in serial_session.h.
 */
#include "pytvm_crt/serial_session.h"

/* The next nonce in 1..255 after x (0 maps to 1, 255 wraps to 1). */
static uint8_t next_nonce(uint8_t x) { return (uint8_t)(x % 255u + 1u); }

int pytvm_serial_write_message(pytvm_serial_encoder* enc, uint8_t type, uint16_t session_id,
                               const uint8_t* body, size_t n) {
  uint8_t head[PYTVM_SERIAL_MESSAGE_HEADER_SIZE];
  int rc;
  if ((unsigned long long)n > 0xFFFFFFFFull - PYTVM_SERIAL_MESSAGE_HEADER_SIZE) {
    return PYTVM_SERIAL_ERR_TOO_LONG;
  }
  head[0] = type;
  head[1] = (uint8_t)(session_id & 0xFFu);
  head[2] = (uint8_t)(session_id >> 8);
  rc = pytvm_serial_encoder_begin(enc, (uint32_t)(n + sizeof(head)));
  if (rc == PYTVM_SERIAL_OK) rc = pytvm_serial_encoder_append(enc, head, sizeof(head));
  if (rc == PYTVM_SERIAL_OK && n > 0) rc = pytvm_serial_encoder_append(enc, body, n);
  if (rc == PYTVM_SERIAL_OK) rc = pytvm_serial_encoder_end(enc);
  return rc;
}

static void emit(pytvm_serial_session* s, int event, const uint8_t* body, size_t n) {
  s->config.on_event(s->config.event_ctx, event, body, n);
}

/* Write a START message: the version and this side's frame limit (rx_capacity, u32le). */
static int write_start(pytvm_serial_session* s, uint8_t type, uint16_t id) {
  uint8_t body[PYTVM_SERIAL_START_BODY_SIZE];
  uint32_t limit = 0xFFFFFFFFu;
  if (s->config.rx_capacity < (size_t)limit) limit = (uint32_t)s->config.rx_capacity;
  body[0] = PYTVM_SERIAL_SESSION_VERSION;
  body[1] = (uint8_t)(limit & 0xFFu);
  body[2] = (uint8_t)((limit >> 8) & 0xFFu);
  body[3] = (uint8_t)((limit >> 16) & 0xFFu);
  body[4] = (uint8_t)(limit >> 24);
  return pytvm_serial_write_message(&s->encoder, type, id, body, sizeof(body));
}

/* The frame limit a START body announces: 0 if malformed, the default for a version-only body. */
static uint32_t start_limit(const uint8_t* body, size_t n) {
  uint32_t limit;
  if (n < 1u || body[0] != PYTVM_SERIAL_SESSION_VERSION) return 0u;
  if (n < PYTVM_SERIAL_START_BODY_SIZE) return PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD;
  limit = (uint32_t)body[1] | ((uint32_t)body[2] << 8) | ((uint32_t)body[3] << 16) |
          ((uint32_t)body[4] << 24);
  return limit < PYTVM_SERIAL_MIN_MAX_PAYLOAD ? 0u : limit;
}

/* A valid START_INIT arrived: become the responder of a new session. */
static void answer_start(pytvm_serial_session* s, uint8_t initiator_nonce) {
  uint8_t mine = s->config.nonce(s->config.nonce_ctx);
  uint16_t id;
  for (;;) {
    if (mine == 0) mine = next_nonce(mine);
    id = (uint16_t)(initiator_nonce | ((unsigned)mine << 8));
    if (id != s->session_id) break;
    mine = next_nonce(mine);
  }
  s->session_id = id;
  s->state = PYTVM_SERIAL_SESSION_ESTABLISHED;
  /* A lost reply is recovered by the initiator restarting; the session is set up regardless. */
  (void)write_start(s, PYTVM_SERIAL_MSG_START_REPLY, id);
  emit(s, PYTVM_SERIAL_EVENT_STARTED, NULL, 0);
}

static void on_frame(void* ctx, const uint8_t* payload, size_t n) {
  pytvm_serial_session* s = (pytvm_serial_session*)ctx;
  const uint8_t* body = payload + PYTVM_SERIAL_MESSAGE_HEADER_SIZE;
  size_t body_n;
  uint16_t id;
  uint8_t low, high;
  uint32_t limit;
  if (n < PYTVM_SERIAL_MESSAGE_HEADER_SIZE) {
    s->dropped++;
    return;
  }
  body_n = n - PYTVM_SERIAL_MESSAGE_HEADER_SIZE;
  id = (uint16_t)(payload[1] | ((unsigned)payload[2] << 8));
  low = payload[1];
  high = payload[2];
  limit = start_limit(body, body_n);
  switch (payload[0]) {
    case PYTVM_SERIAL_MSG_START_INIT:
      if (limit == 0u || high != 0 || low == 0 ||
          (s->state == PYTVM_SERIAL_SESSION_STARTING && s->local_nonce >= low)) {
        s->dropped++;
        return;
      }
      s->peer_max_payload = limit;
      answer_start(s, low);
      return;
    case PYTVM_SERIAL_MSG_START_REPLY:
      if (limit == 0u || high == 0 || s->state != PYTVM_SERIAL_SESSION_STARTING ||
          low != s->local_nonce) {
        s->dropped++;
        return;
      }
      s->peer_max_payload = limit;
      s->session_id = id;
      s->state = PYTVM_SERIAL_SESSION_ESTABLISHED;
      emit(s, PYTVM_SERIAL_EVENT_STARTED, NULL, 0);
      return;
    case PYTVM_SERIAL_MSG_NORMAL:
      if (s->state != PYTVM_SERIAL_SESSION_ESTABLISHED || id != s->session_id) {
        s->dropped++;
        return;
      }
      emit(s, PYTVM_SERIAL_EVENT_DATA, body, body_n);
      return;
    case PYTVM_SERIAL_MSG_LOG:
      emit(s, PYTVM_SERIAL_EVENT_LOG, body, body_n);
      return;
    default:
      s->dropped++;
      return;
  }
}

int pytvm_serial_session_init(pytvm_serial_session* s, const pytvm_serial_session_config* config) {
  if (config == NULL || config->write == NULL || config->nonce == NULL ||
      config->on_event == NULL || config->rx_buffer == NULL ||
      config->rx_capacity < PYTVM_SERIAL_MIN_MAX_PAYLOAD ||
      (config->tx_max_payload != 0u && config->tx_max_payload < PYTVM_SERIAL_MIN_MAX_PAYLOAD)) {
    return PYTVM_SERIAL_ERR_ARG;
  }
  s->config = *config;
  s->peer_max_payload = PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD;
  pytvm_serial_decoder_init(&s->decoder, config->rx_buffer, config->rx_capacity, on_frame, s);
  pytvm_serial_encoder_init(&s->encoder, config->write, config->write_ctx);
  s->session_id = 0;
  s->local_nonce = 0;
  s->state = PYTVM_SERIAL_SESSION_IDLE;
  s->dropped = 0;
  return PYTVM_SERIAL_OK;
}

int pytvm_serial_session_start(pytvm_serial_session* s) {
  uint8_t nonce = s->config.nonce(s->config.nonce_ctx);
  int i;
  /* Never 0, the previous nonce or the current id's initiator byte (two clashes at most). */
  for (i = 0; i < 3; ++i) {
    if (nonce != 0 && nonce != s->local_nonce && nonce != (uint8_t)(s->session_id & 0xFFu)) {
      break;
    }
    nonce = next_nonce(nonce);
  }
  s->local_nonce = nonce;
  s->state = PYTVM_SERIAL_SESSION_STARTING;
  return write_start(s, PYTVM_SERIAL_MSG_START_INIT, nonce);
}

uint32_t pytvm_serial_session_tx_limit(const pytvm_serial_session* s) {
  uint32_t cap = s->config.tx_max_payload;
  return (cap != 0u && cap < s->peer_max_payload) ? cap : s->peer_max_payload;
}

int pytvm_serial_session_send(pytvm_serial_session* s, const uint8_t* data, size_t n) {
  size_t chunk = (size_t)pytvm_serial_session_tx_limit(s) - PYTVM_SERIAL_MESSAGE_HEADER_SIZE;
  int rc;
  if (s->state != PYTVM_SERIAL_SESSION_ESTABLISHED) return PYTVM_SERIAL_ERR_NO_SESSION;
  while (n > 0) {
    size_t take = n < chunk ? n : chunk;
    rc = pytvm_serial_write_message(&s->encoder, PYTVM_SERIAL_MSG_NORMAL, s->session_id, data,
                                    take);
    if (rc != PYTVM_SERIAL_OK) return rc;
    data += take;
    n -= take;
  }
  return PYTVM_SERIAL_OK;
}

int pytvm_serial_session_send_log(pytvm_serial_session* s, const uint8_t* text, size_t n) {
  if (n > (size_t)pytvm_serial_session_tx_limit(s) - PYTVM_SERIAL_MESSAGE_HEADER_SIZE) {
    return PYTVM_SERIAL_ERR_TOO_LONG;
  }
  return pytvm_serial_write_message(&s->encoder, PYTVM_SERIAL_MSG_LOG, s->session_id, text, n);
}

void pytvm_serial_session_receive(pytvm_serial_session* s, const uint8_t* data, size_t n) {
  pytvm_serial_decoder_feed(&s->decoder, data, n);
}
