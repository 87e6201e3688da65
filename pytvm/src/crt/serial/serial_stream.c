/*!
 * \file serial_stream.c
 * \brief Blocking byte stream over a serial session; see serial_stream.h.
 */
#include "pytvm_crt/serial_stream.h"

#include <string.h>

static void on_event(void* ctx, int event, const uint8_t* body, size_t n) {
  pytvm_serial_stream* st = (pytvm_serial_stream*)ctx;
  if (event == PYTVM_SERIAL_EVENT_DATA) {
    st->pending = body;
    st->pending_len = n;
    if (n == 0) st->mark_pending = 1; /* an empty NORMAL message is an end mark */
  } else if (event == PYTVM_SERIAL_EVENT_STARTED) {
    if (st->sessions > 0 && !st->own_restart) st->reset_pending = 1;
    st->pending_len = 0;
    st->mark_pending = 0;
    st->own_restart = 0;
    st->sessions++;
  } else if (st->on_log != NULL) {
    st->on_log(st->log_ctx, body, n);
  }
}

int pytvm_serial_stream_init(pytvm_serial_stream* st, const pytvm_serial_stream_config* config) {
  pytvm_serial_session_config session;
  if (config == NULL || config->read == NULL) return PYTVM_SERIAL_ERR_ARG;
  session = config->session;
  session.on_event = on_event;
  session.event_ctx = st;
  memset(st, 0, sizeof(*st)); /* no session, nothing pending, no bytes buffered */
  st->read = config->read;
  st->read_ctx = config->read_ctx;
  st->on_log = config->on_log;
  st->log_ctx = config->log_ctx;
  st->initiator = config->initiator;
  return pytvm_serial_session_init(&st->session, &session);
}

static int start(pytvm_serial_stream* st) {
  st->own_restart = 1;
  st->pending_len = 0;
  st->mark_pending = 0;
  return pytvm_serial_session_start(&st->session);
}

/* Whether feeding must pause: a body, a restart, an end mark or a dropped frame is unreported. */
static int paused(const pytvm_serial_stream* st) {
  return st->pending_len > 0 || st->reset_pending || st->mark_pending ||
         st->session.decoder.errors != st->errors_seen;
}

/* The byte-stream view has no use for end marks and dropped frames: forget them. */
static void settle(pytvm_serial_stream* st) {
  st->mark_pending = 0;
  st->errors_seen = st->session.decoder.errors;
}

/* Feed link bytes until a message body, a restart, an end mark or a dropped frame is
 * unreported, or the bytes read so far run out; reads the link once if none are buffered.
 * 1: progress, 0: end, <0: error. */
static int64_t pump(pytvm_serial_stream* st) {
  if (st->raw_pos == st->raw_len) {
    int64_t got = st->read(st->read_ctx, st->raw, sizeof(st->raw));
    if (got <= 0) {
      if (got == 0) st->eof = 1;
      return got;
    }
    st->raw_pos = 0;
    st->raw_len = (size_t)got < sizeof(st->raw) ? (size_t)got : sizeof(st->raw);
  }
  while (st->raw_pos < st->raw_len && !paused(st)) {
    pytvm_serial_decoder_feed_byte(&st->session.decoder, st->raw[st->raw_pos++]);
  }
  return 1;
}

/* Hand out up to `max` of the undelivered body bytes: their start in *data, the count returned. */
static inline size_t take_pending(pytvm_serial_stream* st, const uint8_t** data, size_t max) {
  size_t take = max < st->pending_len ? max : st->pending_len;
  *data = st->pending;
  st->pending += take;
  st->pending_len -= take;
  return take;
}

/* The end of a reader's turn with nothing to hand out: 0 at end of stream, else start the
 * session if this side initiates and none is open, then pump (1: progress, 0: end, <0: error). */
static inline int64_t refill(pytvm_serial_stream* st) {
  if (st->eof) return 0;
  if (st->initiator && st->session.state == PYTVM_SERIAL_SESSION_IDLE) {
    int started = start(st);
    if (started != PYTVM_SERIAL_OK) return started;
  }
  return pump(st);
}

int64_t pytvm_serial_stream_read(pytvm_serial_stream* st, uint8_t* buf, size_t n) {
  for (;;) {
    int64_t rc;
    if (st->reset_pending) {
      st->reset_pending = 0;
      return 0;
    }
    settle(st);
    if (st->pending_len > 0) {
      const uint8_t* src = NULL;
      size_t take = take_pending(st, &src, n);
      size_t i;
      for (i = 0; i < take; ++i) buf[i] = src[i];
      return (int64_t)take;
    }
    rc = refill(st);
    if (rc <= 0) return rc;
  }
}

/* Read the link until the session is established. */
static int wait_established(pytvm_serial_stream* st) {
  while (st->session.state != PYTVM_SERIAL_SESSION_ESTABLISHED) {
    int64_t rc;
    if (st->initiator && st->session.state == PYTVM_SERIAL_SESSION_IDLE) {
      int started = start(st);
      if (started != PYTVM_SERIAL_OK) return started;
    }
    if (st->eof) return PYTVM_SERIAL_ERR_NO_SESSION;
    settle(st);
    if (st->pending_len > 0 || st->reset_pending) {
      /* Cannot happen before a session exists: data arrives only for an established one. */
      return PYTVM_SERIAL_ERR_STATE;
    }
    rc = pump(st);
    if (rc < 0) return (int)rc;
    if (rc == 0) return PYTVM_SERIAL_ERR_NO_SESSION;
  }
  return PYTVM_SERIAL_OK;
}

int pytvm_serial_stream_write(pytvm_serial_stream* st, const uint8_t* data, size_t n) {
  int rc = wait_established(st);
  if (rc != PYTVM_SERIAL_OK) return rc;
  return pytvm_serial_session_send(&st->session, data, n);
}

int pytvm_serial_stream_restart(pytvm_serial_stream* st) {
  int rc = start(st);
  if (rc != PYTVM_SERIAL_OK) return rc;
  st->reset_pending = 0;
  return wait_established(st);
}

int64_t pytvm_serial_stream_next(pytvm_serial_stream* st, const uint8_t** data, size_t* n,
                                 size_t max) {
  *data = NULL;
  *n = 0;
  if (max == 0) return PYTVM_SERIAL_ERR_ARG;
  for (;;) {
    int64_t rc;
    if (st->reset_pending) {
      st->reset_pending = 0;
      settle(st);
      return PYTVM_SERIAL_NEXT_RESET;
    }
    if (st->session.decoder.errors != st->errors_seen) {
      st->errors_seen = st->session.decoder.errors;
      return PYTVM_SERIAL_NEXT_LOST;
    }
    if (st->pending_len > 0 && max > 0) {
      *n = take_pending(st, data, max);
      return PYTVM_SERIAL_NEXT_DATA;
    }
    if (st->mark_pending) {
      st->mark_pending = 0;
      return PYTVM_SERIAL_NEXT_MARK;
    }
    rc = refill(st);
    if (rc <= 0) return rc;
  }
}

int pytvm_serial_stream_mark(pytvm_serial_stream* st) {
  int rc = wait_established(st);
  if (rc != PYTVM_SERIAL_OK) return rc;
  return pytvm_serial_write_message(&st->session.encoder, PYTVM_SERIAL_MSG_NORMAL,
                                    st->session.session_id, NULL, 0);
}
