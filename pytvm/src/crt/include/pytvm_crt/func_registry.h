/*!
 * \file pytvm_crt/func_registry.h
 * \brief TVMFuncRegistry (a const, flash-resident name -> function table) and
 *        TVMMutableFuncRegistry (the same layout in a caller-given RAM block, with Set).
 *
 * names blob: byte 0 is the function count N (at most 255), then N NUL-terminated names, then
 * one more NUL. With N = 2: | 2 | f o o \0 | b a r \0 | \0 |. funcs[i] is the function named by
 * the i-th name. Lookup scans the names linearly.
 */
#ifndef PYTVM_CRT_FUNC_REGISTRY_H_
#define PYTVM_CRT_FUNC_REGISTRY_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/error_codes.h"
#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief 0-based position of a function in a registry. */
typedef uint16_t tvm_function_index_t;

/*! \brief Name -> function lookup table; every lookup works on a const instance. */
typedef struct TVMFuncRegistry {
  /*! \brief Count byte, NUL-separated names, final NUL (see the file comment). */
  const char* names;
  /*! \brief Function pointers, in the same order as their names in `names`. */
  const TVMBackendPackedCFunc* funcs;
} TVMFuncRegistry;

/*! \brief Number of functions (the count byte); 0 for a NULL registry or names blob. */
uint16_t TVMFuncRegistry_NumFuncs(const TVMFuncRegistry* reg);

/*!
 * \brief Find a function by name.
 * \return kTvmErrorNoError and *out_index set; kTvmErrorFunctionNameNotFound;
 *         kTvmErrorArgumentNull when a pointer is NULL.
 */
tvm_crt_error_t TVMFuncRegistry_Lookup(const TVMFuncRegistry* reg, const char* name,
                                       tvm_function_index_t* out_index);

/*!
 * \brief The function at an index.
 * \return kTvmErrorNoError; kTvmErrorFunctionIndexInvalid when index >= count or the slot holds
 *         NULL; kTvmErrorArgumentNull when a pointer is NULL.
 */
tvm_crt_error_t TVMFuncRegistry_GetByIndex(const TVMFuncRegistry* reg, tvm_function_index_t index,
                                           TVMBackendPackedCFunc* out_func);

/*! \brief A TVMFuncRegistry in RAM that functions can be added to and replaced in. */
typedef struct TVMMutableFuncRegistry {
  /*! \brief The registry view (names and funcs point into the caller's block). */
  TVMFuncRegistry registry;
  /*! \brief Most functions this registry can hold (computed by Create, at most 255). */
  size_t max_functions;
  /*! \brief Writable aliases of registry.names / registry.funcs. */
  char* names_rw;
  TVMBackendPackedCFunc* funcs_rw;
  /*! \brief Bytes available to the names blob, count byte and final NUL included. */
  size_t names_capacity;
} TVMMutableFuncRegistry;

/*!
 * \brief Bytes a block needs to hold n functions whose names average
 *        TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES characters.
 */
#define TVM_CRT_MUTABLE_FUNC_REGISTRY_BYTES(n)                                            \
  ((size_t)(n) * (sizeof(TVMBackendPackedCFunc) +                                         \
                  (size_t)TVM_CRT_AVERAGE_FUNCTION_NAME_LENGTH_BYTES + 1U) +              \
   2U + sizeof(TVMBackendPackedCFunc))

/*!
 * \brief Lay out an empty registry in one caller-given block (any alignment).
 *
 * Capacity: (size - 2 - sizeof(func)) / (sizeof(func) + average name length + 1), at most 255;
 * names longer than the average use up the names space sooner (Set then reports full).
 * \return kTvmErrorNoError; kTvmErrorBufferTooSmall when not even one function fits;
 *         kTvmErrorArgumentNull when a pointer is NULL.
 */
tvm_crt_error_t TVMMutableFuncRegistry_Create(TVMMutableFuncRegistry* reg, uint8_t* buffer,
                                              size_t buffer_size_bytes);

/*!
 * \brief Add `name` -> `func`, or replace the function of an existing name when override != 0.
 * \return kTvmErrorNoError; kTvmErrorFunctionAlreadyDefined (name exists, override == 0);
 *         kTvmErrorFunctionRegistryFull (no slot or no names space left);
 *         kTvmErrorFunctionNameTooLong (more than TVM_CRT_MAX_STRLEN_FUNCTION_NAME characters);
 *         kTvmErrorFunctionNameEmpty; kTvmErrorArgumentNull when a pointer is NULL.
 */
tvm_crt_error_t TVMMutableFuncRegistry_Set(TVMMutableFuncRegistry* reg, const char* name,
                                           TVMBackendPackedCFunc func, int override);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_FUNC_REGISTRY_H_ */
