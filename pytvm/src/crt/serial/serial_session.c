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

static const uint8_t kVersion[1] = {PYTVM_SERIAL_SESSION_VERSION};

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
  (void)pytvm_serial_write_message(&s->encoder, PYTVM_SERIAL_MSG_START_REPLY, id, kVersion,
                                   sizeof(kVersion));
  emit(s, PYTVM_SERIAL_EVENT_STARTED, NULL, 0);
}

static void on_frame(void* ctx, const uint8_t* payload, size_t n) {
  pytvm_serial_session* s = (pytvm_serial_session*)ctx;
  const uint8_t* body = payload + PYTVM_SERIAL_MESSAGE_HEADER_SIZE;
  size_t body_n;
  uint16_t id;
  uint8_t low, high;
  if (n < PYTVM_SERIAL_MESSAGE_HEADER_SIZE) {
    s->dropped++;
    return;
  }
  body_n = n - PYTVM_SERIAL_MESSAGE_HEADER_SIZE;
  id = (uint16_t)(payload[1] | ((unsigned)payload[2] << 8));
  low = payload[1];
  high = payload[2];
  switch (payload[0]) {
    case PYTVM_SERIAL_MSG_START_INIT:
      if (body_n < 1 || body[0] != PYTVM_SERIAL_SESSION_VERSION || high != 0 || low == 0 ||
          (s->state == PYTVM_SERIAL_SESSION_STARTING && s->local_nonce >= low)) {
        s->dropped++;
        return;
      }
      answer_start(s, low);
      return;
    case PYTVM_SERIAL_MSG_START_REPLY:
      if (body_n < 1 || body[0] != PYTVM_SERIAL_SESSION_VERSION || high == 0 ||
          s->state != PYTVM_SERIAL_SESSION_STARTING || low != s->local_nonce) {
        s->dropped++;
        return;
      }
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
      config->rx_capacity < PYTVM_SERIAL_MESSAGE_HEADER_SIZE + 1u) {
    return PYTVM_SERIAL_ERR_ARG;
  }
  s->config = *config;
  if (s->config.tx_max_payload == 0) s->config.tx_max_payload = PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD;
  if (s->config.tx_max_payload <= PYTVM_SERIAL_MESSAGE_HEADER_SIZE) return PYTVM_SERIAL_ERR_ARG;
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
  return pytvm_serial_write_message(&s->encoder, PYTVM_SERIAL_MSG_START_INIT, nonce, kVersion,
                                    sizeof(kVersion));
}

int pytvm_serial_session_send(pytvm_serial_session* s, const uint8_t* data, size_t n) {
  size_t chunk = s->config.tx_max_payload - PYTVM_SERIAL_MESSAGE_HEADER_SIZE;
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
  if (n > s->config.tx_max_payload - PYTVM_SERIAL_MESSAGE_HEADER_SIZE) {
    return PYTVM_SERIAL_ERR_TOO_LONG;
  }
  return pytvm_serial_write_message(&s->encoder, PYTVM_SERIAL_MSG_LOG, s->session_id, text, n);
}

void pytvm_serial_session_receive(pytvm_serial_session* s, const uint8_t* data, size_t n) {
  pytvm_serial_decoder_feed(&s->decoder, data, n);
}
