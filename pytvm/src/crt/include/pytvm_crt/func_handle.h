/*!
 * \file pytvm_crt/func_handle.h
 * \brief Bit-packed function and module handles.
 *
 * A handle is a 32-bit value cast to a pointer:
 *
 *    31  30       bits       16 15        bits          0
 *   | V |     Module Index     |   Function Index + 1   |
 *
 * V = 1: a function of the module at Module Index in the module table.
 * V = 0: a global function; Module Index is 0.
 * The function field holds the 0-based index plus one, so no valid function handle is NULL
 * (in particular global function 0 is 0x00000001) and a field of 0 is never a function.
 * A module handle is V = 1, the module index, and a function field of 0.
 */
#ifndef PYTVM_CRT_FUNC_HANDLE_H_
#define PYTVM_CRT_FUNC_HANDLE_H_

#include <stdint.h>

#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/func_registry.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(UINTPTR_MAX) || UINTPTR_MAX < 0xFFFFFFFFU
#error "pytvm CRT handles need a uintptr_t of at least 32 bits"
#endif

/*! \brief Position of a module in the module table. */
typedef uint16_t tvm_module_index_t;

#define TVM_CRT_HANDLE_MODULE_VALID_BIT 0x80000000UL
#define TVM_CRT_HANDLE_MODULE_SHIFT 16U
#define TVM_CRT_HANDLE_MODULE_MASK 0x7FFFU
#define TVM_CRT_HANDLE_FUNCTION_MASK 0xFFFFUL
/*! \brief Largest function index a handle can carry (the field stores index + 1). */
#define TVM_CRT_HANDLE_MAX_FUNCTION_INDEX 0xFFFEU

/*! \brief A decoded function handle. */
typedef struct {
  /*! \brief 1: a module function; 0: a global function. */
  uint8_t in_module;
  /*! \brief Module table index (0 for a global function). */
  tvm_module_index_t module_index;
  /*! \brief 0-based function index within the registry. */
  tvm_function_index_t function_index;
} pytvm_crt_function_ref;

/*!
 * \brief Pack a function reference into a handle.
 * \return kTvmErrorNoError; kTvmErrorArgumentOutOfRange when module_index > 0x7FFF, when
 *         function_index > 0xFFFE, or when a global reference has a non-zero module index;
 *         kTvmErrorArgumentNull when out is NULL.
 */
tvm_crt_error_t pytvm_crt_encode_function_handle(const pytvm_crt_function_ref* ref, TVMFunctionHandle* out);

/*!
 * \brief Unpack a function handle (checks the bit pattern only, not the tables).
 * \return kTvmErrorNoError; kTvmErrorFunctionCallInvalidHandle for NULL, a value above 32 bits,
 *         a zero function field, or a global handle with module bits set.
 */
tvm_crt_error_t pytvm_crt_decode_function_handle(TVMFunctionHandle handle, pytvm_crt_function_ref* out);

/*! \brief Pack a module index into a module handle (never NULL). */
tvm_crt_error_t pytvm_crt_encode_module_handle(tvm_module_index_t module_index, TVMModuleHandle* out);

/*!
 * \brief Unpack a module handle (bit pattern only).
 * \return kTvmErrorNoError; kTvmErrorModuleInvalidHandle when it is not V=1 with a zero
 *         function field.
 */
tvm_crt_error_t pytvm_crt_decode_module_handle(TVMModuleHandle handle, tvm_module_index_t* out);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_FUNC_HANDLE_H_ */
