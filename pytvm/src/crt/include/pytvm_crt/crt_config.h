/*!
 * \file pytvm_crt/crt_config.h
 * \brief Compile-time limits of the C runtime; every value can be overridden with -D per build.
 *
 * Example: make CRT_CONFIG_FLAGS="-DTVM_CRT_MEMORY_POOL_LOG2=16 -DTVM_CRT_PAGE_BITS=10".
 *
 * Two configurations set the defaults: full (TVM_CRT_CONFIG_MINIMAL 0, host-sized: a 4 MiB pool,
 * tracing, accelerator support, stream syscalls and detailed error texts) and minimal
 * (TVM_CRT_CONFIG_MINIMAL 1, a microcontroller: a 16 KiB pool of 256-byte pages, small tables,
 * tracing, accelerator support and stream syscalls compiled out, errors reduced to their kind:
 * "ValueError", "RPCServerError: kCheckError"). MinRPC's limits follow the same switch
 * (pytvm_crt/minrpc_server.h).
 */
#ifndef PYTVM_CRT_CRT_CONFIG_H_
#define PYTVM_CRT_CRT_CONFIG_H_

/*! \brief 1 selects the minimal configuration's defaults (see above). */
#ifndef TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_CONFIG_MINIMAL 0
#endif

/*! \brief 1: error messages say where and carry their details (values, names); 0: only the
 *  kind ("ValueError"; MinRPC's "RPCServerError: <status>"), a short fixed string. */
#ifndef TVM_CRT_ERROR_TEXTS
#define TVM_CRT_ERROR_TEXTS (!TVM_CRT_CONFIG_MINIMAL)
#endif

/*! \brief 1: MinRPC's trace ring and its three pytvm.hop.* global functions are compiled in. */
#ifndef TVM_CRT_TRACE
#define TVM_CRT_TRACE (!TVM_CRT_CONFIG_MINIMAL)
#endif

/*! \brief 1: MinRPC serves non-CPU devices (copies staged through TVMDeviceCopyDataFromTo);
 *  0: its copies (kCopyToRemote, kCopyFromRemote, kCopyAmongRemote) take CPU memory only and
 *  are made in place, other devices are refused. */
#ifndef TVM_CRT_ACCELERATOR
#define TVM_CRT_ACCELERATOR (!TVM_CRT_CONFIG_MINIMAL)
#endif

/*! \brief 1: MinRPC answers kDevCreateStream/FreeStream/SetStream/GetCurrentStream (0: refused). */
#ifndef TVM_CRT_STREAM_SYSCALLS
#define TVM_CRT_STREAM_SYSCALLS (!TVM_CRT_CONFIG_MINIMAL)
#endif

/*! \brief 1 enables debug logging through TVMLogf. */
#ifndef TVM_CRT_DEBUG
#define TVM_CRT_DEBUG 0
#endif

/*! \brief Maximum number of dimensions of a TVMNDArray. */
#ifndef TVM_CRT_MAX_NDIM
#define TVM_CRT_MAX_NDIM 6
#endif

/*! \brief Maximum number of arguments of a generated function. */
#ifndef TVM_CRT_MAX_ARGS
#define TVM_CRT_MAX_ARGS 10
#endif

/*! \brief Maximum length of a dtype string such as "float32", NUL excluded. */
#ifndef TVM_CRT_MAX_STRLEN_DLTYPE
#define TVM_CRT_MAX_STRLEN_DLTYPE 10
#endif

/*! \brief Maximum length of a function name, NUL excluded. */
#ifndef TVM_CRT_MAX_STRLEN_FUNCTION_NAME
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_STRLEN_FUNCTION_NAME 48
#else
#define TVM_CRT_MAX_STRLEN_FUNCTION_NAME 80
#endif
#endif

/*! \brief Number of global functions the runtime's global registry is sized for (<= 255). */
#ifndef TVM_CRT_MAX_REGISTERED_FUNCTIONS
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_REGISTERED_FUNCTIONS 8
#else
#define TVM_CRT_MAX_REGISTERED_FUNCTIONS 32
#endif
#endif

/*! \brief Average name length (NUL excluded) a mutable registry's capacity is computed from. */
#ifndef TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES
#define TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES 24
#endif

/*! \brief Size of the module table (<= 32767: the index has 15 bits in a function handle). */
#ifndef TVM_CRT_MAX_REGISTERED_MODULES
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_REGISTERED_MODULES 2
#else
#define TVM_CRT_MAX_REGISTERED_MODULES 4
#endif
#endif

/*! \brief Size of the device API table (CPU takes one entry). */
#ifndef TVM_CRT_MAX_DEVICE_APIS
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_DEVICE_APIS 1
#else
#define TVM_CRT_MAX_DEVICE_APIS 4
#endif
#endif

/*! \brief log2 of the static memory pool in bytes (22: 4 MiB, 16: 64 KiB, ...). */
#ifndef TVM_CRT_MEMORY_POOL_LOG2
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MEMORY_POOL_LOG2 14
#else
#define TVM_CRT_MEMORY_POOL_LOG2 22
#endif
#endif

/*! \brief log2 of the page size of the page allocator (12: 4 KiB pages). */
#ifndef TVM_CRT_PAGE_BITS
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_PAGE_BITS 8
#else
#define TVM_CRT_PAGE_BITS 12
#endif
#endif

/*! \brief Bytes of the pool reserved for the workspace stack at TVMInitializeRuntime. */
#ifndef TVM_CRT_WORKSPACE_BYTES
#define TVM_CRT_WORKSPACE_BYTES ((1UL << TVM_CRT_MEMORY_POOL_LOG2) / 4UL)
#endif

/*! \brief Alignment of every workspace block (a power of two, at most the page size). */
#ifndef TVM_CRT_WORKSPACE_ALIGNMENT
#define TVM_CRT_WORKSPACE_ALIGNMENT 64
#endif

/*! \brief Maximum number of workspace blocks alive at once. */
#ifndef TVM_CRT_MAX_WORKSPACE_DEPTH
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_WORKSPACE_DEPTH 8
#else
#define TVM_CRT_MAX_WORKSPACE_DEPTH 32
#endif
#endif

/*! \brief Most repeats one runtime.RPCTimeEvaluator call measures (common/time_evaluator.c). */
#ifndef TVM_CRT_MAX_TIME_EVALUATOR_REPEAT
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_TIME_EVALUATOR_REPEAT 4
#else
#define TVM_CRT_MAX_TIME_EVALUATOR_REPEAT 64
#endif
#endif

/*! \brief Size of the last-error buffer, NUL included; longer messages are truncated. */
#ifndef TVM_CRT_MAX_ERROR_MESSAGE_BYTES
#if TVM_CRT_CONFIG_MINIMAL
#define TVM_CRT_MAX_ERROR_MESSAGE_BYTES 96
#else
#define TVM_CRT_MAX_ERROR_MESSAGE_BYTES 256
#endif
#endif

/* Derived values. */
#define TVM_CRT_MEMORY_POOL_BYTES ((size_t)1 << TVM_CRT_MEMORY_POOL_LOG2)
#define TVM_CRT_PAGE_BYTES ((size_t)1 << TVM_CRT_PAGE_BITS)
#define TVM_CRT_NUM_PAGES ((size_t)1 << (TVM_CRT_MEMORY_POOL_LOG2 - TVM_CRT_PAGE_BITS))

/* Consistency checks, evaluated by the preprocessor. */
#if TVM_CRT_PAGE_BITS < 6 || TVM_CRT_PAGE_BITS > 20
#error "TVM_CRT_PAGE_BITS must be in [6, 20]"
#endif
#if TVM_CRT_MEMORY_POOL_LOG2 <= TVM_CRT_PAGE_BITS || TVM_CRT_MEMORY_POOL_LOG2 > 30
#error "TVM_CRT_MEMORY_POOL_LOG2 must be above TVM_CRT_PAGE_BITS and at most 30"
#endif
#if TVM_CRT_WORKSPACE_BYTES >= (1UL << TVM_CRT_MEMORY_POOL_LOG2)
#error "TVM_CRT_WORKSPACE_BYTES must be smaller than the memory pool"
#endif
#if TVM_CRT_WORKSPACE_ALIGNMENT < 1 ||                                          \
    (TVM_CRT_WORKSPACE_ALIGNMENT & (TVM_CRT_WORKSPACE_ALIGNMENT - 1)) != 0 || \
    TVM_CRT_WORKSPACE_ALIGNMENT > (1UL << TVM_CRT_PAGE_BITS)
#error "TVM_CRT_WORKSPACE_ALIGNMENT must be a power of two no larger than the page size"
#endif
#if TVM_CRT_MAX_WORKSPACE_DEPTH < 1
#error "TVM_CRT_MAX_WORKSPACE_DEPTH must be at least 1"
#endif
/*! \brief Globals the runtime and MinRPC register themselves: runtime.SystemLib,
 *  tvm.rpc.server.GetCRTMaxPacketSize and, with TVM_CRT_TRACE, pytvm.hop.trace_{start,stop,collect}. */
#define TVM_CRT_BUILTIN_FUNCTIONS (2 + ((TVM_CRT_TRACE) ? 3 : 0))
#if TVM_CRT_MAX_REGISTERED_FUNCTIONS < TVM_CRT_BUILTIN_FUNCTIONS + 1 || \
    TVM_CRT_MAX_REGISTERED_FUNCTIONS > 255
#error "TVM_CRT_MAX_REGISTERED_FUNCTIONS must be in [TVM_CRT_BUILTIN_FUNCTIONS + 1, 255]: the runtime and MinRPC register TVM_CRT_BUILTIN_FUNCTIONS, the names blob count is one byte"
#endif
#if TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES < 1
#error "TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES must be at least 1"
#endif
#if TVM_CRT_MAX_STRLEN_FUNCTION_NAME < 1
#error "TVM_CRT_MAX_STRLEN_FUNCTION_NAME must be at least 1"
#endif
#if TVM_CRT_MAX_REGISTERED_MODULES < 1 || TVM_CRT_MAX_REGISTERED_MODULES > 32767
#error "TVM_CRT_MAX_REGISTERED_MODULES must be in [1, 32767]"
#endif
#if TVM_CRT_MAX_DEVICE_APIS < 1
#error "TVM_CRT_MAX_DEVICE_APIS must be at least 1"
#endif
#if TVM_CRT_MAX_NDIM < 1 || TVM_CRT_MAX_ARGS < 1 || TVM_CRT_MAX_STRLEN_DLTYPE < 1
#error "TVM_CRT_MAX_NDIM, TVM_CRT_MAX_ARGS and TVM_CRT_MAX_STRLEN_DLTYPE must be positive"
#endif
#if TVM_CRT_MAX_TIME_EVALUATOR_REPEAT < 1
#error "TVM_CRT_MAX_TIME_EVALUATOR_REPEAT must be at least 1"
#endif
#if TVM_CRT_MAX_ERROR_MESSAGE_BYTES < 2
#error "TVM_CRT_MAX_ERROR_MESSAGE_BYTES must be at least 2"
#endif

#endif /* PYTVM_CRT_CRT_CONFIG_H_ */
