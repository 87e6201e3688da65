/*!
 * \file serial_rpc.h
 * \brief Whole RPC packets over a serial stream: end marks, torn packets answered, resync.
 *
 * Over a plain byte stream (a pipe, a socket) a packet whose length field claims more bytes
 * than were sent makes the reader wait for the rest, and that is right. Over a serial link the
 * frames' own lengths and CRCs decide, and the sender marks where its packets end, so a torn
 * packet is found and answered instead of hanging the link or swallowing the requests after it.
 * This is the protocol, on top of serial_stream.h (the Python side is
 * pytvm/crt/serial_channel.py):
 *
 * - End marks. After the last byte of each RPC packet (u64 length + body, spec section 2) the
 *   sender writes an end mark: an empty NORMAL message (serial_session.h). It says "my stream
 *   is at a packet boundary here". pytvm_serial_stream_read skips marks, and so does a
 *   SerialChannel, so a peer that does not use marks reads the same bytes as before.
 *   pytvm_serial_rpc_write sends a mark after every write that ends a packet.
 * - Whole packets. pytvm_serial_rpc_read assembles a packet in the caller's buffer and hands
 *   it out only once all of its bytes are there: the reader (MinRPC) never blocks inside a
 *   packet and never sees part of a torn one.
 * - Torn packets. A packet is torn when (a) an end mark arrives before its last byte (its
 *   length claims more than was sent), (b) the decoder drops one of its frames (truncated,
 *   i.e. cut short by the next 0x7E start byte; corrupt, i.e. a CRC or escape error; or a frame
 *   length over the limit), or (c) its length exceeds the buffer. It is discarded, never run,
 *   and answered with one kException ("RPCServerError: kReadError: serial link: torn packet:
 *   <why>"; without TVM_CRT_ERROR_TEXTS the text ends before ": <why>") as soon as it is
 *   known to be torn; its remaining bytes are dropped up to the next
 *   end mark, where the two sides are in step again and the next packet is served normally.
 * - Lost packets. A frame dropped between packets held a whole packet or was line noise. If an
 *   end mark comes next (no data), a packet was lost and is answered with one kException; if
 *   data comes next, the drop was noise and the data starts the next packet.
 * - An incomplete frame (the link went quiet mid-frame) is discarded when the next 0x7E
 *   arrives; until then the reader waits, as on any link with nothing more to read.
 * - A restart of the session by the peer drops any partial packet and the read returns 0 once
 *   (the RPC conversation of that session is over), as pytvm_serial_stream_read does.
 *
 * So each packet the sender ends with a mark is answered at most once: by the server when it
 * arrived whole, or by one kException when it was torn or lost.
 *
 * C99, no dynamic memory, no global state.
 */
#ifndef PYTVM_SERIAL_RPC_H_
#define PYTVM_SERIAL_RPC_H_

#include "pytvm_crt/serial_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Bytes of an RPC packet's length field. */
#define PYTVM_SERIAL_RPC_LENGTH_SIZE 8u
/*! \brief Longest error text this layer sends. */
#define PYTVM_SERIAL_RPC_TEXT_BYTES 200u

typedef struct {
  pytvm_serial_stream* stream;
  uint8_t* buffer;       /*!< assembles one packet: length field + body */
  size_t capacity;       /*!< the largest packet accepted, length field included */
  size_t have;           /*!< bytes of the packet assembled */
  size_t need;           /*!< the packet's size (length field + body) once known, else 0 */
  size_t out;            /*!< bytes of a complete packet already handed out */
  uint8_t ready;         /*!< a complete packet is being handed out */
  uint8_t discarding;    /*!< a torn packet was answered: drop data up to the next end mark */
  uint8_t lost;          /*!< a frame was dropped at a packet boundary */
  uint8_t tx_head_len;   /*!< outgoing: length-field bytes of the next packet written so far */
  uint8_t tx_head[PYTVM_SERIAL_RPC_LENGTH_SIZE];
  uint64_t tx_left;      /*!< outgoing: body bytes of the current packet still to be written */
  uint32_t marks;        /*!< end marks received */
  uint32_t answered;     /*!< torn or lost packets answered with a kException */
} pytvm_serial_rpc;

/*! \brief Set up the packet layer on an initialised stream; `buffer` holds one packet, so
 *  `capacity` (at least 12) bounds the packets accepted. ERR_ARG for a missing argument. */
int pytvm_serial_rpc_init(pytvm_serial_rpc* r, pytvm_serial_stream* stream, uint8_t* buffer,
                          size_t capacity);
/*! \brief Up to n bytes of complete packets (blocks until at least one); 0 at the end of input
 *  or once after a peer restart; a negative read or write error is passed through. */
int64_t pytvm_serial_rpc_read(pytvm_serial_rpc* r, uint8_t* buf, size_t n);
/*! \brief Send n bytes of the outgoing packet stream; an end mark follows each write that
 *  ends a packet. */
int pytvm_serial_rpc_write(pytvm_serial_rpc* r, const uint8_t* data, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_SERIAL_RPC_H_ */
