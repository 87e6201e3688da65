/*!
 * \file hexagon_rpc_impl.h
 * \brief The accelerator side of `hexagon_rpc` (pytvm/contrib/hexagon/hexagon_rpc.idl): the four calls
 *        the generated skel dispatches to, on top of the MinRPC server (seed 000's
 *        src/runtime/hexagon/rpc/hexagon/rpc_server.cc).
 *
 * The prototypes of hexagon_rpc_open/send/receive/close come from the generated header
 * hexagon_rpc_skel.h ($(BUILD)/gen, pytvm/src/crt/device/skel.mk). Behaviour:
 *
 *   open(uri, stack_size, &h)   starts a MinRPC server whose channel reads the bytes given to
 *                               send and writes into an output buffer; one session at a time.
 *                               stack_size (>= 0) is recorded only: the emulator serves on the
 *                               caller's thread.
 *   send(h, data)               appends data to the input and serves every complete packet
 *                               (pytvm_minrpc_server_serve_one), so a packet may arrive in pieces and
 *                               several packets in one call.
 *   receive(h, max, data)       up to max bytes of pending replies; empty (status 0) once the
 *                               server has ended (kShutdown or a fatal error), so the board sees
 *                               the end of the stream; PYTVM_HEXAGON_RPC_ENODATA while the server
 *                               is waiting for the rest of a request.
 *   close(h)                    releases everything the peer still holds; h is invalid after.
 *
 * No heap beyond the MinRPC server's per-packet arenas: the input and output buffers are
 * static, sized from MINRPC_MAX_PACKET. A packet is served only while the output has room
 * for a full reply (PYTVM_HEXAGON_RPC_OUT_RESERVE); otherwise it waits in the input until
 * receive drains the output. A single reply larger than the free output ends the session.
 */
#ifndef PYTVM_DEVICE_HEXAGON_RPC_IMPL_H_
#define PYTVM_DEVICE_HEXAGON_RPC_IMPL_H_

#include <stdint.h>

#include "pytvm_crt/minrpc_server.h"
#include "hexagon_rpc_skel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses of the four calls (0 is success; the skel reserves -1001..-1007). */
/*! \brief h is not the open session's handle. */
#define PYTVM_HEXAGON_RPC_EHANDLE (-1)
/*! \brief open: a session is already open. */
#define PYTVM_HEXAGON_RPC_EBUSY (-2)
/*! \brief open: empty or over-long uri, or a negative stack size. */
#define PYTVM_HEXAGON_RPC_EARG (-3)
/*! \brief open: the MinRPC server could not be set up. */
#define PYTVM_HEXAGON_RPC_EINIT (-4)
/*! \brief send: the server has ended (kShutdown or a fatal error); nothing more is taken. */
#define PYTVM_HEXAGON_RPC_ECLOSED (-5)
/*! \brief send: the input buffer is full of packets waiting for receive to drain replies. */
#define PYTVM_HEXAGON_RPC_EFULL (-6)
/*! \brief receive: no reply is pending and the server waits for the rest of a request. */
#define PYTVM_HEXAGON_RPC_ENODATA (-7)

/*! \brief Bytes of the input buffer (a whole packet must fit, with room for the next). */
#ifndef PYTVM_HEXAGON_RPC_IN_BYTES
#define PYTVM_HEXAGON_RPC_IN_BYTES (2u * ((size_t)MINRPC_MAX_PACKET + 8u) + 256u * 1024u)
#endif
/*! \brief Bytes of the output buffer. */
#ifndef PYTVM_HEXAGON_RPC_OUT_BYTES
#define PYTVM_HEXAGON_RPC_OUT_BYTES (2u * (size_t)MINRPC_MAX_PACKET + 64u * 1024u)
#endif
/*! \brief Free output a packet needs before it is served (the largest normal reply). */
#define PYTVM_HEXAGON_RPC_OUT_RESERVE \
  ((size_t)MINRPC_MAX_PACKET + 64u + (size_t)MINRPC_ERROR_BYTES)
/*! \brief Longest uri kept (including the NUL). */
#define PYTVM_HEXAGON_RPC_URI_BYTES 256u
/*! \brief The skel buffer pytvm-device --skel gives hexagon_rpc_skel_serve: the largest
 *         message; pytvm.contrib.hexagon.transport.StubTransport assumes this default. */
#ifndef PYTVM_HEXAGON_RPC_SKEL_BUFFER_BYTES
#define PYTVM_HEXAGON_RPC_SKEL_BUFFER_BYTES (1024u * 1024u)
#endif

/*!
 * \brief Global function registered by open: `pytvm.hexagon.skel_info()` -> a string
 *        "uri=<uri>;stack_size=<n>;handle=<h>", so a client can see it came through the skel.
 */
#define PYTVM_HEXAGON_RPC_INFO_FUNC "pytvm.hexagon.skel_info"

/*! \brief Close the open session, if any (when the board vanished without close). */
void pytvm_hexagon_rpc_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_DEVICE_HEXAGON_RPC_IMPL_H_ */
