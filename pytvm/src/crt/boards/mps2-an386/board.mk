# The mps2-an386 board: QEMU's MPS2 FPGA image AN386 (Cortex-M4F at 25 MHz, 4 MiB code SRAM at
# 0x00000000 used as flash, 4 MiB data SRAM at 0x20000000, CMSDK UART0 at 0x40004000).
#
# Read by boards/boards.mk (make board-image BOARD=mps2-an386); run the image with
#   qemu-system-arm -M mps2-an386 -nographic -monitor none -semihosting-config enable=on,target=native \
#       -kernel image.elf -serial tcp:127.0.0.1:<port>       (pytvm.crt.qemu.QemuBoard does this)
#
# Settings (make variables; the sources take them as -D macros):
#   BOARD_FRAME_SIZE  largest serial frame payload the board accepts (PYTVM_BOARD_FRAME_SIZE),
#                     announced in the serial handshake; its receive buffer
#   BOARD_POOL_LOG2   log2 of the CRT memory pool (TVM_CRT_MEMORY_POOL_LOG2): tensors and the
#                     CRT workspace (a quarter of it)
#   BOARD_STACK_SIZE  main stack bytes (the linker script's __stack_size)

BOARD_CROSS_CC ?= arm-none-eabi-gcc
BOARD_CROSS_PREFIX := $(patsubst %gcc,%,$(BOARD_CROSS_CC))
BOARD_CC := $(BOARD_CROSS_CC)
BOARD_AR := $(BOARD_CROSS_PREFIX)ar
BOARD_SIZE := $(BOARD_CROSS_PREFIX)size
# -ffp-contract=fast: a multiply and an add become one VFMA (-std=c99 alone turns that off), as
# the model's target asks (Target.cflags).
BOARD_ARCH := -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffp-contract=fast
BOARD_QEMU_MACHINE := mps2-an386

# 16 KiB frames (4 per 64 KiB copy), a 1 MiB pool (256 KiB of it the CRT workspace; room for a
# 96x96x3 float input and output with the session's tensors), a 64 KiB stack; with MinRPC's
# 256 KiB packet buffer about 1.4 MiB of the 4 MiB RAM is used before a model's workspace.
BOARD_FRAME_SIZE ?= 16384
BOARD_POOL_LOG2 ?= 20
BOARD_STACK_SIZE ?= 65536

BOARD_DEFINES := -DPYTVM_BOARD_HAS_TIMER=1 -DPYTVM_BOARD_FRAME_SIZE=$(BOARD_FRAME_SIZE) \
                 -DTVM_CRT_MEMORY_POOL_LOG2=$(BOARD_POOL_LOG2)
BOARD_SRCS := $(addprefix $(CRT_DIR)/boards/mps2-an386/,startup.S board.c uart.c timer.c platform.c)
BOARD_LDSCRIPT := $(CRT_DIR)/boards/mps2-an386/board.ld
BOARD_LDFLAGS := -Wl,--defsym=__stack_size=$(BOARD_STACK_SIZE) --specs=nano.specs
BOARD_LIBS := -lm -lc -lgcc
