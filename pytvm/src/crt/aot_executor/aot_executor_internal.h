/*!
 * \file aot_executor_internal.h
 * \brief Shared between the AOT executor's files: naming, checking and copying the model's
 *        tensors (aot_tensor.c).
 */
#ifndef PYTVM_AOT_EXECUTOR_INTERNAL_H_
#define PYTVM_AOT_EXECUTOR_INTERNAL_H_

#include "pytvm_crt/aot_executor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Position of the tensor called `name` in tensors[0..count), or -1. */
int32_t pytvm_aot_find_tensor(const pytvm_aot_tensor* tensors, int32_t count, const char* name);

/*!
 * \brief The tensor an argument names (an int index or a str name) in *out_index.
 * \return 0, or -1 after an "IndexError"/"KeyError" last error naming `where`.
 */
int pytvm_aot_tensor_index(const pytvm_aot_tensor* tensors, int32_t count, const TVMValue* arg,
                           int code, const char* where, int32_t* out_index);

/*! \brief "name|dtype|d0,d1,..." of a tensor, in a static buffer valid until the next call. */
const char* pytvm_aot_tensor_info(const pytvm_aot_tensor* tensor);

/*!
 * \brief Copy between the model tensor's buffer and a client's tensor: into the buffer when
 *        to_model != 0, out of it otherwise. The client's tensor must be a compact CPU tensor
 *        of the model tensor's dtype and shape.
 * \return 0, or -1 after a "ValueError"/"TypeError" last error naming `where` and the tensor.
 */
int pytvm_aot_copy(const pytvm_aot_tensor* tensor, DLTensor* given, int to_model,
                   const char* where);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_AOT_EXECUTOR_INTERNAL_H_ */
