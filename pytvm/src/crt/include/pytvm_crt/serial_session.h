/*!
 * \file serial_session.h
 * \brief Session layer over serial framing: message types, session ids, start/reset handshake.
 *
 * Every frame payload (see serial_framing.h) is one session message:
 *
 *     type:u8 | session_id:u16le | body
 *
 * Message types:
 *   1 START_INIT   body = version (1) | max_payload:u32le. session_id = the initiator's nonce
 *                  (1..255), high byte 0.
 *   2 START_REPLY  body = version (1) | max_payload:u32le. session_id = initiator nonce |
 *                  responder nonce << 8.
 *   3 NORMAL       body = application bytes (the RPC byte stream), for the established id;
 *                  an empty body is an end mark (the sender is at a packet boundary, see
 *                  serial_rpc.h); byte-stream readers skip it.
 *   4 LOG          body = text from the sender, accepted whatever its session id.
 * Anything else (unknown type, short message, wrong version) is dropped and counted.
 *
 * Frame limits. max_payload in a START body is the largest frame payload its sender accepts
 * (its receive buffer, rx_capacity). Each side sends frames of at most the limit the peer
 * announced (and at most its own tx_max_payload, if set), so a frame over the receiver's buffer
 * is never sent. A START body of fewer than 5 bytes (the original form: the version byte alone,
 * as older peers send it) announces nothing and means PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD; older
 * peers read only the version byte, so they accept the longer body. A limit below
 * PYTVM_SERIAL_MIN_MAX_PAYLOAD makes the START malformed (dropped).
 *
 * Handshake. Either side may (re)start at any time: it picks a nonce byte, sends START_INIT and
 * is STARTING. A side receiving a valid START_INIT picks its own nonce, combines both into the
 * session id (initiator nonce in the low byte, its own in the high byte), answers START_REPLY,
 * is ESTABLISHED and reports PYTVM_SERIAL_EVENT_STARTED -- whatever session it had before is
 * over (that is how a reset from either side reaches the other). The initiator is ESTABLISHED
 * (and reports STARTED) when a START_REPLY for its current nonce arrives; replies to an older
 * nonce are dropped. NORMAL messages are delivered only in the ESTABLISHED state and only when
 * their id equals the current session id, so traffic of a stale session is dropped.
 *
 * Ids always change on a restart: an initiator never reuses its previous nonce or the low byte
 * of the current id, and a responder changes its nonce until the new id differs from the
 * current one. Nonces come from the integrator's callback (a hardware RNG, a timer); a 0 or a
 * clashing value is replaced by the next value in 1..255 (x -> x % 255 + 1).
 *
 * Simultaneous starts: a STARTING side drops a START_INIT whose nonce is not greater than its
 * own, so the higher nonce initiates; with equal nonces both drop, and one side must restart.
 *
 * The Python twin is pytvm/crt/serial_link.py (byte-identical; shared test vectors).
 */
#ifndef PYTVM_SERIAL_SESSION_H_
#define PYTVM_SERIAL_SESSION_H_

#include "pytvm_crt/serial_framing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYTVM_SERIAL_SESSION_VERSION 1u
#define PYTVM_SERIAL_MESSAGE_HEADER_SIZE 3u
/*! \brief Size of a START body that carries a frame limit: version + max_payload:u32le. */
#define PYTVM_SERIAL_START_BODY_SIZE 5u
/*! \brief The smallest frame payload limit a side may have: a START message with its limit. */
#define PYTVM_SERIAL_MIN_MAX_PAYLOAD (PYTVM_SERIAL_MESSAGE_HEADER_SIZE + PYTVM_SERIAL_START_BODY_SIZE)

/* Message types. */
#define PYTVM_SERIAL_MSG_START_INIT 1u
#define PYTVM_SERIAL_MSG_START_REPLY 2u
#define PYTVM_SERIAL_MSG_NORMAL 3u
#define PYTVM_SERIAL_MSG_LOG 4u

/* Session states. */
#define PYTVM_SERIAL_SESSION_IDLE 0u
#define PYTVM_SERIAL_SESSION_STARTING 1u
#define PYTVM_SERIAL_SESSION_ESTABLISHED 2u

/* Events reported to the integrator. */
#define PYTVM_SERIAL_EVENT_STARTED 1 /*!< a new session is established (reset application state) */
#define PYTVM_SERIAL_EVENT_DATA 2    /*!< body of a NORMAL message of the current session */
#define PYTVM_SERIAL_EVENT_LOG 3     /*!< body of a LOG message */

/*! \brief A nonce byte from the integrator's entropy source. */
typedef uint8_t (*pytvm_serial_nonce_fn)(void* ctx);

/*! \brief Session event; `body` (empty for STARTED) is valid during the call only. The
 *  callback may send (start, send, send_log) but must not feed received bytes. */
typedef void (*pytvm_serial_event_fn)(void* ctx, int event, const uint8_t* body, size_t n);

typedef struct {
  uint8_t* rx_buffer; /*!< assembles received frames */
  /*! largest accepted frame payload (header included; at least PYTVM_SERIAL_MIN_MAX_PAYLOAD),
   *  announced to the peer in the handshake (values over 2^32 - 1 announce 2^32 - 1) */
  size_t rx_capacity;
  pytvm_serial_write_fn write;
  void* write_ctx;
  pytvm_serial_nonce_fn nonce;
  void* nonce_ctx;
  pytvm_serial_event_fn on_event;
  void* event_ctx;
  /*! a bound on the frames this side sends (0: none); send() splits data to the smaller of it and
   *  the limit the peer announced (PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD before any handshake) */
  uint32_t tx_max_payload;
} pytvm_serial_session_config;

typedef struct {
  pytvm_serial_session_config config;
  pytvm_serial_decoder decoder;
  pytvm_serial_encoder encoder;
  uint16_t session_id; /*!< the established id (0 while none) */
  uint8_t local_nonce; /*!< nonce of the last START_INIT this side sent */
  uint8_t state;
  uint32_t dropped; /*!< valid frames dropped: stale, unexpected or malformed messages */
  uint32_t peer_max_payload; /*!< the peer's announced frame limit (default until it does) */
} pytvm_serial_session;

/*! \brief Set up an IDLE session; ERR_ARG if a callback or the buffer is missing, or
 *  rx_capacity or a nonzero tx_max_payload is below PYTVM_SERIAL_MIN_MAX_PAYLOAD (no room for a
 *  START message). */
int pytvm_serial_session_init(pytvm_serial_session* s, const pytvm_serial_session_config* config);
/*! \brief Send START_INIT with a fresh nonce (start, or restart a running session). */
int pytvm_serial_session_start(pytvm_serial_session* s);
/*! \brief The largest frame payload this side sends now: the peer's announced limit, bounded
 *  by tx_max_payload when that is set. */
uint32_t pytvm_serial_session_tx_limit(const pytvm_serial_session* s);
/*! \brief Send `n` bytes as NORMAL messages (split to the tx limit); ERR_NO_SESSION unless
 *  ESTABLISHED. Sends nothing for n == 0. */
int pytvm_serial_session_send(pytvm_serial_session* s, const uint8_t* data, size_t n);
/*! \brief Send one LOG message with the current id, in any state; ERR_TOO_LONG if it does not
 *  fit in one frame. */
int pytvm_serial_session_send_log(pytvm_serial_session* s, const uint8_t* text, size_t n);
/*! \brief Feed bytes received from the link; events and handshake replies happen inside. */
void pytvm_serial_session_receive(pytvm_serial_session* s, const uint8_t* data, size_t n);
/*! \brief Frame one message (header + body) through `enc`. */
int pytvm_serial_write_message(pytvm_serial_encoder* enc, uint8_t type, uint16_t session_id,
                               const uint8_t* body, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_SERIAL_SESSION_H_ */
