/*! \file last_error.c \brief The last-error buffer (TVMAPISetLastError / TVMGetLastError). */
#include <stdarg.h>
#include <stdio.h>

#include "pytvm_crt/crt_config.h"
#include "pytvm_crt/last_error.h"
#include "pytvm_crt/tvm_c_api.h"

static char g_last_error[TVM_CRT_MAX_ERROR_MESSAGE_BYTES];

void TVMAPISetLastError(const char* msg) {
  size_t i = 0U;
  if (msg != NULL) {
    while ((i + 1U < sizeof(g_last_error)) && (msg[i] != '\0')) {
      g_last_error[i] = msg[i];
      i++;
    }
  }
  g_last_error[i] = '\0';
}

const char* TVMGetLastError(void) { return g_last_error; }

void TVMCrtSetLastErrorf(const char* fmt, ...) {
  va_list args;
  if (fmt == NULL) {
    g_last_error[0] = '\0';
    return;
  }
  va_start(args, fmt);
  /* vsnprintf always NUL-terminates within the size given and truncates the rest. */
  if (vsnprintf(g_last_error, sizeof(g_last_error), fmt, args) < 0) {
    g_last_error[0] = '\0';
  }
  va_end(args);
}
