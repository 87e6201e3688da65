/*! \file last_error.c \brief The last-error buffer (TVMAPISetLastError / TVMGetLastError). */
#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/last_error.h"
#include "pytvm_crt/tvm_c_api.h"

static char g_last_error[TVM_CRT_MAX_ERROR_MESSAGE_BYTES];
static pytvm_crt_text g_last_error_text;

void TVMAPISetLastError(const char* msg) {
  pytvm_crt_text_init(&g_last_error_text, g_last_error, sizeof(g_last_error));
  pytvm_crt_text_str(&g_last_error_text, msg);
}

const char* TVMGetLastError(void) { return g_last_error; }

pytvm_crt_text* pytvm_crt_error_begin(const char* head) {
  TVMAPISetLastError(head);
  return &g_last_error_text;
}
