/*! \file text.c \brief Appending strings and numbers to a fixed buffer (pytvm_crt/text.h). */
#include "pytvm_crt/text.h"

void pytvm_crt_text_init(pytvm_crt_text* t, char* buf, size_t cap) {
  t->buf = buf;
  t->cap = cap;
  t->len = 0U;
  if (cap > 0U) {
    buf[0] = '\0';
  }
}

static void put_char(pytvm_crt_text* t, char c) {
  if (t->len + 1U < t->cap) {
    t->buf[t->len] = c;
    t->len++;
    t->buf[t->len] = '\0';
  }
}

void pytvm_crt_text_strn(pytvm_crt_text* t, const char* s, size_t max_len) {
  size_t i;
  if (s == NULL) {
    return;
  }
  for (i = 0U; (i < max_len) && (s[i] != '\0'); ++i) {
    put_char(t, s[i]);
  }
}

void pytvm_crt_text_str(pytvm_crt_text* t, const char* s) {
  pytvm_crt_text_strn(t, s, (size_t)-1);
}

void pytvm_crt_text_u64(pytvm_crt_text* t, uint64_t v) {
  /* Each digit by repeated subtraction of a power of ten: no division helper needed. */
  static const uint64_t kPowers[] = {
      10000000000000000000ULL, 1000000000000000000ULL, 100000000000000000ULL,
      10000000000000000ULL,    1000000000000000ULL,    100000000000000ULL,
      10000000000000ULL,       1000000000000ULL,       100000000000ULL,
      10000000000ULL,          1000000000ULL,          100000000ULL,
      10000000ULL,             1000000ULL,             100000ULL,
      10000ULL,                1000ULL,                100ULL,
      10ULL,                   1ULL};
  size_t i;
  int started = 0;
  for (i = 0U; i < sizeof(kPowers) / sizeof(kPowers[0]); ++i) {
    char digit = '0';
    while (v >= kPowers[i]) {
      v -= kPowers[i];
      digit++;
    }
    if ((digit != '0') || (started != 0) || (kPowers[i] == 1U)) {
      put_char(t, digit);
      started = 1;
    }
  }
}

void pytvm_crt_text_i64(pytvm_crt_text* t, int64_t v) {
  if (v < 0) {
    put_char(t, '-');
    pytvm_crt_text_u64(t, (uint64_t)0 - (uint64_t)v);
  } else {
    pytvm_crt_text_u64(t, (uint64_t)v);
  }
}

void pytvm_crt_text_hex(pytvm_crt_text* t, uint64_t v) {
  static const char kDigits[] = "0123456789abcdef";
  int shift;
  int started = 0;
  put_char(t, '0');
  put_char(t, 'x');
  for (shift = 60; shift >= 0; shift -= 4) {
    uint32_t nibble = (uint32_t)(v >> (uint32_t)shift) & 0xFU;
    if ((nibble != 0U) || (started != 0) || (shift == 0)) {
      put_char(t, kDigits[nibble]);
      started = 1;
    }
  }
}
