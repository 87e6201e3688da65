/*!
 * \file pytvm_crt/text.h
 * \brief Error texts without printf: append strings and numbers to a fixed buffer.
 *
 * Every append truncates at the buffer's end and keeps the text NUL-terminated. Numbers are
 * written without division (no 64-bit division helper on 32-bit targets).
 *
 * The PYTVM_CRT_MSG_* macros append the details of an error message; with TVM_CRT_ERROR_TEXTS
 * 0 they compile to nothing, so an error keeps only its short fixed head ("ValueError:
 * TVMFuncCall") and the detail strings never enter the image.
 */
#ifndef PYTVM_CRT_TEXT_H_
#define PYTVM_CRT_TEXT_H_

#include <stddef.h>
#include <stdint.h>

#include "pytvm_crt/crt_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief A text being written into buf (cap bytes, NUL included). */
typedef struct {
  char* buf;
  size_t cap;
  size_t len;
} pytvm_crt_text;

/*! \brief Start an empty text in buf (cap >= 1). */
void pytvm_crt_text_init(pytvm_crt_text* t, char* buf, size_t cap);
/*! \brief Append s (NULL appends nothing). */
void pytvm_crt_text_str(pytvm_crt_text* t, const char* s);
/*! \brief Append at most max_len characters of s. */
void pytvm_crt_text_strn(pytvm_crt_text* t, const char* s, size_t max_len);
/*! \brief Append v in decimal. */
void pytvm_crt_text_u64(pytvm_crt_text* t, uint64_t v);
/*! \brief Append v in decimal, with a '-' when negative. */
void pytvm_crt_text_i64(pytvm_crt_text* t, int64_t v);
/*! \brief Append v as 0x followed by lowercase hex digits (addresses). */
void pytvm_crt_text_hex(pytvm_crt_text* t, uint64_t v);

#if TVM_CRT_ERROR_TEXTS
#define PYTVM_CRT_MSG_STR(t, s) pytvm_crt_text_str((t), (s))
#define PYTVM_CRT_MSG_STRN(t, s, n) pytvm_crt_text_strn((t), (s), (size_t)(n))
#define PYTVM_CRT_MSG_U64(t, v) pytvm_crt_text_u64((t), (uint64_t)(v))
#define PYTVM_CRT_MSG_I64(t, v) pytvm_crt_text_i64((t), (int64_t)(v))
#define PYTVM_CRT_MSG_HEX(t, v) pytvm_crt_text_hex((t), (uint64_t)(v))
#define PYTVM_CRT_MSG_PTR(t, p) pytvm_crt_text_hex((t), (uint64_t)(uintptr_t)(const void*)(p))
#else
/* sizeof: the detail is not evaluated (no call for it stays in the image), yet counts as used. */
#define PYTVM_CRT_MSG_STR(t, s) ((void)(t), (void)sizeof(s))
#define PYTVM_CRT_MSG_STRN(t, s, n) ((void)(t), (void)sizeof(s), (void)sizeof(n))
#define PYTVM_CRT_MSG_U64(t, v) ((void)(t), (void)sizeof(v))
#define PYTVM_CRT_MSG_I64(t, v) ((void)(t), (void)sizeof(v))
#define PYTVM_CRT_MSG_HEX(t, v) ((void)(t), (void)sizeof(v))
#define PYTVM_CRT_MSG_PTR(t, p) ((void)(t), (void)sizeof(p))
#endif

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_TEXT_H_ */
