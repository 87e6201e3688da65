/*! \file device_framing.h \brief Wrap the device's byte channel in serial framing. */
#ifndef PYTVM_DEVICE_FRAMING_H_
#define PYTVM_DEVICE_FRAMING_H_

#include <stdint.h>

#include "pytvm_crt/minrpc_server.h"

/*! \brief Fill *framed with a channel carrying the RPC stream in serial frames over *raw. */
int32_t pytvm_device_framing_wrap(const pytvm_minrpc_channel* raw, pytvm_minrpc_channel* framed);

#endif /* PYTVM_DEVICE_FRAMING_H_ */
