/*!
 * \file device_framing.c
 * \brief The device binary's --framing option: MinRPC over serial frames and sessions, as a
 *        UART-attached board would speak (pytvm/src/crt/serial_*.h; Python side:
 *        pytvm.crt.serial_channel.SerialChannel).
 *
 * MinRPC reads whole packets through the packet layer (serial_rpc.h): a packet torn by a
 * dropped frame, or whose length claims more than arrived before the sender's end mark, is
 * answered with a kException and discarded, and the device serves the next packet.
 */
#include <string.h>
#include <time.h>

#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/serial_rpc.h"
#include "device_framing.h"

static pytvm_minrpc_channel g_raw;
static pytvm_serial_stream g_stream;
static pytvm_serial_rpc g_rpc;
static uint8_t g_frame_rx[PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD];
/* One whole packet: MinRPC's largest accepted body plus the length field. */
static uint8_t g_packet[MINRPC_MAX_PACKET + PYTVM_SERIAL_RPC_LENGTH_SIZE];

static int raw_write(void* ctx, const uint8_t* data, size_t n) {
  const pytvm_minrpc_channel* raw = (const pytvm_minrpc_channel*)ctx;
  return (raw->write(raw->ctx, data, n) == 0) ? (int)n : -1;
}

static int64_t raw_read(void* ctx, uint8_t* buf, size_t n) {
  const pytvm_minrpc_channel* raw = (const pytvm_minrpc_channel*)ctx;
  return raw->read(raw->ctx, buf, n);
}

static uint8_t nonce(void* ctx) {
  (void)ctx;
  return (uint8_t)((unsigned long)time(NULL) ^ (unsigned long)clock());
}

static int64_t framed_read(void* ctx, uint8_t* buf, size_t n) {
  return pytvm_serial_rpc_read((pytvm_serial_rpc*)ctx, buf, n);
}

static int32_t framed_write(void* ctx, const uint8_t* buf, size_t n) {
  return (int32_t)pytvm_serial_rpc_write((pytvm_serial_rpc*)ctx, buf, n);
}

int32_t pytvm_device_framing_wrap(const pytvm_minrpc_channel* raw, pytvm_minrpc_channel* framed) {
  pytvm_serial_stream_config cfg;
  (void)memset(&cfg, 0, sizeof(cfg));
  g_raw = *raw;
  cfg.session.rx_buffer = g_frame_rx;
  cfg.session.rx_capacity = sizeof(g_frame_rx);
  cfg.session.write = raw_write;
  cfg.session.write_ctx = &g_raw;
  cfg.session.nonce = nonce;
  cfg.read = raw_read;
  cfg.read_ctx = &g_raw;
  if ((pytvm_serial_stream_init(&g_stream, &cfg) != PYTVM_SERIAL_OK) ||
      (pytvm_serial_rpc_init(&g_rpc, &g_stream, g_packet, sizeof(g_packet)) != PYTVM_SERIAL_OK)) {
    return -1;
  }
  framed->ctx = &g_rpc;
  framed->read = framed_read;
  framed->write = framed_write;
  return 0;
}
