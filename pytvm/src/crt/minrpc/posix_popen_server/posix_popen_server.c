/*!
 * \file posix_popen_server.c
 * \brief The MinRPC server over two pipes (the rpc.PopenSession convention), for executables
 *        linked by `pytvm.rpc.with_minrpc`: this main, the CRT core, MinRPC, the POSIX platform
 *        hooks and a system library (the kernels, defining TVMSystemLibEntryPoint). It offers
 *        `runtime.RPCTimeEvaluator` (the POSIX platform has a timer).
 *
 * Built with -DPYTVM_APP_INIT=1 (the `host` project template of pytvm.micro), it also calls the
 * application's pytvm_app_init() (app_init.h: registers the project's model) before serving.
 *
 * usage: <binary> <read_fd> <write_fd>
 * Exit status: 0 after kShutdown or a clean end of input, the pytvm_minrpc_status that ended
 * the session otherwise, 255 for bad arguments or a failed start.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pytvm_crt/crt.h"
#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/posix_fd_channel.h"
#if defined(PYTVM_APP_INIT)
#include "app_init.h"
#endif

#define EXIT_BAD_ARGS 255



int main(int argc, char** argv) {
  static pytvm_minrpc_server server;
  pytvm_fd_pair_t fds;
  pytvm_minrpc_channel channel;
  int32_t status;

  if ((argc != 3) || (pytvm_parse_fd(argv[1]) < 0) || (pytvm_parse_fd(argv[2]) < 0)) {
    (void)fprintf(stderr, "usage: %s <read_fd> <write_fd>\n", (argc > 0) ? argv[0] : "server");
    return EXIT_BAD_ARGS;
  }
  (void)signal(SIGPIPE, SIG_IGN); /* a vanished peer is a write error, not a signal */
#if defined(PYTVM_APP_INIT)
  if ((TVMInitializeRuntime() != 0) || (pytvm_crt_register_time_evaluator() != 0) ||
      (pytvm_app_init() != 0)) {
#else
  if ((TVMInitializeRuntime() != 0) || (pytvm_crt_register_time_evaluator() != 0)) {
#endif
    (void)fprintf(stderr, "minrpc server: runtime init failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  fds.read_fd = pytvm_parse_fd(argv[1]);
  fds.write_fd = pytvm_parse_fd(argv[2]);
  channel.ctx = &fds;
  channel.read = pytvm_fd_pair_read;
  channel.write = pytvm_fd_pair_write;
  if (pytvm_minrpc_server_init(&server, channel, NULL, 0u) != 0) {
    (void)fprintf(stderr, "minrpc server: init failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  status = pytvm_minrpc_server_serve(&server);
  pytvm_minrpc_server_release(&server);
  return (int)status;
}
