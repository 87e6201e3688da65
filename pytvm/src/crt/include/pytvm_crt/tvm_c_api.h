/*!
 * \file pytvm_crt/tvm_c_api.h
 * \brief Includes pytvm's TVM C API headers with PYTVM_CRT defined, so the API names are the
 *        plain TVM names that this runtime defines (not the host runtime's private labels).
 */
#ifndef PYTVM_CRT_TVM_C_API_H_
#define PYTVM_CRT_TVM_C_API_H_

#ifndef PYTVM_CRT
#if defined(PYTVM_C_RUNTIME_API_H_)
/* The header was included for the host runtime, whose API names are asm labels. */
#error "pytvm/c_runtime_api.h included without PYTVM_CRT: define PYTVM_CRT before including it"
#endif
#define PYTVM_CRT 1
#endif

#include "pytvm/c_backend_api.h"
#include "pytvm/c_runtime_api.h"
#include "pytvm/dlpack.h"

#endif /* PYTVM_CRT_TVM_C_API_H_ */
