/*!
 * \file board.c
 * \brief Reset and fault handling of the mps2-an386 board image.
 *
 * Reset: enable the FPU (CPACR CP10/CP11 full access; the image is built for the hard-float
 * ABI), copy .data from flash, zero .bss, start SysTick and UART0, run main(), then stop the
 * emulator through semihosting with main's status.
 *
 * Faults (HardFault, MemManage, BusFault, UsageFault, NMI, and the unused SVCall/PendSV): a
 * LOG message "fault <n>: pc=... lr=... xpsr=... cfsr=... hfsr=... mmfar=... bfar=..." goes to
 * the host through the UART, then semihosting SYS_EXIT stops QEMU with status 1, so the host
 * sees its link close instead of waiting on a hung board (QemuBoard enables semihosting; where
 * nothing handles it, the board halts in a loop after the report).
 */
#include "board.h"

int main(void);

extern uint32_t __data_load__[];
extern uint32_t __data_start__[];
extern uint32_t __data_end__[];
extern uint32_t __bss_start__[];
extern uint32_t __bss_end__[];

#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88UL)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28UL)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2CUL)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34UL)
#define SCB_BFAR (*(volatile uint32_t*)0xE000ED38UL)
#define CPACR_CP10_CP11_FULL (0xFUL << 20)

void pytvm_board_reset(void) {
  uint32_t* dst;
  const uint32_t* src;
  int status;
  SCB_CPACR |= CPACR_CP10_CP11_FULL;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  src = __data_load__;
  for (dst = __data_start__; dst < __data_end__; ++dst, ++src) {
    *dst = *src;
  }
  for (dst = __bss_start__; dst < __bss_end__; ++dst) {
    *dst = 0U;
  }
  pytvm_board_timer_init();
  pytvm_board_uart_init();
  status = main();
  pytvm_board_semihost_exit(status == 0 ? PYTVM_BOARD_EXIT_OK : PYTVM_BOARD_EXIT_ERROR);
  for (;;) {
    __asm__ volatile("wfi");
  }
}

/* Append "<name>=0x<8 hex digits> " to buf at *pos (buf has room: the callers size it). */
static void put_hex(char* buf, size_t* pos, const char* name, uint32_t value) {
  static const char kDigits[] = "0123456789abcdef";
  int shift;
  while (*name != '\0') {
    buf[(*pos)++] = *name++;
  }
  buf[(*pos)++] = '=';
  buf[(*pos)++] = '0';
  buf[(*pos)++] = 'x';
  for (shift = 28; shift >= 0; shift -= 4) {
    buf[(*pos)++] = kDigits[(value >> (uint32_t)shift) & 0xFUL];
  }
  buf[(*pos)++] = ' ';
}

static void put_text(char* buf, size_t* pos, const char* text) {
  while (*text != '\0') {
    buf[(*pos)++] = *text++;
  }
}

static void stop(void) __attribute__((noreturn));
static void stop(void) {
  pytvm_board_semihost_exit(PYTVM_BOARD_EXIT_ERROR);
  for (;;) {
    __asm__ volatile("cpsid i\n\twfi" ::: "memory");
  }
}

void pytvm_board_fault(const uint32_t* frame, uint32_t exc_return) {
  char msg[200];
  size_t pos = 0;
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  put_text(msg, &pos, "board fault: ");
  put_hex(msg, &pos, "exception", ipsr & 0x1FFUL);
  put_hex(msg, &pos, "pc", frame[6]);
  put_hex(msg, &pos, "lr", frame[5]);
  put_hex(msg, &pos, "xpsr", frame[7]);
  put_hex(msg, &pos, "cfsr", SCB_CFSR);
  put_hex(msg, &pos, "hfsr", SCB_HFSR);
  put_hex(msg, &pos, "mmfar", SCB_MMFAR);
  put_hex(msg, &pos, "bfar", SCB_BFAR);
  put_hex(msg, &pos, "exc_return", exc_return);
  pytvm_board_log(msg, pos - 1U);
  stop();
}

void pytvm_board_halt(const char* text, uint32_t value) {
  char msg[120];
  size_t pos = 0;
  while (*text != '\0' && pos < 80U) {
    msg[pos++] = *text++;
  }
  msg[pos++] = ' ';
  put_hex(msg, &pos, "code", value);
  pytvm_board_log(msg, pos - 1U);
  stop();
}
