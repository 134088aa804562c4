# load.mk: the load generator of the load tests (tests/load/loadgen.c, run
# by tests/e2e/load.sh), included by the top Makefile after its variables.
# It links the core library for its npz writer and digests.
LOADGEN := $(B)/tests/loadgen

$(LOADGEN): tests/load/loadgen.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS) $(LDLIBS)

tests: $(LOADGEN)

-include $(LOADGEN).d
