/*!
 * \file serial_stream.h
 * \brief A blocking byte stream over a serial session on a raw link: what an RPC server (MinRPC)
 *        reads and writes on a UART-attached board.
 *
 * The integrator supplies the raw link as a read callback (blocking, like a UART receive) and
 * the write callback of the session config. pytvm_serial_stream_read returns the bytes of
 * NORMAL messages of the current session, in order; pytvm_serial_stream_write sends bytes as
 * NORMAL messages. Handshake messages are answered inside both calls.
 *
 * Roles: a responder (a board, initiator = 0) waits for the peer's START_INIT; an initiator
 * (initiator = 1) sends one on first use. A restart by the peer after the first session drops
 * the undelivered data of the old session and makes the next read return 0 once (the RPC
 * conversation of that session is over); later reads carry the new session. A read also
 * returns 0 at the end of the raw input, after which `eof` is set.
 *
 * Received bytes are fed to the decoder one at a time and feeding pauses while a message body
 * is undelivered, so the body is handed out straight from the decoder buffer (no extra copy,
 * no allocation). The Python counterpart is pytvm/crt/serial_channel.py.
 *
 * pytvm_serial_stream_next is the message-level view of the same input, for a layer that keeps
 * its own packet boundaries (serial_rpc.h): it also reports end marks (empty NORMAL messages,
 * which pytvm_serial_stream_read skips) and frames the decoder dropped (a hole in the stream).
 */
#ifndef PYTVM_SERIAL_STREAM_H_
#define PYTVM_SERIAL_STREAM_H_

#include "pytvm_crt/serial_session.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Raw link input: 1..n bytes read, 0 at end of input, negative on error. */
typedef int64_t (*pytvm_serial_read_fn)(void* ctx, uint8_t* buf, size_t n);

/*! \brief Receives the text of a LOG message from the peer. */
typedef void (*pytvm_serial_log_fn)(void* ctx, const uint8_t* text, size_t n);

typedef struct {
  /*! the session's buffers and callbacks; its on_event and event_ctx are the stream's own */
  pytvm_serial_session_config session;
  pytvm_serial_read_fn read;
  void* read_ctx;
  pytvm_serial_log_fn on_log; /*!< may be NULL: logs are dropped */
  void* log_ctx;
  uint8_t initiator; /*!< 1: start a session on first use; 0: answer the peer's start */
} pytvm_serial_stream_config;

typedef struct {
  pytvm_serial_session session;
  pytvm_serial_read_fn read;
  void* read_ctx;
  pytvm_serial_log_fn on_log;
  void* log_ctx;
  uint8_t initiator;
  uint8_t own_restart;   /*!< the next STARTED event answers this side's start */
  uint8_t reset_pending; /*!< the peer restarted; the next read returns 0 */
  uint8_t eof;           /*!< the raw input ended */
  uint32_t sessions;     /*!< sessions established so far */
  const uint8_t* pending; /*!< undelivered body bytes (inside the decoder buffer) */
  size_t pending_len;
  uint8_t mark_pending;  /*!< an end mark (empty NORMAL message) arrived, not reported yet */
  uint32_t errors_seen;  /*!< decoder errors already reported by pytvm_serial_stream_next */
  uint8_t raw[64]; /*!< raw bytes read from the link, not fed yet */
  size_t raw_pos;
  size_t raw_len;
} pytvm_serial_stream;

/*! \brief Set up the stream (the struct must stay where it is: callbacks point at it). */
int pytvm_serial_stream_init(pytvm_serial_stream* st, const pytvm_serial_stream_config* config);
/*! \brief Up to n bytes of the current session (blocks until at least one); 0 at the end of
 *  input or once after a peer restart; a negative read error is passed through. */
int64_t pytvm_serial_stream_read(pytvm_serial_stream* st, uint8_t* buf, size_t n);
/*! \brief Send n bytes, first waiting for a session (reading the link) if there is none;
 *  PYTVM_SERIAL_ERR_NO_SESSION if the input ends before one is established. */
int pytvm_serial_stream_write(pytvm_serial_stream* st, const uint8_t* data, size_t n);
/*! \brief What pytvm_serial_stream_next found (0: end of input; negative: a read error). */
#define PYTVM_SERIAL_NEXT_DATA 1  /*!< *data, *n: the next body bytes of the current session */
#define PYTVM_SERIAL_NEXT_MARK 2  /*!< an end mark: the sender's stream is at a packet boundary */
#define PYTVM_SERIAL_NEXT_LOST 3  /*!< the decoder dropped a frame (truncated, corrupt, too long) */
#define PYTVM_SERIAL_NEXT_RESET 4 /*!< the peer restarted the session; old data was dropped */

/*!
 * \brief The next thing on the input, in order: body bytes (at most `max`, the rest stays
 *        pending), an end mark, a dropped frame or a peer restart. Blocks like read.
 * \return a PYTVM_SERIAL_NEXT_* kind, 0 at the end of input, or a negative read error
 *         (PYTVM_SERIAL_ERR_ARG for max == 0). *data points into the decoder buffer and is
 *         valid until the next call on the stream.
 */
int64_t pytvm_serial_stream_next(pytvm_serial_stream* st, const uint8_t** data, size_t* n,
                                 size_t max);
/*! \brief Send an end mark (an empty NORMAL message), waiting for a session like write. */
int pytvm_serial_stream_mark(pytvm_serial_stream* st);
/*! \brief Start a new session from this side and wait until it is established. */
int pytvm_serial_stream_restart(pytvm_serial_stream* st);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_SERIAL_STREAM_H_ */
