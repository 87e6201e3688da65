/*!
 * \file timer.c
 * \brief SysTick as the board's clock: a 64-bit tick count, TVMPlatformMonotonicNs and the
 *        TVMPlatformTimerStart / TVMPlatformTimerStop pair runtime.RPCTimeEvaluator uses.
 *
 * SysTick counts the 25 MHz processor clock down from 2^24 - 1; its wrap interrupt adds 2^24 to
 * the upper bits. One tick is 40 ns. In QEMU the clock follows the emulator's virtual time:
 * with `-icount shift=0` every guest instruction advances it by exactly 1 ns, so a time read on
 * the board (resolution 40 ns) is an instruction count; without icount it follows host time.
 */
#include "board.h"

#include "pytvm_crt/platform.h"

#define SYST_CSR (*(volatile uint32_t*)0xE000E010UL)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014UL)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018UL)
#define SCB_ICSR (*(volatile uint32_t*)0xE000ED04UL)
#define SYST_CSR_ENABLE_TICKINT_CPUCLK 0x7UL
#define SCB_ICSR_PENDSTSET (1UL << 26)
#define SYST_RELOAD 0xFFFFFFUL

static volatile uint32_t g_wraps;
static uint64_t g_last_ticks;
static uint64_t g_timer_start_ns;
static uint8_t g_timer_running;

void pytvm_board_timer_init(void) {
  g_wraps = 0U;
  g_last_ticks = 0U;
  SYST_RVR = (uint32_t)SYST_RELOAD;
  SYST_CVR = 0U;
  SYST_CSR = (uint32_t)SYST_CSR_ENABLE_TICKINT_CPUCLK;
}

void pytvm_board_systick_isr(void) { g_wraps = g_wraps + 1U; }

uint64_t pytvm_board_ticks64(void) {
  uint32_t high;
  uint32_t count;
  uint32_t pending;
  uint64_t ticks;
  do {
    high = g_wraps;
    count = SYST_CVR;
    pending = SCB_ICSR & SCB_ICSR_PENDSTSET;
  } while (high != g_wraps);
  /* A wrap whose interrupt has not run yet: the count already restarted near the top. */
  if (pending != 0U && count > (SYST_RELOAD / 2UL)) {
    ++high;
  }
  ticks = ((uint64_t)high << 24) | (uint64_t)(SYST_RELOAD - count);
  /* Without -icount, QEMU can show the reloaded count before it raises the wrap (neither the
   * interrupt nor its pending bit yet): a count below the last one read is that wrap. */
  if (ticks < g_last_ticks) {
    ticks += (uint64_t)1U << 24;
  }
  g_last_ticks = ticks;
  return ticks;
}

uint32_t pytvm_board_ticks(void) { return (uint32_t)pytvm_board_ticks64(); }

uint64_t TVMPlatformMonotonicNs(void) {
  return pytvm_board_ticks64() * (uint64_t)PYTVM_BOARD_NS_PER_TICK;
}

tvm_crt_error_t TVMPlatformTimerStart(void) {
  if (g_timer_running != 0U) return kTvmErrorPlatformTimerBadState;
  g_timer_running = 1U;
  g_timer_start_ns = TVMPlatformMonotonicNs();
  return kTvmErrorNoError;
}

tvm_crt_error_t TVMPlatformTimerStop(double* elapsed_time_seconds) {
  uint64_t now = TVMPlatformMonotonicNs();
  if (g_timer_running == 0U) return kTvmErrorPlatformTimerBadState;
  if (elapsed_time_seconds == NULL) return kTvmErrorArgumentNull;
  g_timer_running = 0U;
  *elapsed_time_seconds = (double)(now - g_timer_start_ns) * 1e-9;
  return kTvmErrorNoError;
}
