/*!
 * \file pytvm_crt/device_api.h
 * \brief The device API table and the TVM C device calls dispatched through it.
 *
 * TVMInitializeRuntime registers kDLCPU (backed by the page allocator, copies by memcpy). An
 * integrator registers an API for any other device type (e.g. kDLHexagon with its own pool).
 * The TVMDevice* and TVMSynchronize calls return 0, or -1 after TVMAPISetLastError.
 */
#ifndef PYTVM_CRT_DEVICE_API_H_
#define PYTVM_CRT_DEVICE_API_H_

#include <stddef.h>

#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief TVM's DeviceAttrKind values the CRT answers itself. */
#define TVM_CRT_DEVICE_ATTR_EXIST 0
#define TVM_CRT_DEVICE_ATTR_DEVICE_NAME 5
#define TVM_CRT_DEVICE_ATTR_TOTAL_GLOBAL_MEMORY 14
#define TVM_CRT_DEVICE_ATTR_AVAILABLE_GLOBAL_MEMORY 15

/*!
 * \brief One device type's memory and synchronisation functions; all five are required.
 * Each returns 0 on success and non-zero on failure (after TVMAPISetLastError, ideally).
 */
typedef struct pytvm_crt_device_api {
  /*! \brief Allocate nbytes aligned to alignment (a power of two) into *out. */
  int (*alloc)(DLDevice dev, size_t nbytes, size_t alignment, DLDataType hint, void** out);
  /*! \brief Free memory from alloc. */
  int (*free)(DLDevice dev, void* ptr);
  /*! \brief Copy from -> to; both compact, equal byte sizes (checked by the caller). */
  int (*copy)(const DLTensor* from, DLTensor* to, TVMStreamHandle stream);
  /*! \brief Wait for work on stream. */
  int (*sync)(DLDevice dev, TVMStreamHandle stream);
  /*! \brief Answer a DeviceAttrKind other than kExist (kTVMNullptr when unknown). */
  int (*get_attr)(DLDevice dev, int kind, TVMValue* out, int* out_code);
} pytvm_crt_device_api;

/*!
 * \brief Register (or replace) the API of a device type; api == NULL removes it.
 *        The table borrows api: it must outlive the runtime.
 * \return kTvmErrorNoError; kTvmErrorDeviceApiIncomplete when a function pointer is NULL;
 *         kTvmErrorDeviceApiTableFull; kTvmErrorDeviceApiNotRegistered when removing an
 *         unregistered type.
 */
int pytvm_crt_register_device_api(int device_type, const pytvm_crt_device_api* api);

/*! \brief The API registered for a device type, or NULL. */
const pytvm_crt_device_api* pytvm_crt_get_device_api(int device_type);

/*! \brief The CPU device API (what TVMInitializeRuntime registers for kDLCPU). */
const pytvm_crt_device_api* pytvm_crt_cpu_device_api(void);

/*! \brief Allocate device memory through the device type's API. */
int TVMDeviceAllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment, DLDataType type_hint,
                            void** out_data);

/*! \brief Free device memory through the device type's API. */
int TVMDeviceFreeDataSpace(DLDevice dev, void* ptr);

/*!
 * \brief Copy a compact tensor into a compact tensor of the same byte size.
 *
 * The copying API is the non-CPU side's (CPU's when both are CPU); two different non-CPU
 * device types are refused. Size = product(shape) * ceil(bits * lanes / 8).
 */
int TVMDeviceCopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream);

/*! \brief Wait for a stream through the device type's API. */
int TVMSynchronize(int device_type, int device_id, TVMStreamHandle stream);

/*!
 * \brief Query a DeviceAttrKind. Kind 0 (kExist) is answered here: 1 if an API is registered for
 *        dev.device_type, else 0, as kTVMArgInt. Other kinds go to the API's get_attr.
 */
int pytvm_crt_device_get_attr(DLDevice dev, int kind, TVMValue* out, int* out_code);

/* ------------------------------------------------------------------ trace hook */

/*! \brief Kinds and phases the device-API table reports to its trace hook. */
#define TVM_CRT_DEVICE_TRACE_COPY 2u
#define TVM_CRT_DEVICE_TRACE_ALLOC 3u
#define TVM_CRT_DEVICE_TRACE_FREE 4u
#define TVM_CRT_DEVICE_TRACE_SYNC 5u
#define TVM_CRT_DEVICE_TRACE_BEGIN 0u
#define TVM_CRT_DEVICE_TRACE_END 1u

/*!
 * \brief Called by the device-API table before (phase BEGIN) and after (phase END) a copy,
 *        alloc, free or sync, with its kind, the device type and the bytes involved. NULL (the
 *        default) costs one branch per call; a tracer (MinRPC's) sets it while recording.
 *        Built without TVM_CRT_TRACE, the table never calls it (and has no branch for it).
 */
typedef void (*pytvm_crt_device_trace_fn)(uint32_t kind, uint32_t phase, int32_t device_type,
                                      uint64_t bytes);
extern pytvm_crt_device_trace_fn pytvm_crt_device_trace_hook;

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_DEVICE_API_H_ */
