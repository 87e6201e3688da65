# Bootable board images: the C runtime + MinRPC + serial framing (image/board_image.c as main)
# + a board's startup, UART, timer and platform hooks + an application, linked for the board.
#
#   make -C pytvm/src/crt board-image BOARD=<board> O=<dir> APP_SRCS="<.c files>" APP_CFLAGS="..."
#     -> <dir>/board/<board>/image.elf, image.map, image.size (one line:
#        image <board> text=<> rodata=<> data=<> bss=<> stack=<> flash=<> ram=<>)
#   make -C pytvm/src/crt board-image-size BOARD=<board> ...   prints that line
#
# APP_SRCS: an application's C files (a model's kernels, generated glue, a system library); they
# may define int pytvm_app_init(void) (image/board_image.h) and TVMSystemLibEntryPoint, else
# image/app_init_none.c and platform/empty_system_lib.c (linked from an archive, so only when
# nothing else defines them) stand in. APP_CFLAGS: flags for those files only (-I, -D). They
# compile with -std=c99 -Wall -Wextra -Werror and the board's architecture flags; the runtime
# and board sources also with the CRT's strict warnings. Board settings: see its board.mk.
# The boards: boards/<board>/board.mk, which sets BOARD_CC, BOARD_AR, BOARD_SIZE, BOARD_ARCH,
# BOARD_DEFINES, BOARD_SRCS (.c and .S), BOARD_LDSCRIPT, BOARD_LDFLAGS, BOARD_LIBS.
# Included by pytvm/src/crt/Makefile (variables: see its header).

BOARD ?=
APP_SRCS ?=
APP_CFLAGS ?=
BOARD_OPT ?= -O2 -g

.PHONY: board-image board-image-size

ifeq ($(strip $(BOARD)),)
board-image board-image-size:
	@echo "give a board: make board-image BOARD=<name> (boards: $(notdir $(patsubst %/board.mk,%,$(wildcard $(CRT_DIR)/boards/*/board.mk))))" >&2
	@exit 2
else
ifeq ($(wildcard $(CRT_DIR)/boards/$(BOARD)/board.mk),)
$(error unknown BOARD=$(BOARD): no $(CRT_DIR)/boards/$(BOARD)/board.mk)
endif
include $(CRT_DIR)/boards/$(BOARD)/board.mk

BOARD_OUT := $(BUILD)/board/$(BOARD)
BOARD_ELF := $(BOARD_OUT)/image.elf
BOARD_COMMON_FLAGS := -std=c99 $(BOARD_OPT) $(BOARD_ARCH) -ffunction-sections -fdata-sections \
    -DPYTVM_CRT=1 $(BOARD_DEFINES) $(CRT_CONFIG_FLAGS)
BOARD_RT_CFLAGS := $(BOARD_COMMON_FLAGS) -Wall -Wextra -Werror -pedantic $(CRT_STRICT_FLAGS) \
    $(CRT_INCLUDES) -I$(CRT_DIR)/image -I$(CRT_DIR)/boards/$(BOARD)
BOARD_APP_CFLAGS := $(BOARD_COMMON_FLAGS) -Wall -Wextra -Werror $(CRT_INCLUDES) \
    -I$(CRT_DIR)/image $(APP_CFLAGS)

BOARD_RT_SRCS := $(CRT_LIB_SRCS) $(MINRPC_SRCS) $(SERIAL_SRCS)
BOARD_MAIN_SRCS := $(CRT_DIR)/image/board_image.c $(BOARD_SRCS)
BOARD_DEFAULT_SRCS := $(CRT_DIR)/image/app_init_none.c $(CRT_DIR)/platform/empty_system_lib.c
board_obj = $(patsubst $(CRT_DIR)/%,$(BOARD_OUT)/obj/%.o,$(1))
# Application files live anywhere: objects named after their whole absolute path.
board_app_obj = $(BOARD_OUT)/app/$(subst /,_,$(patsubst /%,%,$(abspath $(1)))).o
BOARD_RT_OBJS := $(call board_obj,$(BOARD_RT_SRCS))
BOARD_MAIN_OBJS := $(call board_obj,$(BOARD_MAIN_SRCS))
BOARD_DEFAULT_OBJS := $(call board_obj,$(BOARD_DEFAULT_SRCS))
BOARD_APP_OBJS := $(foreach s,$(APP_SRCS),$(call board_app_obj,$(s)))

# Rewritten only when a compile or link line changes, so a new setting rebuilds.
$(BOARD_OUT)/flags.stamp: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(BOARD_CC) $(BOARD_RT_CFLAGS)' '$(BOARD_APP_CFLAGS)' \
	  '$(BOARD_LDFLAGS) $(BOARD_LIBS)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BOARD_OUT)/obj/%.c.o: $(CRT_DIR)/%.c $(BOARD_OUT)/flags.stamp
	@mkdir -p $(@D)
	$(CRT_SAY) "CC" "$@"
	$(CRT_Q)$(BOARD_CC) $(BOARD_RT_CFLAGS) -MMD -MP -c $< -o $@

$(BOARD_OUT)/obj/%.S.o: $(CRT_DIR)/%.S $(BOARD_OUT)/flags.stamp
	@mkdir -p $(@D)
	$(CRT_SAY) "AS" "$@"
	$(CRT_Q)$(BOARD_CC) $(BOARD_ARCH) -c $< -o $@

define BOARD_APP_RULE
$(call board_app_obj,$(1)): $(1) $(BOARD_OUT)/flags.stamp
	@mkdir -p $$(@D)
	$$(CRT_SAY) "CC" "$$@"
	$$(CRT_Q)$$(BOARD_CC) $$(BOARD_APP_CFLAGS) -MMD -MP -c $$< -o $$@
endef
$(foreach s,$(APP_SRCS),$(eval $(call BOARD_APP_RULE,$(s))))

$(BOARD_OUT)/libruntime.a: $(BOARD_RT_OBJS)
	@rm -f $@
	$(CRT_Q)$(BOARD_AR) rcs $@ $^
$(BOARD_OUT)/libdefaults.a: $(BOARD_DEFAULT_OBJS)
	@rm -f $@
	$(CRT_Q)$(BOARD_AR) rcs $@ $^

$(BOARD_ELF): $(BOARD_MAIN_OBJS) $(BOARD_APP_OBJS) $(BOARD_OUT)/libruntime.a \
    $(BOARD_OUT)/libdefaults.a $(BOARD_LDSCRIPT)
	$(CRT_SAY) "LD" "$@"
	$(CRT_Q)$(BOARD_CC) $(BOARD_ARCH) -nostartfiles -T $(BOARD_LDSCRIPT) $(BOARD_LDFLAGS) \
	    -Wl,--gc-sections -Wl,-Map=$(BOARD_OUT)/image.map -o $@ \
	    $(BOARD_MAIN_OBJS) $(BOARD_APP_OBJS) -Wl,--start-group $(BOARD_OUT)/libruntime.a \
	    $(BOARD_OUT)/libdefaults.a $(BOARD_LIBS) -Wl,--end-group
	$(CRT_Q)LC_ALL=C $(BOARD_SIZE) -A $@ | awk -v b=$(BOARD) \
	  '$$1 == ".text" { t = $$2 } $$1 == ".rodata" { r = $$2 } $$1 == ".data" { d = $$2 } \
	   $$1 ~ /^\.ARM/ { x += $$2 } $$1 == ".bss" { z = $$2 } $$1 == ".stack" { s = $$2 } \
	   END { printf "image %s text=%d rodata=%d data=%d bss=%d stack=%d flash=%d ram=%d\n", \
	         b, t, r, d, z, s, t + r + x + d, d + z + s }' > $(BOARD_OUT)/image.size

board-image: $(BOARD_ELF)
	@cat $(BOARD_OUT)/image.size

board-image-size: $(BOARD_ELF)
	@cat $(BOARD_OUT)/image.size

-include $(wildcard $(BOARD_OUT)/obj/*/*.d $(BOARD_OUT)/obj/*/*/*.d $(BOARD_OUT)/app/*.d)
endif
