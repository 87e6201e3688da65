/*!
 * \file board.h
 * \brief The mps2-an386 board (QEMU's Cortex-M4F MPS2 AN386): what its files define for each
 *        other and for image/board_image.c. Internal to the board image; not a public header.
 *
 * Peripherals used: the CMSDK APB UART0 at 0x40004000 (polled transmit, receive woken by its
 * RX interrupt, IRQ 0), SysTick on the 25 MHz processor clock (with a wrap interrupt giving a
 * 64-bit count) and the FPU (enabled at reset through CPACR).
 */
#ifndef PYTVM_BOARD_MPS2_AN386_BOARD_H_
#define PYTVM_BOARD_MPS2_AN386_BOARD_H_

#include <stddef.h>
#include <stdint.h>

/*! \brief Processor (and SysTick) clock in Hz: QEMU's mps2-an386 SYSCLK. */
#ifndef PYTVM_BOARD_CPU_HZ
#define PYTVM_BOARD_CPU_HZ 25000000UL
#endif
#if (1000000000UL % PYTVM_BOARD_CPU_HZ) != 0
#error "PYTVM_BOARD_CPU_HZ must divide 1e9 (the monotonic clock counts whole ns per tick)"
#endif
/*! \brief Nanoseconds per SysTick tick (40 at 25 MHz). */
#define PYTVM_BOARD_NS_PER_TICK (1000000000UL / PYTVM_BOARD_CPU_HZ)

/*! \brief Semihosting SYS_EXIT reasons (ADP_Stopped_*). */
#define PYTVM_BOARD_EXIT_OK 0x20026UL    /*!< ApplicationExit: QEMU exits with status 0 */
#define PYTVM_BOARD_EXIT_ERROR 0x20023UL /*!< RunTimeErrorUnknown: QEMU exits with status 1 */

/* uart.c */
void pytvm_board_uart_init(void);
int64_t pytvm_board_uart_read(uint8_t* buf, size_t n);
int pytvm_board_uart_write(const uint8_t* data, size_t n);
/*! \brief Send `n` bytes of text as one serial-session LOG message (any state, id 0). */
void pytvm_board_log(const char* text, size_t n);

/* timer.c */
void pytvm_board_timer_init(void);
/*! \brief SysTick ticks since reset, 64 bits (wraps of the 24-bit counter counted). */
uint64_t pytvm_board_ticks64(void);
uint32_t pytvm_board_ticks(void);

/* board.c */
void pytvm_board_reset(void) __attribute__((noreturn));
/*! \brief Report a fault as a LOG message and stop the emulator (status 1). */
void pytvm_board_fault(const uint32_t* frame, uint32_t exc_return) __attribute__((noreturn));
/*! \brief Report `text` with a hex value as a LOG message, then stop the emulator. */
void pytvm_board_halt(const char* text, uint32_t value) __attribute__((noreturn));

/* startup.S */
void pytvm_board_semihost_exit(uint32_t reason);

/* interrupt handlers (vector table in startup.S) */
void pytvm_board_systick_isr(void);
void pytvm_board_irq_isr(void);

#endif /* PYTVM_BOARD_MPS2_AN386_BOARD_H_ */
