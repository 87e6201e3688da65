/*!
 * \file board_image.h
 * \brief What image/board_image.c (the main of a device image) takes from a board and from the
 *        application linked into it. Compile application sources with -I<crt>/image (board.mk
 *        does) and include this header where pytvm_app_init is defined.
 */
#ifndef PYTVM_BOARD_IMAGE_H_
#define PYTVM_BOARD_IMAGE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Up to n bytes from the UART (blocking; 1..n, 0 at the end, negative on error). */
int64_t pytvm_board_uart_read(uint8_t* buf, size_t n);
/*! \brief Write n bytes to the UART; n on success, negative on error. */
int pytvm_board_uart_write(const uint8_t* data, size_t n);
/*! \brief A free-running tick counter (session nonces, trace timestamps). */
uint32_t pytvm_board_ticks(void);

/*!
 * \brief The application's start-up, called once after TVMInitializeRuntime() (and the time
 *        evaluator's registration) and before the RPC server starts: register models, system
 *        libraries or functions here. app_init_none.c is the empty one.
 * \return 0 on success; anything else stops the image (main returns 1).
 */
int pytvm_app_init(void);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_BOARD_IMAGE_H_ */
