/*!
 * \file pytvm_crt/last_error.h
 * \brief Formatted setter for the last-error buffer behind TVMAPISetLastError /
 *        TVMGetLastError (declared in pytvm/c_runtime_api.h).
 *
 * The buffer holds TVM_CRT_MAX_ERROR_MESSAGE_BYTES bytes, NUL included; longer messages are
 * cut at a byte boundary and always NUL-terminated. Messages start with an error kind
 * ("ValueError: ...") so an RPC client can re-raise the same kind. One buffer: the CRT is
 * single-threaded.
 */
#ifndef PYTVM_CRT_LAST_ERROR_H_
#define PYTVM_CRT_LAST_ERROR_H_

#include "pytvm_crt/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Format into the last-error buffer (truncating). */
void TVMCrtSetLastErrorf(const char* fmt, ...) PYTVM_CRT_PRINTF(1, 2);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_LAST_ERROR_H_ */
