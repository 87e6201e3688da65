/*!
 * \file device_framing.c
 * \brief The device binary's --framing option: MinRPC over serial frames and sessions, as a
 *        UART-attached board would speak (pytvm/src/crt/serial_*.h; Python side:
 *        pytvm.crt.serial_channel.SerialChannel).
 */
#include <string.h>
#include <time.h>

#include "../minrpc/minrpc_server.h"
#include "../serial_stream.h"
#include "device_framing.h"

static MinRPCChannel g_raw;
static pytvm_serial_stream g_stream;
static uint8_t g_frame_rx[PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD];

static int RawWrite(void* ctx, const uint8_t* data, size_t n) {
  const MinRPCChannel* raw = (const MinRPCChannel*)ctx;
  return (raw->write(raw->ctx, data, n) == 0) ? (int)n : -1;
}

static int64_t RawRead(void* ctx, uint8_t* buf, size_t n) {
  const MinRPCChannel* raw = (const MinRPCChannel*)ctx;
  return raw->read(raw->ctx, buf, n);
}

static uint8_t Nonce(void* ctx) {
  (void)ctx;
  return (uint8_t)((unsigned long)time(NULL) ^ (unsigned long)clock());
}

static int64_t FramedRead(void* ctx, uint8_t* buf, size_t n) {
  return pytvm_serial_stream_read((pytvm_serial_stream*)ctx, buf, n);
}

static int32_t FramedWrite(void* ctx, const uint8_t* buf, size_t n) {
  return (int32_t)pytvm_serial_stream_write((pytvm_serial_stream*)ctx, buf, n);
}

int32_t PytvmDeviceFramingWrap(const MinRPCChannel* raw, MinRPCChannel* framed) {
  pytvm_serial_stream_config cfg;
  (void)memset(&cfg, 0, sizeof(cfg));
  g_raw = *raw;
  cfg.session.rx_buffer = g_frame_rx;
  cfg.session.rx_capacity = sizeof(g_frame_rx);
  cfg.session.write = RawWrite;
  cfg.session.write_ctx = &g_raw;
  cfg.session.nonce = Nonce;
  cfg.read = RawRead;
  cfg.read_ctx = &g_raw;
  if (pytvm_serial_stream_init(&g_stream, &cfg) != PYTVM_SERIAL_OK) {
    return -1;
  }
  framed->ctx = &g_stream;
  framed->read = FramedRead;
  framed->write = FramedWrite;
  return 0;
}
