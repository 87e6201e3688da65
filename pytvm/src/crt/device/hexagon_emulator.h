/*!
 * \file hexagon_emulator.h
 * \brief The accelerator emulator inside the device process: device type 16 (kDLHexagon) backed
 *        by its own static pool, standing in for DSP memory, separate from the CPU page pool.
 *
 * pytvm_hexagon_emulator_install registers the `device_api.hexagon` implementation with the CRT
 * (pytvm_crt_register_device_api) and the global functions
 *   - `pytvm.hexagon.pool_range()` -> "base,size" (decimal) of the emulator pool;
 *   - `pytvm.hexagon.peek(ptr, offset, n)` -> Bytes read straight from the pool at ptr + offset,
 * so a client can prove where the bytes of a hexagon array live.
 */
#ifndef PYTVM_DEVICE_HEXAGON_EMULATOR_H_
#define PYTVM_DEVICE_HEXAGON_EMULATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Bytes of the emulator pool (128 MiB, so 64 MiB arrays fit; -D to change). */
#ifndef PYTVM_HEXAGON_POOL_BYTES
#define PYTVM_HEXAGON_POOL_BYTES (128u * 1024u * 1024u)
#endif
/*! \brief Live allocations the emulator pool can hold. */
#ifndef PYTVM_HEXAGON_MAX_BLOCKS
#define PYTVM_HEXAGON_MAX_BLOCKS 256
#endif
/*! \brief The device type the emulator serves. */
#define PYTVM_HEXAGON_DEVICE_TYPE 16

/*! \brief Register the device API and the pytvm.hexagon.* functions. \return 0 or -1. */
int32_t pytvm_hexagon_emulator_install(void);

/*! \brief 1 when [ptr, ptr + nbytes) lies inside the emulator pool, else 0. */
int32_t pytvm_hexagon_pool_contains(const void* ptr, uint64_t nbytes);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_DEVICE_HEXAGON_EMULATOR_H_ */
