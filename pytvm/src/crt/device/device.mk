# pytvm-device: the host device binary (CRT + MinRPC over two file descriptors).
#
#   make -C pytvm/src/crt BUILD=<dir> CC=<cc> pytvm-device        -> <dir>/pytvm-device
#   make -C pytvm/src/crt BUILD=<dir> pytvm-device-asan            -> <dir>/asan/pytvm-device
#   make -C pytvm/src/crt BUILD=<dir> pytvm-device-ubsan           -> <dir>/ubsan/pytvm-device
#
# The binary links its own build of the CRT sources (plus the POSIX platform hooks), whose CPU
# pool defaults to 64 MiB (TVM_CRT_MEMORY_POOL_LOG2=26) so 16 MiB arrays fit; a
# TVM_CRT_MEMORY_POOL_LOG2 given in CRT_CONFIG_FLAGS wins, and so does the minimal configuration
# (CRT_CONFIG_FLAGS=-DTVM_CRT_CONFIG_MINIMAL=1: its own 16 KiB pool, no --hexagon). The hexagon emulator's own pool is
# PYTVM_HEXAGON_POOL_BYTES (128 MiB) and MinRPC's limits are MINRPC_* (minrpc_server.h); change
# them with CRT_EXTRA_CFLAGS="-DPYTVM_HEXAGON_POOL_BYTES=...".
# `pytvm-device ... --hexagon --skel` serves the generated skel of pytvm/contrib/hexagon/hexagon_rpc.idl
# (device/skel.mk: generated into $(BUILD)/gen by $(PYTHON), default python3) instead of
# MinRPC straight on the descriptors.
# Included by pytvm/src/crt/Makefile (variables: see its header).

include $(CRT_DIR)/device/skel.mk

DEVICE_POOL_FLAGS := $(if $(findstring TVM_CRT_MEMORY_POOL_LOG2,$(CRT_CONFIG_FLAGS))$(findstring \
                     TVM_CRT_CONFIG_MINIMAL,$(CRT_CONFIG_FLAGS)),,-DTVM_CRT_MEMORY_POOL_LOG2=26)
# A system library of compiled kernels (C sources from `pytvm.build(..., target="c --system-lib")`
# in DEVICE_SYSLIB_DIR, defining TVMSystemLibEntryPoint) replaces the empty one. Generated code is
# GNU C (vector extensions), so it gets its own flags rather than the runtime's -std=c99 -pedantic.
DEVICE_SYSLIB_DIR ?=
DEVICE_SYSLIB_CFLAGS ?= -std=gnu11 -O2 -Wall -Werror -Wno-psabi
DEVICE_SYSLIB_SRCS := $(if $(DEVICE_SYSLIB_DIR),$(sort $(wildcard $(DEVICE_SYSLIB_DIR)/*.c)))
DEVICE_SRCS := $(sort $(wildcard $(CRT_DIR)/minrpc/*.c $(CRT_DIR)/device/*.c)) $(CRT_LIB_SRCS) \
               $(SERIAL_SRCS) $(CRT_DIR)/platform/posix_platform.c \
               $(if $(DEVICE_SYSLIB_DIR),,$(CRT_DIR)/platform/empty_system_lib.c)

# $(1): variant (host, asan, ubsan); $(2): the binary it makes.
define DEVICE_VARIANT_RULES
DEVICE_BUILD_$(1) := $$(CRT_BUILD_$(1))/device
DEVICE_CFLAGS_$(1) := $$(CRT_CFLAGS_$(1)) $$(DEVICE_POOL_FLAGS) -I$(SKEL_GEN_DIR)
DEVICE_SYSLIB_OBJS_$(1) := $$(patsubst $(DEVICE_SYSLIB_DIR)/%.c,$$(DEVICE_BUILD_$(1))/syslib/%.o,\
                           $$(DEVICE_SYSLIB_SRCS))
DEVICE_OBJS_$(1) := $$(patsubst $(CRT_DIR)/%.c,$$(DEVICE_BUILD_$(1))/%.o,$$(DEVICE_SRCS)) \
                    $$(SKEL_OBJ_$(1)) $$(DEVICE_SYSLIB_OBJS_$(1))

$$(DEVICE_BUILD_$(1))/%.o: $(CRT_DIR)/%.c $$(CRT_FLAGS_STAMP_$(1)) | $(SKEL_H)
	@mkdir -p $$(@D)
	$$(CC) $$(DEVICE_CFLAGS_$(1)) -MMD -MP -c $$< -o $$@

ifneq ($(DEVICE_SYSLIB_DIR),)
$$(DEVICE_BUILD_$(1))/syslib/%.o: $(DEVICE_SYSLIB_DIR)/%.c $$(CRT_FLAGS_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(CC) $$(DEVICE_SYSLIB_CFLAGS) $$(CRT_SAN_FLAGS_$(1)) $$(CRT_CONFIG_FLAGS) -DPYTVM_CRT=1 \
	  $$(CRT_INCLUDES) -c $$< -o $$@
endif

$(2): $$(DEVICE_OBJS_$(1))
	@mkdir -p $$(@D)
	$$(CC) $$(CRT_LDFLAGS_$(1)) -o $$@ $$^ $(if $(DEVICE_SYSLIB_DIR),-lm)

-include $$(wildcard $$(DEVICE_BUILD_$(1))/*/*.d)
endef

$(eval $(call DEVICE_VARIANT_RULES,host,$(BUILD)/pytvm-device))
$(eval $(call DEVICE_VARIANT_RULES,asan,$(BUILD)/asan/pytvm-device))
$(eval $(call DEVICE_VARIANT_RULES,ubsan,$(BUILD)/ubsan/pytvm-device))

.PHONY: pytvm-device pytvm-device-asan pytvm-device-ubsan
pytvm-device: $(BUILD)/pytvm-device
pytvm-device-asan: $(BUILD)/asan/pytvm-device
pytvm-device-ubsan: $(BUILD)/ubsan/pytvm-device
