# MinRPC server: its sources, for device builds (device/device.mk compiles and links them).
#
# Included by pytvm/src/crt/Makefile. Limits in minrpc_server.h (MINRPC_MAX_PACKET, ...) are
# overridden per build with CRT_EXTRA_CFLAGS="-DMINRPC_MAX_PACKET=65536".

MINRPC_SRCS := $(sort $(wildcard $(CRT_DIR)/minrpc/*.c))
MINRPC_HDRS := $(sort $(wildcard $(CRT_DIR)/minrpc/*.h))

# C unit test: the server over an in-memory channel with a static arena (every variant).
#   make -C pytvm/src/crt test | test-asan | test-ubsan   (runs minrpc-test-<variant>)
MINRPC_TEST_SRC := $(CRT_DIR)/minrpc/tests/minrpc_unit_test.c

define MINRPC_TEST_RULES
MINRPC_TEST_BIN_$(1) := $$(CRT_BUILD_$(1))/minrpc/minrpc_unit_test

$$(MINRPC_TEST_BIN_$(1)): $(MINRPC_TEST_SRC) $(MINRPC_SRCS) $(MINRPC_HDRS) $$(CRT_LIB_$(1)) \
    $$(CRT_POSIX_OBJS_$(1)) $$(CRT_EMPTY_SYSLIB_OBJ_$(1)) $$(CRT_FLAGS_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(CC) $$(CRT_CFLAGS_$(1)) $$(CRT_LDFLAGS_$(1)) -o $$@ $(MINRPC_TEST_SRC) $(MINRPC_SRCS) \
	    $$(CRT_POSIX_OBJS_$(1)) $$(CRT_EMPTY_SYSLIB_OBJ_$(1)) $$(CRT_LIB_$(1))

.PHONY: minrpc-test-$(1)
minrpc-test-$(1): $$(MINRPC_TEST_BIN_$(1))
	$$(MINRPC_TEST_BIN_$(1))
endef

$(foreach v,$(CRT_VARIANTS),$(eval $(call MINRPC_TEST_RULES,$(v))))

test: minrpc-test-host
test-asan: minrpc-test-asan
test-ubsan: minrpc-test-ubsan
