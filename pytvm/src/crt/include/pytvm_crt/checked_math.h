/*!
 * \file pytvm_crt/checked_math.h
 * \brief Overflow-checked 64-bit multiplication without division (a 32-bit target then needs
 *        no 64-bit division helper such as __aeabi_uldivmod).
 */
#ifndef PYTVM_CRT_CHECKED_MATH_H_
#define PYTVM_CRT_CHECKED_MATH_H_

#include <stdint.h>

/*! \brief *out = a * b; returns 1 (and leaves *out alone) when the product exceeds 64 bits. */
static inline int pytvm_crt_mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  uint64_t a_hi = a >> 32;
  uint64_t b_hi = b >> 32;
  uint64_t cross;
  uint64_t low;
  uint64_t sum;
  if ((a_hi != 0U) && (b_hi != 0U)) {
    return 1;
  }
  cross = (a_hi * (b & 0xFFFFFFFFU)) + (b_hi * (a & 0xFFFFFFFFU)); /* one term is 0 */
  if ((cross >> 32) != 0U) {
    return 1;
  }
  low = (a & 0xFFFFFFFFU) * (b & 0xFFFFFFFFU);
  sum = low + (cross << 32);
  if (sum < low) {
    return 1;
  }
  *out = sum;
  return 0;
}

#endif /* PYTVM_CRT_CHECKED_MATH_H_ */
