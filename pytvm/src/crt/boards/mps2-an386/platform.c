/*!
 * \file platform.c
 * \brief The platform hooks of pytvm_crt/platform.h on the mps2-an386 board (the timer hooks
 *        are in timer.c): no C library I/O, messages travel as serial-session LOG messages.
 */
#include "board.h"

#include "pytvm_crt/platform.h"

void TVMPlatformAbort(tvm_crt_error_t code) {
  pytvm_board_halt("TVMPlatformAbort:", (uint32_t)code);
}

/* No formatter on the board: the format text itself is sent (a failed check names itself). */
void TVMLogf(const char* fmt, ...) {
  size_t n = 0;
  while (fmt[n] != '\0' && n < 200U) {
    ++n;
  }
  pytvm_board_log(fmt, n);
}

uint32_t TVMPlatformProcessId(void) { return 0U; }
