/*! \file crt_string.c \brief Bounded string helpers (no unbounded strlen on external input). */
#include "crt_internal.h"

size_t pytvm_crt_str_len(const char* s, size_t max_len) {
  size_t n = 0U;
  if (s == NULL) {
    return 0U;
  }
  while ((n < max_len) && (s[n] != '\0')) {
    n++;
  }
  return n;
}

int pytvm_crt_str_equal(const char* a, const char* b, size_t len) {
  size_t i;
  if ((a == NULL) || (b == NULL)) {
    return 0;
  }
  for (i = 0U; i < len; i++) {
    if (a[i] != b[i]) {
      return 0;
    }
  }
  return (b[len] == '\0') ? 1 : 0;
}
