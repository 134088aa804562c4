# load.mk: the load generator of the load tests (tests/load/*.c, run by
# tests/e2e/load.sh), included by the top Makefile after its variables.
# Its files compile like the library's (the $(B)/obj/%.o rule) and link
# the library for its npz writer and digests.
LOADGEN     := $(B)/tests/loadgen
LOADGEN_SRC := $(sort $(wildcard tests/load/*.c))
LOADGEN_OBJ := $(LOADGEN_SRC:%.c=$(B)/obj/%.o)

$(LOADGEN): $(LOADGEN_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(LOADGEN_OBJ) $(LIB) $(PKG_LIBS) $(LDLIBS)

tests: $(LOADGEN)

-include $(LOADGEN_OBJ:.o=.d)
