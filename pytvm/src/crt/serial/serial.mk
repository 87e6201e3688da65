# Serial framing and session layer: sources for device builds, and the test-vector harness.
#
# Included by pytvm/src/crt/Makefile, or run on its own:
#   make -f pytvm/src/crt/serial/serial.mk BUILD=/tmp/sb CC=gcc CFLAGS="-std=c99 ..." serial-vectors
#   serial-vectors   the harness serial/tests/serial_vectors.c as $(BUILD)/serial_vectors
#                    (flags: CFLAGS if set, else the CRT Makefile's CRT_CFLAGS, else strict C99)
#   serial-test      runs serial/tests/smoke.in through it and diffs with smoke.out
#   serial-test-<v>  the same per CRT variant (host, asan, ubsan) when included by the CRT
#                    Makefile, hooked into its test, test-asan and test-ubsan targets
# smoke.out is checked against the Python implementation by tests/crt/test_serial.py.
# Device builds add $(SERIAL_SRCS) to their sources; the headers are pytvm_crt/serial_*.h under
# the C runtime's one include root, $(SERIAL_INCLUDES).

_SERIAL_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
_SERIAL_CRT_DIR := $(patsubst %/,%,$(dir $(_SERIAL_DIR)))
CC ?= cc
BUILD ?= build
SERIAL_INCLUDES := -I$(_SERIAL_CRT_DIR)/include
_SERIAL_CFLAGS = $(or $(CFLAGS),$(CRT_CFLAGS),-std=c99 -Wall -Wextra -Werror -pedantic -O2)

SERIAL_SRCS := $(addprefix $(_SERIAL_DIR)/,serial_framing.c serial_session.c serial_stream.c \
               serial_rpc.c)
SERIAL_HDRS := $(addprefix $(_SERIAL_CRT_DIR)/include/pytvm_crt/,serial_framing.h \
               serial_session.h serial_stream.h serial_rpc.h)
_SERIAL_HARNESS_DEPS := $(_SERIAL_DIR)/tests/serial_vectors.c $(SERIAL_SRCS) $(SERIAL_HDRS)
_SERIAL_SMOKE := $(_SERIAL_DIR)/tests/smoke

# Keep the including makefile's default goal.
_SERIAL_SAVED_GOAL := $(.DEFAULT_GOAL)

.PHONY: serial-vectors serial-test
serial-vectors: $(BUILD)/serial_vectors

$(BUILD)/serial_vectors: $(_SERIAL_HARNESS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(_SERIAL_CFLAGS) $(SERIAL_INCLUDES) -o $@ $(filter %.c,$^)

serial-test: $(BUILD)/serial_vectors
	$< < $(_SERIAL_SMOKE).in > $(BUILD)/serial_smoke.txt
	diff -u $(_SERIAL_SMOKE).out $(BUILD)/serial_smoke.txt

ifdef CRT_VARIANTS
define _SERIAL_VARIANT_RULES
$$(CRT_BUILD_$(1))/serial_vectors: $$(_SERIAL_HARNESS_DEPS) $$(CRT_FLAGS_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(CC) $$(CRT_CFLAGS_$(1)) $$(CRT_STRICT_FLAGS) -o $$@ $$(filter %.c,$$^) $$(CRT_LDFLAGS_$(1))

.PHONY: serial-test-$(1)
serial-test-$(1): $$(CRT_BUILD_$(1))/serial_vectors
	$$< < $$(_SERIAL_SMOKE).in > $$(CRT_BUILD_$(1))/serial_smoke.txt
	diff -u $$(_SERIAL_SMOKE).out $$(CRT_BUILD_$(1))/serial_smoke.txt
endef
$(foreach v,$(CRT_VARIANTS),$(eval $(call _SERIAL_VARIANT_RULES,$(v))))
test: serial-test-host
test-asan: serial-test-asan
test-ubsan: serial-test-ubsan
endif

.DEFAULT_GOAL := $(_SERIAL_SAVED_GOAL)
