/*!
 * \file uart.c
 * \brief CMSDK APB UART0 of the mps2-an386: the serial link of the board image.
 *
 * Transmit polls STATE.TXFULL. Receive waits with WFI for the UART0 RX interrupt (IRQ 0) instead
 * of spinning, so an idle board costs the emulator (and the host running it) nothing; the
 * interrupt handler only acknowledges, the data register is read here.
 */
#include "board.h"

#include "pytvm_crt/serial_session.h"

#define UART0_BASE 0x40004000UL
#define UART0_REG(off) (*(volatile uint32_t*)(UART0_BASE + (off)))
#define UART_DATA UART0_REG(0x00UL)
#define UART_STATE UART0_REG(0x04UL)
#define UART_CTRL UART0_REG(0x08UL)
#define UART_INTSTATUS UART0_REG(0x0CUL)
#define UART_BAUDDIV UART0_REG(0x10UL)

#define UART_STATE_TXFULL 0x1UL
#define UART_STATE_RXFULL 0x2UL
#define UART_CTRL_TXEN 0x1UL
#define UART_CTRL_RXEN 0x2UL
#define UART_CTRL_RXINTEN 0x8UL
#define UART_INT_ALL 0xFUL

#define NVIC_ISER0 (*(volatile uint32_t*)0xE000E100UL)
#define UART0_RX_IRQ 0U

#ifndef PYTVM_BOARD_BAUDRATE
#define PYTVM_BOARD_BAUDRATE 115200UL
#endif

void pytvm_board_uart_init(void) {
  UART_BAUDDIV = (uint32_t)(PYTVM_BOARD_CPU_HZ / PYTVM_BOARD_BAUDRATE);
  UART_INTSTATUS = UART_INT_ALL;
  UART_CTRL = UART_CTRL_TXEN | UART_CTRL_RXEN | UART_CTRL_RXINTEN;
  NVIC_ISER0 = 1UL << UART0_RX_IRQ;
}

void pytvm_board_irq_isr(void) { UART_INTSTATUS = UART_INT_ALL; }

int64_t pytvm_board_uart_read(uint8_t* buf, size_t n) {
  size_t got = 0;
  if (n == 0U) return 0;
  while ((UART_STATE & UART_STATE_RXFULL) == 0UL) {
    /* With interrupts masked, a byte arriving between the test and WFI still wakes WFI. */
    __asm__ volatile("cpsid i" ::: "memory");
    if ((UART_STATE & UART_STATE_RXFULL) == 0UL) {
      __asm__ volatile("wfi" ::: "memory");
    }
    __asm__ volatile("cpsie i" ::: "memory");
  }
  while (got < n && (UART_STATE & UART_STATE_RXFULL) != 0UL) {
    buf[got] = (uint8_t)(UART_DATA & 0xFFUL);
    ++got;
  }
  return (int64_t)got;
}

int pytvm_board_uart_write(const uint8_t* data, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    while ((UART_STATE & UART_STATE_TXFULL) != 0UL) {
    }
    UART_DATA = data[i];
  }
  return (int)n;
}

static int log_write(void* ctx, const uint8_t* data, size_t n) {
  (void)ctx;
  return pytvm_board_uart_write(data, n);
}

void pytvm_board_log(const char* text, size_t n) {
  pytvm_serial_encoder enc;
  pytvm_serial_encoder_init(&enc, log_write, NULL);
  (void)pytvm_serial_write_message(&enc, PYTVM_SERIAL_MSG_LOG, 0U, (const uint8_t*)text, n);
}
