/*!
 * \file main.c
 * \brief A model as one standalone program: the AOT executor's C (tvmgen_default_run, weights as
 *        const arrays, one static workspace) called on an input array compiled in, its outputs
 *        printed with the top class. No runtime, no RPC, no allocation.
 *
 * bundle_data.h (written by build_model.py) holds the input arrays, the output buffers, their
 * descriptions and bundle_bind(), which points the tvmgen_default structs at them. The program
 * prints the best run's time (the board's clock: under QEMU's -icount shift=0 its instruction
 * count), on the board the stack's high-water mark, then for each output one line per value:
 * its index, its float32 bits in hex (exact) and its value with 8 decimals, the top class of
 * the first output and an end line:
 *
 *   bundle: model kws_cnn
 *   bundle: best of 1 runs: 10879720 ns
 *   bundle: stack used 348 bytes
 *   output 0 "output": 12 x float32
 *     0 0x3db1056c 0.08643612
 *     ...
 *   top class: 7 (0.23357224)
 *   bundle: done status 0
 *
 * Two ports, chosen by the Makefile:
 *   host (BUNDLE_HOST)    stdout; `bundle [--repeat N] [FILE...]` runs the model N times and
 *                         reads input i's raw bytes from FILE i instead of the compiled-in
 *                         array (each file exactly the input's size)
 *   board (no macro)      the board's UART (pytvm_board_uart_write); the board's reset handler
 *                         calls main() and stops QEMU through semihosting with its status;
 *                         BUNDLE_REPEAT runs (default 1)
 */
#if defined(BUNDLE_HOST)
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#endif
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bundle_data.h"

#if defined(BUNDLE_HOST)
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#else
/*! \brief Write n bytes to UART0 (the board's). */
int pytvm_board_uart_write(const uint8_t* data, size_t n);
/*! \brief Nanoseconds since reset from SysTick (the board's; under QEMU's -icount shift=0 one
 *         instruction is one ns). */
uint64_t TVMPlatformMonotonicNs(void);
/* the main stack's ends (board.ld) */
extern uint32_t __stack_bottom[];
extern uint32_t __stack_top[];
#endif

static void bundle_write(const char* text, size_t n) {
#if defined(BUNDLE_HOST)
  (void)fwrite(text, 1U, n, stdout);
#else
  (void)pytvm_board_uart_write((const uint8_t*)text, n);
#endif
}

static void bundle_puts(const char* text) { bundle_write(text, strlen(text)); }

static uint64_t bundle_now_ns(void) {
#if defined(BUNDLE_HOST)
  struct timespec now;
  (void)clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000U + (uint64_t)now.tv_nsec;
#else
  return TVMPlatformMonotonicNs();
#endif
}

/*! \brief Print an unsigned decimal number, at least min_digits digits (leading zeros). */
static void bundle_put_uint(uint64_t value, int min_digits) {
  char digits[24];
  size_t n = 0U;
  do {
    digits[sizeof(digits) - 1U - n] = (char)('0' + (int)(value % 10U));
    value /= 10U;
    n++;
  } while ((value != 0U || (int)n < min_digits) && n < sizeof(digits));
  bundle_write(&digits[sizeof(digits) - n], n);
}

static void bundle_put_int(int64_t value) {
  if (value < 0) {
    bundle_puts("-");
    bundle_put_uint((uint64_t)(-(value + 1)) + 1U, 1);
  } else {
    bundle_put_uint((uint64_t)value, 1);
  }
}

static void bundle_put_hex32(uint32_t value) {
  static const char hex[] = "0123456789abcdef";
  char text[10] = {'0', 'x'};
  for (int i = 0; i < 8; ++i) {
    text[2 + i] = hex[(value >> (28 - 4 * i)) & 0xFU];
  }
  bundle_write(text, sizeof(text));
}

/*! \brief A float with 8 decimals (rounded), "nan"/"inf", or "large" past 1e9 (the hex is exact). */
static void bundle_put_float(float value) {
  if (value != value) {
    bundle_puts("nan");
    return;
  }
  double magnitude = (double)value;
  if (magnitude < 0.0) {
    bundle_puts("-");
    magnitude = -magnitude;
  }
  if (magnitude >= 1e9) {
    bundle_puts(magnitude > 3.5e38 ? "inf" : "large");
    return;
  }
  uint64_t scaled = (uint64_t)(magnitude * 1e8 + 0.5);
  bundle_put_uint(scaled / 100000000U, 1);
  bundle_puts(".");
  bundle_put_uint(scaled % 100000000U, 8);
}

static uint32_t bundle_float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

#if !defined(BUNDLE_HOST)
#define BUNDLE_STACK_PAINT 0x5AC4C0DEU

/*! \brief Fill the unused main stack (below this frame, less a margin) with a pattern. */
static void __attribute__((noinline)) bundle_paint_stack(void) {
  volatile uint32_t here = 0U;
  volatile uint32_t* word = __stack_bottom;
  uintptr_t limit = (uintptr_t)&here - 256U;
  while ((uintptr_t)word < limit) {
    *word++ = BUNDLE_STACK_PAINT;
  }
}

/*! \brief Bytes of the main stack used so far: from its top to the lowest word not painted. */
static size_t bundle_stack_used(void) {
  const volatile uint32_t* word = __stack_bottom;
  while (word < __stack_top && *word == BUNDLE_STACK_PAINT) {
    ++word;
  }
  return (size_t)((uintptr_t)__stack_top - (uintptr_t)word);
}
#endif

/*! \brief Value i of an output as a float, whatever its element type. */
static float bundle_output_value(const bundle_tensor* t, size_t i) {
  switch (t->dtype) {
    case BUNDLE_FLOAT32:
      return ((const float*)t->data)[i];
    case BUNDLE_INT8:
      return (float)((const int8_t*)t->data)[i];
    case BUNDLE_UINT8:
      return (float)((const uint8_t*)t->data)[i];
    case BUNDLE_INT32:
      return (float)((const int32_t*)t->data)[i];
    default:
      return 0.0F;
  }
}

static void bundle_print_output(size_t index, const bundle_tensor* t) {
  bundle_puts("output ");
  bundle_put_uint(index, 1);
  bundle_puts(" \"");
  bundle_puts(t->name);
  bundle_puts("\": ");
  bundle_put_uint(t->count, 1);
  bundle_puts(" x ");
  bundle_puts(t->dtype_name);
  bundle_puts("\n");
  for (size_t i = 0U; i < t->count; ++i) {
    float value = bundle_output_value(t, i);
    bundle_puts("  ");
    bundle_put_uint(i, 1);
    bundle_puts(" ");
    if (t->dtype == BUNDLE_FLOAT32) {
      bundle_put_hex32(bundle_float_bits(value));
      bundle_puts(" ");
      bundle_put_float(value);
    } else {
      bundle_put_int((int64_t)value);
    }
    bundle_puts("\n");
  }
}

static void bundle_print_top(const bundle_tensor* t) {
  size_t best = 0U;
  for (size_t i = 1U; i < t->count; ++i) {
    if (bundle_output_value(t, i) > bundle_output_value(t, best)) {
      best = i;
    }
  }
  bundle_puts("top class: ");
  bundle_put_uint(best, 1);
  bundle_puts(" (");
  bundle_put_float(bundle_output_value(t, best));
  bundle_puts(")\n");
}

#if defined(BUNDLE_HOST)
/*! \brief Read input i's bytes from path (exactly its size); 0 on success. */
static int bundle_read_input(const char* path, const bundle_tensor* t) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) {
    (void)fprintf(stderr, "bundle: cannot open %s\n", path);
    return 1;
  }
  size_t got = fread(t->data, 1U, t->nbytes, file);
  int extra = fgetc(file);
  (void)fclose(file);
  if (got != t->nbytes || extra != EOF) {
    (void)fprintf(stderr, "bundle: %s must hold exactly %lu bytes (input \"%s\")\n", path,
                  (unsigned long)t->nbytes, t->name);
    return 1;
  }
  return 0;
}
#endif

/*! \brief Run the model `repeat` times on the bound inputs, print the best run's time and the
 *         outputs; the program's status. */
static int bundle_run(uint32_t repeat) {
  struct tvmgen_default_inputs inputs;
  struct tvmgen_default_outputs outputs;
  uint64_t best_ns = UINT64_MAX;
  memset(&inputs, 0, sizeof(inputs));
  memset(&outputs, 0, sizeof(outputs));
  bundle_bind(&inputs, &outputs);
  bundle_puts("bundle: model " BUNDLE_MODEL_NAME "\n");
  for (uint32_t r = 0U; r < repeat; ++r) {
    uint64_t start = bundle_now_ns();
    int32_t status = tvmgen_default_run(&inputs, &outputs);
    uint64_t elapsed = bundle_now_ns() - start;
    if (status != 0) {
      bundle_puts("bundle: tvmgen_default_run failed with status ");
      bundle_put_int(status);
      bundle_puts("\n");
      return 1;
    }
    best_ns = elapsed < best_ns ? elapsed : best_ns;
  }
  bundle_puts("bundle: best of ");
  bundle_put_uint(repeat, 1);
  bundle_puts(" runs: ");
  bundle_put_uint(best_ns, 1);
  bundle_puts(" ns\n");
#if !defined(BUNDLE_HOST)
  bundle_puts("bundle: stack used ");
  bundle_put_uint(bundle_stack_used(), 1);
  bundle_puts(" bytes\n");
#endif
  for (size_t i = 0U; i < BUNDLE_NUM_OUTPUTS; ++i) {
    bundle_print_output(i, &bundle_outputs[i]);
  }
  bundle_print_top(&bundle_outputs[0]);
  return 0;
}

static int bundle_finish(int status) {
  bundle_puts("bundle: done status ");
  bundle_put_uint((uint64_t)status, 1);
  bundle_puts("\n");
  return status;
}

#if defined(BUNDLE_HOST)
int main(int argc, char** argv) {
  uint32_t repeat = 1U;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
    long value = strtol(argv[2], NULL, 10);
    repeat = value > 0 && value < 100000000L ? (uint32_t)value : 0U;
    first = 3;
  }
  if (repeat == 0U || (argc > first && (size_t)(argc - first) != BUNDLE_NUM_INPUTS)) {
    (void)fprintf(stderr,
                  "usage: %s [--repeat N] [INPUT_FILE x %d]\n"
                  "  INPUT_FILE: the raw bytes of an input (default: the compiled-in arrays)\n",
                  argv[0], (int)BUNDLE_NUM_INPUTS);
    return 2;
  }
  for (int i = first; i < argc; ++i) {
    if (bundle_read_input(argv[i], &bundle_inputs[i - first]) != 0) {
      return 2;
    }
  }
  return bundle_finish(bundle_run(repeat));
}
#else
#ifndef BUNDLE_REPEAT
#define BUNDLE_REPEAT 1U
#endif
int main(void);
int main(void) {
  bundle_paint_stack();
  return bundle_finish(bundle_run(BUNDLE_REPEAT));
}
#endif
