# Device images: the C runtime + MinRPC + serial framing/session (image/board_image.c as main,
# image/board_platform.c as platform) for the host (x86-64, $(CC)) and for a Cortex-M4
# ($(CROSS_CC)), in the full and the minimal configuration. Every source is compiled with
# -Werror and the CRT's strict warnings.
#
#   make -C pytvm/src/crt image-<target>-<config>   <target>: x86-64 | cortex-m4
#                                                   <config>: full | minimal
#        -> $(BUILD)/image/<target>-<config>/image.o
#   make -C pytvm/src/crt crt-images                all four
#   make -C pytvm/src/crt crt-image-sizes           all four, and one line per image:
#        image <target> <config> text=<.text> rodata=<.rodata> total=<sum> needs=<libc symbols>
#
# image.o is one relocatable object linked with --gc-sections from main (the UART and tick
# functions of the board stay undefined): its .text + .rodata are the code the runtime adds to a
# board image, C library excluded; `needs` lists what it takes from the C library and libgcc.
# CROSS_CC defaults to arm-none-eabi-gcc (Debian: gcc-arm-none-eabi, `make crt-cross-compiler`
# in the repository root installs it).
# Included by pytvm/src/crt/Makefile (variables: see its header).

CROSS_CC ?= arm-none-eabi-gcc
CROSS_PREFIX := $(patsubst %gcc,%,$(notdir $(CROSS_CC)))
IMAGE_OPT := -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables
IMAGE_TARGETS := x86-64 cortex-m4
IMAGE_CONFIGS := full minimal
IMAGE_CC_x86-64 := $(CC)
IMAGE_ARCH_x86-64 :=
IMAGE_LDFLAGS_x86-64 := -no-pie
IMAGE_NM_x86-64 := nm
IMAGE_SIZE_x86-64 := size
IMAGE_CC_cortex-m4 := $(CROSS_CC)
IMAGE_ARCH_cortex-m4 := -mcpu=cortex-m4 -mthumb
IMAGE_LDFLAGS_cortex-m4 :=
IMAGE_NM_cortex-m4 := $(CROSS_PREFIX)nm
IMAGE_SIZE_cortex-m4 := $(CROSS_PREFIX)size
IMAGE_CONFIG_full :=
IMAGE_CONFIG_minimal := -DTVM_CRT_CONFIG_MINIMAL=1
# Optimisation per configuration: the minimal one is built for size first (-Oz, gcc >= 12 and
# clang; on x86-64 it trades speed for shorter instruction sequences, on Arm it equals -Os;
# -fno-jump-tables: compare chains are shorter than tables for the few sparse cases of a switch).
IMAGE_OPT_full := -Os
IMAGE_OPT_minimal := -Oz -fno-jump-tables
IMAGE_SRCS = $(CRT_LIB_SRCS) $(MINRPC_SRCS) $(SERIAL_SRCS) $(CRT_DIR)/image/board_image.c \
             $(CRT_DIR)/image/board_platform.c $(CRT_DIR)/image/app_init_none.c \
             $(CRT_DIR)/platform/empty_system_lib.c

# $(1): target, $(2): config
define IMAGE_RULES
IMAGE_DIR_$(1)_$(2) := $(BUILD)/image/$(1)-$(2)
IMAGE_FLAGS_$(1)_$(2) := -std=c99 -Wall -Wextra -Werror -pedantic $(CRT_STRICT_FLAGS) \
    $(IMAGE_OPT_$(2)) $(IMAGE_OPT) $(IMAGE_ARCH_$(1)) -DPYTVM_CRT=1 $(IMAGE_CONFIG_$(2)) $(CRT_INCLUDES) \
    -I$(CRT_DIR)/image
IMAGE_OBJS_$(1)_$(2) = $$(patsubst $(CRT_DIR)/%.c,$$(IMAGE_DIR_$(1)_$(2))/%.o,$$(IMAGE_SRCS))

$$(IMAGE_DIR_$(1)_$(2))/flags.stamp: FORCE
	@mkdir -p $$(@D)
	@printf '%s\n' '$$(IMAGE_CC_$(1)) $$(IMAGE_FLAGS_$(1)_$(2))' > $$@.tmp
	@if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv $$@.tmp $$@; fi

$$(IMAGE_DIR_$(1)_$(2))/%.o: $(CRT_DIR)/%.c $$(IMAGE_DIR_$(1)_$(2))/flags.stamp
	@mkdir -p $$(@D)
	$$(CRT_SAY) "CC" "$$@"
	$$(CRT_Q)$$(IMAGE_CC_$(1)) $$(IMAGE_FLAGS_$(1)_$(2)) -MMD -MP -c $$< -o $$@

$$(IMAGE_DIR_$(1)_$(2))/image.o: $$(IMAGE_OBJS_$(1)_$(2))
	$$(CRT_SAY) "LD" "$$@"
	$$(CRT_Q)$$(IMAGE_CC_$(1)) $$(IMAGE_ARCH_$(1)) $$(IMAGE_LDFLAGS_$(1)) -nostdlib -Wl,-r -Wl,--gc-sections -Wl,-e,main \
	    -o $$@ $$^

.PHONY: image-$(1)-$(2) image-size-$(1)-$(2)
image-$(1)-$(2): $$(IMAGE_DIR_$(1)_$(2))/image.o

image-size-$(1)-$(2): $$(IMAGE_DIR_$(1)_$(2))/image.o
	@printf 'image %s %s %s needs=%s\n' $(1) $(2) \
	  "$$$$(LC_ALL=C $$(IMAGE_SIZE_$(1)) -A $$< 2>/dev/null | awk '$$$$1 ~ /^\.text/ { t += $$$$2 } \
	    $$$$1 ~ /^\.rodata/ { r += $$$$2 } END { printf "text=%d rodata=%d total=%d", t, r, t + r }')" \
	  "$$$$($$(IMAGE_NM_$(1)) -u $$< | awk '{ print $$$$2 }' | grep -v '^pytvm_board_' | \
	    sort | paste -sd, -)"

-include $$(wildcard $$(IMAGE_DIR_$(1)_$(2))/*/*.d)
endef

$(foreach t,$(IMAGE_TARGETS),$(foreach c,$(IMAGE_CONFIGS),$(eval $(call IMAGE_RULES,$(t),$(c)))))

.PHONY: crt-images crt-image-sizes crt-cross
crt-images: $(foreach t,$(IMAGE_TARGETS),$(foreach c,$(IMAGE_CONFIGS),image-$(t)-$(c)))
crt-image-sizes: $(foreach t,$(IMAGE_TARGETS),$(foreach c,$(IMAGE_CONFIGS),image-size-$(t)-$(c)))
# The Cortex-M4 images alone (make crt-test in the repository root runs them).
crt-cross: image-cortex-m4-full image-cortex-m4-minimal
