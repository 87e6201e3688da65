/*!
 * \file main.c
 * \brief The `host` project's device: the C runtime and MinRPC over two file descriptors (the
 *        rpc.PopenSession convention), with the project's model registered by pytvm_app_init
 *        (app/app_init.c) and `runtime.RPCTimeEvaluator` (the POSIX platform has a timer).
 *
 * usage: device <read_fd> <write_fd>
 * Exit status: 0 after kShutdown or a clean end of input, the MinRPC status that ended the
 * session otherwise, 255 for bad arguments or a failed start.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>

#include "app_init.h"
#include "pytvm_crt/crt.h"
#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/posix_fd_channel.h"

#define EXIT_BAD_ARGS 255

int main(int argc, char** argv) {
  static pytvm_minrpc_server server;
  pytvm_fd_pair_t fds;
  pytvm_minrpc_channel channel;
  int32_t status;

  if ((argc != 3) || (pytvm_parse_fd(argv[1]) < 0) || (pytvm_parse_fd(argv[2]) < 0)) {
    (void)fprintf(stderr, "usage: %s <read_fd> <write_fd>\n", (argc > 0) ? argv[0] : "device");
    return EXIT_BAD_ARGS;
  }
  (void)signal(SIGPIPE, SIG_IGN); /* a vanished peer is a write error, not a signal */
  if ((TVMInitializeRuntime() != 0) || (pytvm_crt_register_time_evaluator() != 0) ||
      (pytvm_app_init() != 0)) {
    (void)fprintf(stderr, "device: start failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  fds.read_fd = pytvm_parse_fd(argv[1]);
  fds.write_fd = pytvm_parse_fd(argv[2]);
  channel.ctx = &fds;
  channel.read = pytvm_fd_pair_read;
  channel.write = pytvm_fd_pair_write;
  if (pytvm_minrpc_server_init(&server, channel, NULL, 0u) != 0) {
    (void)fprintf(stderr, "device: MinRPC init failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  status = pytvm_minrpc_server_serve(&server);
  pytvm_minrpc_server_release(&server);
  return (int)status;
}
