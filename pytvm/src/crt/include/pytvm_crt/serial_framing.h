/*!
 * \file serial_framing.h
 * \brief Framing of packets on a raw serial link (UART): start byte, escaping, length, CRC-16.
 *
 * Frame layout on the wire:
 *
 *     SOP | escape( length:u32le | payload[length] | crc:u16le )
 *
 * - SOP is the start-of-packet byte 0x7E. It never appears inside a frame, so a receiver that
 *   lost track (line noise, a reset board, a corrupt length) resynchronises on the next 0x7E.
 * - Escaping: every 0x7E or 0x7D (ESC) byte between the SOP and the end of the CRC is sent as
 *   the pair 0x7D, byte ^ 0x20 (0x7E -> 7D 5E, 0x7D -> 7D 5D). No other byte is escaped.
 * - length is the number of payload bytes (unescaped), little-endian; 0 is allowed.
 * - crc is CRC-16/CCITT-FALSE (polynomial 0x1021, init 0xFFFF, no reflection, no final xor;
 *   check value 0x29B1 for "123456789") over the unescaped length and payload bytes, sent
 *   little-endian.
 * There is no end byte: the length says where the frame ends.
 *
 * Decoder (byte-at-a-time state machine): hunting for SOP -> 4 length bytes -> payload -> 2 CRC
 * bytes. The payload is assembled in a caller-provided buffer, whose size bounds the accepted
 * length, so a corrupt length never overflows it. Errors (each drops the frame in progress):
 * a length over the buffer capacity, a CRC mismatch, an ESC followed by anything but 0x5E or
 * 0x5D, and a SOP before the frame in progress is complete (that SOP starts a new frame). After
 * an error the decoder hunts for the next SOP; non-SOP bytes seen while hunting are counted as
 * skipped. The Python twin is pytvm/crt/framing.py; both are checked against the shared vectors
 * in tests/crt/vectors/serial_framing.json.
 *
 * C99, no dynamic memory, no global state.
 */
#ifndef PYTVM_SERIAL_FRAMING_H_
#define PYTVM_SERIAL_FRAMING_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PYTVM_SERIAL_SOP 0x7Eu
#define PYTVM_SERIAL_ESC 0x7Du
#define PYTVM_SERIAL_ESC_XOR 0x20u
#define PYTVM_SERIAL_CRC_INIT 0xFFFFu
#define PYTVM_SERIAL_LENGTH_SIZE 4u
#define PYTVM_SERIAL_CRC_SIZE 2u
/*! \brief The payload limit both ends assume unless the integrator agrees on another. */
#define PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD 4096u

/*! \brief Status codes (0 is success; errors are negative). */
#define PYTVM_SERIAL_OK 0
#define PYTVM_SERIAL_ERR_WRITE (-1)      /*!< the write callback accepted no bytes */
#define PYTVM_SERIAL_ERR_STATE (-2)      /*!< call out of order (e.g. end before all bytes) */
#define PYTVM_SERIAL_ERR_TOO_LONG (-3)   /*!< more bytes than the frame or the limit allows */
#define PYTVM_SERIAL_ERR_NO_SESSION (-4) /*!< session traffic before a session is established */
#define PYTVM_SERIAL_ERR_ARG (-5)        /*!< invalid argument */

/*!
 * \brief Byte sink of the integrator (e.g. a UART transmit routine).
 * \return the number of bytes accepted, 1..n (the encoder calls again with the rest), or a
 *         value <= 0 on failure; a negative value is passed back to the caller unchanged, 0
 *         becomes PYTVM_SERIAL_ERR_WRITE.
 */
typedef int (*pytvm_serial_write_fn)(void* ctx, const uint8_t* data, size_t n);

/*! \brief Receives one complete, CRC-checked payload; `payload` is valid during the call only. */
typedef void (*pytvm_serial_frame_fn)(void* ctx, const uint8_t* payload, size_t n);

/*! \brief Continue a CRC-16/CCITT-FALSE over `n` bytes (start with PYTVM_SERIAL_CRC_INIT). */
uint16_t pytvm_serial_crc16(uint16_t crc, const uint8_t* data, size_t n);

/*!
 * \brief Streaming frame encoder: begin(length), append(...) until length bytes, end().
 *
 * The payload may come in pieces (a message header, then the data) without being copied
 * together. Escaped bytes are staged in a small buffer inside the struct and handed to `write`
 * in chunks. After an error the frame is abandoned (the receiver drops it and resynchronises).
 */
typedef struct {
  pytvm_serial_write_fn write;
  void* ctx;
  uint32_t remaining; /*!< payload bytes still expected by append */
  uint16_t crc;
  uint8_t open; /*!< 1 between begin and end */
  uint8_t staged;
  uint8_t stage[64];
} pytvm_serial_encoder;

void pytvm_serial_encoder_init(pytvm_serial_encoder* enc, pytvm_serial_write_fn write, void* ctx);
/*! \brief Write the SOP and the length of a frame carrying `length` payload bytes (a frame
 *  still open is abandoned; the receiver drops it when this SOP arrives). */
int pytvm_serial_encoder_begin(pytvm_serial_encoder* enc, uint32_t length);
/*! \brief Write the next `n` payload bytes; ERR_TOO_LONG past the length given to begin. */
int pytvm_serial_encoder_append(pytvm_serial_encoder* enc, const uint8_t* data, size_t n);
/*! \brief Write the CRC; ERR_STATE unless exactly `length` bytes were appended. */
int pytvm_serial_encoder_end(pytvm_serial_encoder* enc);
/*! \brief begin + append + end for a payload held in one buffer. */
int pytvm_serial_encoder_write_frame(pytvm_serial_encoder* enc, const uint8_t* payload, size_t n);

/*! \brief Byte-at-a-time frame decoder; see the file comment for its states and errors. */
typedef struct {
  uint8_t* buffer;
  size_t capacity; /*!< the largest accepted payload */
  pytvm_serial_frame_fn on_frame;
  void* ctx;
  uint32_t length;   /*!< payload length of the frame in progress */
  uint32_t received; /*!< bytes of the current field (length, payload or CRC) received */
  uint16_t crc;      /*!< CRC computed over the length bytes received so far */
  uint16_t wire_crc; /*!< CRC bytes received so far */
  uint8_t state;
  uint8_t escaped;
  uint32_t frames;  /*!< frames delivered */
  uint32_t errors;  /*!< frames dropped (bad length, CRC, escape, truncated) */
  uint32_t skipped; /*!< bytes outside any frame */
} pytvm_serial_decoder;

/*! \brief Set up a decoder assembling payloads of up to `capacity` bytes in `buffer`. */
void pytvm_serial_decoder_init(pytvm_serial_decoder* dec, uint8_t* buffer, size_t capacity,
                               pytvm_serial_frame_fn on_frame, void* ctx);
/*! \brief Drop any frame in progress and hunt for the next SOP; counters are kept. */
void pytvm_serial_decoder_reset(pytvm_serial_decoder* dec);
/*! \brief Feed one received byte; `on_frame` is called when it completes a valid frame. */
void pytvm_serial_decoder_feed_byte(pytvm_serial_decoder* dec, uint8_t byte);
/*! \brief Feed `n` received bytes; `on_frame` must not feed this decoder again. */
void pytvm_serial_decoder_feed(pytvm_serial_decoder* dec, const uint8_t* data, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_SERIAL_FRAMING_H_ */
