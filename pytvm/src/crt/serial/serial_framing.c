/*!
 * \file serial_framing.c
 * \brief Frame encoder and byte-at-a-time decoder; the format is described in serial_framing.h.
 */
#include "pytvm_crt/serial_framing.h"

enum { kHunt = 0, kLength = 1, kPayload = 2, kCrc = 3 };

/* CRC-16/CCITT-FALSE, four bits at a time: kNibble[i] is the remainder of i * x^16. */
static const uint16_t kNibble[16] = {0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5,
                                     0x60C6, 0x70E7, 0x8108, 0x9129, 0xA14A, 0xB16B,
                                     0xC18C, 0xD1AD, 0xE1CE, 0xF1EF};

static uint16_t crc16_byte(uint16_t crc, uint8_t byte) {
  crc = (uint16_t)((crc << 4) ^ kNibble[(crc >> 12) ^ (byte >> 4)]);
  crc = (uint16_t)((crc << 4) ^ kNibble[(crc >> 12) ^ (byte & 0x0Fu)]);
  return crc;
}

uint16_t pytvm_serial_crc16(uint16_t crc, const uint8_t* data, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) crc = crc16_byte(crc, data[i]);
  return crc;
}

/* ------------------------------------------------------------------------------ encoder */

void pytvm_serial_encoder_init(pytvm_serial_encoder* enc, pytvm_serial_write_fn write, void* ctx) {
  enc->write = write;
  enc->ctx = ctx;
  enc->remaining = 0;
  enc->crc = PYTVM_SERIAL_CRC_INIT;
  enc->open = 0;
  enc->staged = 0;
}

/* Hand the staged bytes to the write callback; a failure abandons the frame. */
static int flush(pytvm_serial_encoder* enc) {
  size_t off = 0;
  while (off < enc->staged) {
    int rc = enc->write(enc->ctx, enc->stage + off, enc->staged - off);
    if (rc <= 0) {
      enc->staged = 0;
      enc->open = 0;
      return rc < 0 ? rc : PYTVM_SERIAL_ERR_WRITE;
    }
    off += (size_t)rc < enc->staged - off ? (size_t)rc : enc->staged - off;
  }
  enc->staged = 0;
  return PYTVM_SERIAL_OK;
}

/* Stage one frame byte, escaped; flushes first when an escape pair might not fit. */
static int put(pytvm_serial_encoder* enc, uint8_t byte) {
  if (enc->staged > sizeof(enc->stage) - 2) {
    int rc = flush(enc);
    if (rc != PYTVM_SERIAL_OK) return rc;
  }
  if (byte == PYTVM_SERIAL_SOP || byte == PYTVM_SERIAL_ESC) {
    enc->stage[enc->staged++] = (uint8_t)PYTVM_SERIAL_ESC;
    enc->stage[enc->staged++] = (uint8_t)(byte ^ PYTVM_SERIAL_ESC_XOR);
  } else {
    enc->stage[enc->staged++] = byte;
  }
  return PYTVM_SERIAL_OK;
}

int pytvm_serial_encoder_begin(pytvm_serial_encoder* enc, uint32_t length) {
  uint8_t head[PYTVM_SERIAL_LENGTH_SIZE];
  unsigned i;
  int rc;
  if (enc->write == NULL) return PYTVM_SERIAL_ERR_ARG;
  /* A frame left open is abandoned: the receiver drops it when this SOP arrives. */
  head[0] = (uint8_t)(length & 0xFFu);
  head[1] = (uint8_t)((length >> 8) & 0xFFu);
  head[2] = (uint8_t)((length >> 16) & 0xFFu);
  head[3] = (uint8_t)((length >> 24) & 0xFFu);
  enc->staged = 0;
  enc->stage[enc->staged++] = (uint8_t)PYTVM_SERIAL_SOP;
  enc->open = 1;
  enc->remaining = length;
  enc->crc = pytvm_serial_crc16(PYTVM_SERIAL_CRC_INIT, head, sizeof(head));
  for (i = 0; i < sizeof(head); ++i) {
    rc = put(enc, head[i]);
    if (rc != PYTVM_SERIAL_OK) return rc;
  }
  return PYTVM_SERIAL_OK;
}

int pytvm_serial_encoder_append(pytvm_serial_encoder* enc, const uint8_t* data, size_t n) {
  size_t i;
  int rc;
  if (!enc->open) return PYTVM_SERIAL_ERR_STATE;
  if (n > enc->remaining) return PYTVM_SERIAL_ERR_TOO_LONG;
  enc->crc = pytvm_serial_crc16(enc->crc, data, n);
  enc->remaining -= (uint32_t)n;
  for (i = 0; i < n; ++i) {
    rc = put(enc, data[i]);
    if (rc != PYTVM_SERIAL_OK) return rc;
  }
  return PYTVM_SERIAL_OK;
}

int pytvm_serial_encoder_end(pytvm_serial_encoder* enc) {
  int rc;
  if (!enc->open || enc->remaining != 0) return PYTVM_SERIAL_ERR_STATE;
  rc = put(enc, (uint8_t)(enc->crc & 0xFFu));
  if (rc == PYTVM_SERIAL_OK) rc = put(enc, (uint8_t)(enc->crc >> 8));
  if (rc == PYTVM_SERIAL_OK) rc = flush(enc);
  enc->open = 0;
  return rc;
}

int pytvm_serial_encoder_write_frame(pytvm_serial_encoder* enc, const uint8_t* payload, size_t n) {
  int rc;
#if SIZE_MAX > 0xFFFFFFFFu
  /* only where size_t is wider than the 32-bit length field */
  if (n > (size_t)0xFFFFFFFFu) return PYTVM_SERIAL_ERR_TOO_LONG;
#endif
  rc = pytvm_serial_encoder_begin(enc, (uint32_t)n);
  if (rc == PYTVM_SERIAL_OK) rc = pytvm_serial_encoder_append(enc, payload, n);
  if (rc == PYTVM_SERIAL_OK) rc = pytvm_serial_encoder_end(enc);
  return rc;
}

/* ------------------------------------------------------------------------------ decoder */

void pytvm_serial_decoder_init(pytvm_serial_decoder* dec, uint8_t* buffer, size_t capacity,
                               pytvm_serial_frame_fn on_frame, void* ctx) {
  dec->buffer = buffer;
  dec->capacity = buffer == NULL ? 0 : capacity;
  dec->on_frame = on_frame;
  dec->ctx = ctx;
  dec->frames = 0;
  dec->errors = 0;
  dec->skipped = 0;
  pytvm_serial_decoder_reset(dec);
}

void pytvm_serial_decoder_reset(pytvm_serial_decoder* dec) {
  dec->state = kHunt;
  dec->escaped = 0;
  dec->length = 0;
  dec->received = 0;
  dec->crc = PYTVM_SERIAL_CRC_INIT;
  dec->wire_crc = 0;
}

/* Drop the frame in progress and hunt for the next SOP. */
static void fail(pytvm_serial_decoder* dec) {
  dec->errors++;
  dec->state = kHunt;
}

void pytvm_serial_decoder_feed_byte(pytvm_serial_decoder* dec, uint8_t byte) {
  if (byte == PYTVM_SERIAL_SOP) { /* always starts a frame; one in progress is truncated */
    if (dec->state != kHunt) dec->errors++;
    pytvm_serial_decoder_reset(dec);
    dec->state = kLength;
    return;
  }
  if (dec->state == kHunt) {
    dec->skipped++;
    return;
  }
  if (dec->escaped) {
    dec->escaped = 0;
    if (byte != (PYTVM_SERIAL_SOP ^ PYTVM_SERIAL_ESC_XOR) &&
        byte != (PYTVM_SERIAL_ESC ^ PYTVM_SERIAL_ESC_XOR)) {
      fail(dec);
      return;
    }
    byte = (uint8_t)(byte ^ PYTVM_SERIAL_ESC_XOR);
  } else if (byte == PYTVM_SERIAL_ESC) {
    dec->escaped = 1;
    return;
  }
  switch (dec->state) {
    case kLength:
      dec->length |= (uint32_t)byte << (8u * dec->received);
      dec->crc = crc16_byte(dec->crc, byte);
      if (++dec->received < PYTVM_SERIAL_LENGTH_SIZE) return;
      dec->received = 0;
      if ((unsigned long long)dec->length > (unsigned long long)dec->capacity) {
        fail(dec);
      } else {
        dec->state = dec->length == 0 ? kCrc : kPayload;
      }
      return;
    case kPayload:
      dec->buffer[dec->received++] = byte;
      if (dec->received < dec->length) return;
      dec->crc = pytvm_serial_crc16(dec->crc, dec->buffer, dec->length);
      dec->received = 0;
      dec->state = kCrc;
      return;
    default: /* kCrc */
      dec->wire_crc = (uint16_t)(dec->wire_crc | ((unsigned)byte << (8u * dec->received)));
      if (++dec->received < PYTVM_SERIAL_CRC_SIZE) return;
      dec->state = kHunt;
      if (dec->wire_crc != dec->crc) {
        dec->errors++;
        return;
      }
      dec->frames++;
      if (dec->on_frame != NULL) dec->on_frame(dec->ctx, dec->buffer, dec->length);
      return;
  }
}

void pytvm_serial_decoder_feed(pytvm_serial_decoder* dec, const uint8_t* data, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) pytvm_serial_decoder_feed_byte(dec, data[i]);
}
