/*!
 * \file app_init_none.c
 * \brief pytvm_app_init for an image without an application (no model, no extra functions):
 *        the RPC server serves the runtime's own functions and the system library, if any.
 */
#include "board_image.h"

int pytvm_app_init(void) { return 0; }
