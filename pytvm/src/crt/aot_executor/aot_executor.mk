# The AOT executor (pytvm_crt/aot_executor.h): its sources, for device builds that serve an
# ahead-of-time compiled model (the project templates of pytvm.micro copy them), and its C unit
# test.
#
#   make -C pytvm/src/crt test | test-asan | test-ubsan   (runs aot-executor-test-<variant>)
#
# Included by pytvm/src/crt/Makefile (variables: see its header).

AOT_EXECUTOR_SRCS := $(sort $(wildcard $(CRT_DIR)/aot_executor/*.c))
AOT_EXECUTOR_HDRS := $(sort $(wildcard $(CRT_DIR)/aot_executor/*.h)) \
                     $(CRT_DIR)/include/pytvm_crt/aot_executor.h
AOT_EXECUTOR_TEST_SRCS := $(CRT_DIR)/aot_executor/tests/aot_executor_unit_test.c \
                          $(CRT_DIR)/tests/crt_test.c

define AOT_EXECUTOR_TEST_RULES
AOT_EXECUTOR_TEST_BIN_$(1) := $$(CRT_BUILD_$(1))/aot_executor/aot_executor_unit_test

$$(AOT_EXECUTOR_TEST_BIN_$(1)): $(AOT_EXECUTOR_TEST_SRCS) $(AOT_EXECUTOR_SRCS) \
    $(AOT_EXECUTOR_HDRS) $$(CRT_LIB_$(1)) $$(CRT_POSIX_OBJS_$(1)) $$(CRT_EMPTY_SYSLIB_OBJ_$(1)) \
    $$(CRT_FLAGS_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(CRT_SAY) "LINK" "$$@"
	$$(CRT_Q)$$(CC) $$(CRT_CFLAGS_$(1)) $$(CRT_STRICT_FLAGS) $$(CRT_LDFLAGS_$(1)) \
	    -I$(CRT_DIR)/tests -o $$@ $(AOT_EXECUTOR_SRCS) $(AOT_EXECUTOR_TEST_SRCS) \
	    $$(CRT_POSIX_OBJS_$(1)) $$(CRT_EMPTY_SYSLIB_OBJ_$(1)) $$(CRT_LIB_$(1))

.PHONY: aot-executor-test-$(1)
aot-executor-test-$(1): $$(AOT_EXECUTOR_TEST_BIN_$(1))
	$$(CRT_RUN_ENV_$(1)) $$(AOT_EXECUTOR_TEST_BIN_$(1))
endef

$(foreach v,$(CRT_VARIANTS),$(eval $(call AOT_EXECUTOR_TEST_RULES,$(v))))

test: aot-executor-test-host
test-asan: aot-executor-test-asan
test-ubsan: aot-executor-test-ubsan
