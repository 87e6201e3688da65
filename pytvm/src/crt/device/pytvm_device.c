/*!
 * \file pytvm_device.c
 * \brief `pytvm-device`: a host "device" process running the CRT + MinRPC over two file
 *        descriptors, the rpc.PopenSession convention.
 *
 * usage: pytvm-device <read_fd> <write_fd> [--hexagon] [--framing | --skel]
 *   --hexagon  also serve device type 16 from the accelerator emulator's own pool
 *              (hexagon_emulator.h);
 *   --framing  wrap the channel in the serial framing layer (device_framing.c);
 *   --skel     speak the generated hexagon_rpc skel on the descriptors instead of raw RPC
 *              bytes: the board's stub calls hexagon_rpc_open/send/receive/close
 *              (pytvm/contrib/hexagon/hexagon_rpc.idl), which feed the MinRPC server
 *              (hexagon_rpc_impl.c), as FastRPC's skel does on a DSP (seed 000).
 * Flags may come before or after the two descriptors.
 *
 * Exit status (spec section 6): 0 after kShutdown or a clean end of input, 10 read error
 * (kReadError), 11 write error, 12 allocation error (kAllocError, e.g. an untrusted packet
 * length), 255 (-1) for bad arguments or a failed start. With --skel: 0 when the board closes
 * the pipe between calls, 10 on a read error or a truncated call, 11 on a write error.
 *
 * Global functions for tests:
 *   pytvm.device.echo(x)            -> x (any argument type)
 *   pytvm.device.scale_f32(t, k)    multiplies a float32 array in place (CPU or hexagon pool)
 *   pytvm.device.info()             -> a string naming this binary and its features
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device_framing.h"
#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/posix_fd_channel.h"
#include "hexagon_emulator.h"
#include "hexagon_rpc_impl.h"
#include "pytvm_crt/crt.h"

#define EXIT_BAD_ARGS 255

/* ------------------------------------------------------------------ the fd channel */


/*
 * ==================================================================== FRAMING HOOK
 * A serial framing layer (pytvm/src/crt/serial_framing.* + serial_session.*, another module)
 * plugs in here: given the raw byte channel it fills *framed with a channel whose read/write
 * carry the RPC byte stream inside frames, and returns 0. MinRPC then serves over *framed.
 * device_framing.c provides it.
 * ====================================================================
 */
typedef int32_t (*pytvm_channel_wrap_fn_t)(const pytvm_minrpc_channel* raw, pytvm_minrpc_channel* framed);
static pytvm_channel_wrap_fn_t g_framing_wrap = pytvm_device_framing_wrap;

/* ------------------------------------------------------------------ test functions */

static int set_error(const char* msg) {
  TVMAPISetLastError(msg);
  return -1;
}

static int echo(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                void* resource) {
  (void)resource;
  if (num_args != 1) {
    return set_error("TypeError: pytvm.device.echo takes exactly one argument");
  }
  *ret = args[0];
  *ret_code = codes[0];
  if (codes[0] == (int)kTVMPackedFuncHandle) {
    (void)TVMFuncRetain(args[0].v_handle); /* the returned handle carries a reference */
  }
  return 0;
}

static int scale_f32(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                    void* resource) {
  const DLTensor* t;
  double k;
  uint64_t count = 1u;
  uint64_t i;
  uint8_t* data;
  int32_t d;
  (void)resource;
  if ((num_args != 2) || (codes[0] != (int)kTVMDLTensorHandle) ||
      ((codes[1] != (int)kTVMArgFloat) && (codes[1] != (int)kTVMArgInt))) {
    return set_error("TypeError: pytvm.device.scale_f32(tensor, k) takes an array and a number");
  }
  t = (const DLTensor*)args[0].v_handle;
  k = (codes[1] == (int)kTVMArgFloat) ? args[1].v_float64 : (double)args[1].v_int64;
  if ((t->dtype.code != (uint8_t)kDLFloat) || (t->dtype.bits != 32u) || (t->dtype.lanes != 1u)) {
    return set_error("TypeError: pytvm.device.scale_f32 needs a float32 array");
  }
  for (d = 0; d < t->ndim; ++d) {
    count *= (uint64_t)t->shape[d];
  }
  data = (uint8_t*)t->data + t->byte_offset;
  if ((t->device.device_type == PYTVM_HEXAGON_DEVICE_TYPE) &&
      (pytvm_hexagon_pool_contains(data, count * 4u) == 0)) {
    return set_error("ValueError: pytvm.device.scale_f32: the array is not in the hexagon pool");
  }
  if ((t->device.device_type != (int32_t)kDLCPU) &&
      (t->device.device_type != PYTVM_HEXAGON_DEVICE_TYPE)) {
    return set_error("ValueError: pytvm.device.scale_f32 runs on cpu and hexagon arrays only");
  }
  for (i = 0u; i < count; ++i) {
    float x;
    (void)memcpy(&x, data + 4u * i, sizeof(x));
    x = x * (float)k;
    (void)memcpy(data + 4u * i, &x, sizeof(x));
  }
  ret->v_handle = NULL;
  *ret_code = (int)kTVMNullptr;
  return 0;
}

static char g_info[256];

static int info(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                void* resource) {
  (void)args;
  (void)codes;
  (void)num_args;
  (void)resource;
  ret->v_str = g_info;
  *ret_code = (int)kTVMStr;
  return 0;
}

/* ------------------------------------------------------------------ --skel */

/*! \brief Run the generated skel on the descriptors; the exit status of main. */
static int serve_skel(int read_fd, int write_fd) {
  static uint8_t buffer[PYTVM_HEXAGON_RPC_SKEL_BUFFER_BYTES];
  int32_t status = hexagon_rpc_skel_serve(read_fd, write_fd, buffer, sizeof(buffer));
  pytvm_hexagon_rpc_shutdown(); /* the board may vanish without close */
  if (status == 0) {
    return 0;
  }
  (void)fprintf(stderr, "pytvm-device: the hexagon_rpc skel stopped with status %ld\n",
                (long)status);
  if (status == HEXAGON_RPC_SKEL_EREAD) {
    return (int)kMinRPCReadError;
  }
  return (status == HEXAGON_RPC_SKEL_EWRITE) ? (int)kMinRPCWriteError : EXIT_BAD_ARGS;
}

/* ------------------------------------------------------------------ main */


static int usage(const char* why) {
  (void)fprintf(stderr,
                "pytvm-device: %s\nusage: pytvm-device <read_fd> <write_fd> [--hexagon] "
                "[--framing | --skel]\n",
                why);
  return EXIT_BAD_ARGS;
}

int main(int argc, char** argv) {
  static pytvm_minrpc_server server;
  pytvm_fd_pair_t fds;
  pytvm_minrpc_channel channel;
  int fd_values[2] = {-1, -1};
  int num_fds = 0;
  int hexagon = 0;
  int framing = 0;
  int skel = 0;
  int i;
  int32_t status;

  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--hexagon") == 0) {
      hexagon = 1;
    } else if (strcmp(argv[i], "--framing") == 0) {
      framing = 1;
    } else if (strcmp(argv[i], "--skel") == 0) {
      skel = 1;
    } else if ((num_fds < 2) && (pytvm_parse_fd(argv[i]) >= 0)) {
      fd_values[num_fds] = pytvm_parse_fd(argv[i]);
      num_fds += 1;
    } else {
      return usage("unexpected argument");
    }
  }
  if (num_fds != 2) {
    return usage("expected exactly two file descriptors");
  }
  if ((framing != 0) && (skel != 0)) {
    return usage("--framing and --skel cannot be combined");
  }
  if ((framing != 0) && (g_framing_wrap == NULL)) {
    return usage("--framing: no serial framing layer is linked into this binary");
  }
  (void)signal(SIGPIPE, SIG_IGN); /* a vanished peer is a write error, not a signal */

  if (TVMInitializeRuntime() != 0) {
    (void)fprintf(stderr, "pytvm-device: runtime init failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  if ((pytvm_crt_func_register_global("pytvm.device.echo", echo, 1) != 0) ||
      (pytvm_crt_func_register_global("pytvm.device.scale_f32", scale_f32, 1) != 0) ||
      (pytvm_crt_func_register_global("pytvm.device.info", info, 1) != 0) ||
      ((hexagon != 0) && (pytvm_hexagon_emulator_install() != 0))) {
    (void)fprintf(stderr, "pytvm-device: registration failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  (void)snprintf(g_info, sizeof(g_info),
                 "pytvm-device: CRT + MinRPC, protocol %s, max_packet=%lu, cpu_pool=%lu, "
                 "hexagon=%s, hexagon_pool=%lu, framing=%s, skel=%s, config=%s",
                 MINRPC_PROTOCOL_VERSION, (unsigned long)MINRPC_MAX_PACKET,
                 (unsigned long)TVM_CRT_MEMORY_POOL_BYTES, (hexagon != 0) ? "on" : "off",
                 (hexagon != 0) ? (unsigned long)PYTVM_HEXAGON_POOL_BYTES : 0ul,
                 (framing != 0) ? "on" : "off", (skel != 0) ? "on" : "off",
                 (TVM_CRT_CONFIG_MINIMAL != 0) ? "minimal" : "full");
  if (skel != 0) {
    return serve_skel(fd_values[0], fd_values[1]);
  }

  fds.read_fd = fd_values[0];
  fds.write_fd = fd_values[1];
  channel.ctx = &fds;
  channel.read = pytvm_fd_pair_read;
  channel.write = pytvm_fd_pair_write;
  if (framing != 0) {
    pytvm_minrpc_channel raw = channel;
    if (g_framing_wrap(&raw, &channel) != 0) {
      return usage("--framing: the framing layer refused the channel");
    }
  }
  if (pytvm_minrpc_server_init(&server, channel, NULL, 0u) != 0) {
    (void)fprintf(stderr, "pytvm-device: MinRPC init failed: %s\n", TVMGetLastError());
    return EXIT_BAD_ARGS;
  }
  status = pytvm_minrpc_server_serve(&server);
  if (status != 0) {
    (void)fprintf(stderr, "pytvm-device: session ended with %s\n", pytvm_minrpc_status_name(status));
  }
  return (int)status;
}
