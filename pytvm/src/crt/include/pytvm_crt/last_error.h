/*!
 * \file pytvm_crt/last_error.h
 * \brief Building the last error behind TVMAPISetLastError / TVMGetLastError (declared in
 *        pytvm/c_runtime_api.h) from pieces, without printf.
 *
 * The buffer holds TVM_CRT_MAX_ERROR_MESSAGE_BYTES bytes, NUL included; longer messages are
 * cut at a byte boundary and always NUL-terminated. Messages start with an error kind
 * ("ValueError: ...") so an RPC client can re-raise the same kind. One buffer: the CRT is
 * single-threaded.
 */
#ifndef PYTVM_CRT_LAST_ERROR_H_
#define PYTVM_CRT_LAST_ERROR_H_

#include "pytvm_crt/text.h"

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief Set the last error to `head` (its kind and where: "ValueError: TVMFuncCall") and
 *        return the text after it, for details appended with PYTVM_CRT_MSG_* (pytvm_crt/text.h).
 *
 * Example:
 *   pytvm_crt_text* msg = pytvm_crt_error_begin("ValueError: TVMFuncCall");
 *   PYTVM_CRT_MSG_STR(msg, ": handle ");
 *   PYTVM_CRT_MSG_PTR(msg, handle);
 */
pytvm_crt_text* pytvm_crt_error_begin(const char* head);

/*!
 * \brief The head of an error: "Kind: where" ("ValueError: TVMFuncCall"); without
 *        TVM_CRT_ERROR_TEXTS only "Kind", so each kind's text is stored once in an image.
 *
 * Example: pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", "TVMFuncCall"))
 */
#if TVM_CRT_ERROR_TEXTS
#define PYTVM_CRT_ERROR_HEAD(kind, where) kind ": " where
#else
#define PYTVM_CRT_ERROR_HEAD(kind, where) kind
#endif

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_LAST_ERROR_H_ */
