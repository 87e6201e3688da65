# The generated skel of pytvm/contrib/hexagon/hexagon_rpc.idl, linked into pytvm-device (--skel).
#
#   make -C pytvm/src/crt BUILD=<dir> hexagon-rpc-skel   -> <dir>/gen/hexagon_rpc_skel.{c,h}
#   make -C pytvm/src/crt test                            also compiles the skel (strict flags)
#
# The skel (C99) and its header are generated at build time into $(BUILD)/gen by
#   $(PYTHON) -m pytvm.contrib.hexagon.idl --skel-c ... --skel-h ... pytvm/contrib/hexagon/hexagon_rpc.idl
# with this package first on PYTHONPATH (PYTHON defaults to python3, Python >= 3.10, with
# pytvm's requirements installed). device/device.mk compiles the skel object of each variant
# (SKEL_OBJ_<v>), links it into pytvm-device and puts $(SKEL_GEN_DIR) on the include path of
# the device sources (hexagon_rpc_impl.c includes hexagon_rpc_skel.h).
# Included by pytvm/src/crt/Makefile (variables: see its header) and by device/device.mk.

ifndef PYTVM_SKEL_MK_INCLUDED
PYTVM_SKEL_MK_INCLUDED := 1

PYTHON ?= python3
SKEL_IDL := $(CRT_PKG_DIR)/contrib/hexagon/hexagon_rpc.idl
# The generator: its modules and the C templates it fills in.
SKEL_TOOL := $(addprefix $(CRT_PKG_DIR)/contrib/hexagon/,idl.py idl_parser.py skel_generator.py wire.py) \
    $(wildcard $(CRT_PKG_DIR)/contrib/hexagon/templates/*.in)
SKEL_PYTHONPATH := $(abspath $(CRT_PKG_DIR)/..)$(if $(PYTHONPATH),:$(PYTHONPATH))
SKEL_GEN_DIR := $(BUILD)/gen
SKEL_C := $(SKEL_GEN_DIR)/hexagon_rpc_skel.c
SKEL_H := $(SKEL_GEN_DIR)/hexagon_rpc_skel.h

# One run writes both files: a pattern rule with two targets is one recipe for both in every
# GNU make (grouped targets `&:` need make 4.3).
$(SKEL_GEN_DIR)/%_skel.h $(SKEL_GEN_DIR)/%_skel.c: $(CRT_PKG_DIR)/contrib/hexagon/%.idl $(SKEL_TOOL)
	@mkdir -p $(SKEL_GEN_DIR)
	$(CRT_SAY) "GEN" "$(SKEL_GEN_DIR)/$*_skel.h $(SKEL_GEN_DIR)/$*_skel.c"
	$(CRT_Q)PYTHONPATH=$(SKEL_PYTHONPATH) $(PYTHON) -m pytvm.contrib.hexagon.idl \
	    --skel-h $(SKEL_GEN_DIR)/$*_skel.h --skel-c $(SKEL_GEN_DIR)/$*_skel.c $<

# $(1): variant. The generated code is held to the CRT's strict warnings.
define SKEL_VARIANT_RULES
SKEL_OBJ_$(1) := $$(CRT_BUILD_$(1))/gen/hexagon_rpc_skel.o

$$(SKEL_OBJ_$(1)): $(SKEL_C) $(SKEL_H) $$(CRT_FLAGS_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(CRT_SAY) "CC" "$$@"
	$$(CRT_Q)$$(CC) $$(CRT_CFLAGS_$(1)) $$(CRT_STRICT_FLAGS) -I$(SKEL_GEN_DIR) -c $(SKEL_C) -o $$@
endef

$(foreach v,$(CRT_VARIANTS),$(eval $(call SKEL_VARIANT_RULES,$(v))))

.PHONY: hexagon-rpc-skel
hexagon-rpc-skel: $(SKEL_C) $(SKEL_H)

test: $(SKEL_OBJ_host)

endif
