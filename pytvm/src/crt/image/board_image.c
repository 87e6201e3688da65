/*!
 * \file board_image.c
 * \brief A bare-metal device image: the C runtime serving MinRPC over serial framing on a UART.
 *
 * The board provides the UART (pytvm_board_uart_read / pytvm_board_uart_write) and a tick
 * counter (pytvm_board_ticks); board_platform.c (or a board's own platform file) provides the
 * platform hooks of pytvm_crt/platform.h without a C library, and this file main().
 * image/image.mk builds it for the host and for a Cortex-M4 to check that the runtime builds
 * warning-free there and to measure its code size in each configuration; boards/<board>/board.mk
 * links it into a bootable image (`make board-image BOARD=<board>`).
 *
 * main: TVMInitializeRuntime(), runtime.RPCTimeEvaluator when the board has a timer
 * (PYTVM_BOARD_HAS_TIMER=1), then pytvm_app_init() (a project's models and functions;
 * app_init_none.c for an image without), then MinRPC until the link ends.
 *
 * PYTVM_BOARD_FRAME_SIZE is the largest frame payload the board accepts (its receive buffer);
 * the serial handshake announces it, so the host never sends a larger frame.
 */
#include <stddef.h>
#include <stdint.h>

#include "board_image.h"
#include "pytvm_crt/crt.h"
#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/serial_rpc.h"

#ifndef PYTVM_BOARD_FRAME_SIZE
#define PYTVM_BOARD_FRAME_SIZE PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD
#endif
#if PYTVM_BOARD_FRAME_SIZE < PYTVM_SERIAL_MIN_MAX_PAYLOAD
#error "PYTVM_BOARD_FRAME_SIZE is below PYTVM_SERIAL_MIN_MAX_PAYLOAD (room for a START message)"
#endif
#ifndef PYTVM_BOARD_HAS_TIMER
#define PYTVM_BOARD_HAS_TIMER 0
#endif

static pytvm_serial_stream g_stream;
static pytvm_serial_rpc g_rpc;
static pytvm_minrpc_server g_server;
static uint8_t g_frame_rx[PYTVM_BOARD_FRAME_SIZE];
static uint8_t g_packet[MINRPC_MAX_PACKET + PYTVM_SERIAL_RPC_LENGTH_SIZE];

static int uart_write(void* ctx, const uint8_t* data, size_t n) {
  (void)ctx;
  return pytvm_board_uart_write(data, n);
}

static int64_t uart_read(void* ctx, uint8_t* buf, size_t n) {
  (void)ctx;
  return pytvm_board_uart_read(buf, n);
}

static uint8_t nonce(void* ctx) {
  (void)ctx;
  return (uint8_t)(pytvm_board_ticks() & 0xFFU);
}

static int64_t framed_read(void* ctx, uint8_t* buf, size_t n) {
  return pytvm_serial_rpc_read((pytvm_serial_rpc*)ctx, buf, n);
}

static int32_t framed_write(void* ctx, const uint8_t* buf, size_t n) {
  return (int32_t)pytvm_serial_rpc_write((pytvm_serial_rpc*)ctx, buf, n);
}

int main(void) {
  pytvm_serial_stream_config cfg = {0};
  pytvm_minrpc_channel channel;
  cfg.session.rx_buffer = g_frame_rx;
  cfg.session.rx_capacity = sizeof(g_frame_rx);
  cfg.session.write = uart_write;
  cfg.session.nonce = nonce;
  cfg.read = uart_read;
  if ((TVMInitializeRuntime() != 0) ||
      (pytvm_serial_stream_init(&g_stream, &cfg) != PYTVM_SERIAL_OK) ||
      (pytvm_serial_rpc_init(&g_rpc, &g_stream, g_packet, sizeof(g_packet)) != PYTVM_SERIAL_OK)) {
    return 1;
  }
#if PYTVM_BOARD_HAS_TIMER
  if (pytvm_crt_register_time_evaluator() != 0) {
    return 1;
  }
#endif
  if (pytvm_app_init() != 0) {
    return 1;
  }
  channel.ctx = &g_rpc;
  channel.read = framed_read;
  channel.write = framed_write;
  if (pytvm_minrpc_server_init(&g_server, channel, NULL, 0U) != 0) {
    return 1;
  }
  return (int)pytvm_minrpc_server_serve(&g_server);
}
