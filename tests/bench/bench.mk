# bench.mk: the benchmark programs of `make bench` (tests/bench/bench.sh),
# included by the top Makefile after its variables. kbench links the
# library and OpenBLAS (Debian's libopenblas-dev, a benchmark-only
# dependency: make bench installs it, make test and the build do not need
# it).
KBENCH      := $(B)/bench/kbench
BENCH_DEBS  := libopenblas-dev wrk nginx-light bc openssl

$(KBENCH): tests/bench/kbench.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS) -lopenblas $(LDLIBS)

-include $(KBENCH).d

# make bench [BENCH_SIZE=tiny] [BENCH_ROUNDS=N]: every row of the table,
# ours against its anchor, interleaved in one run (tests/bench/bench.sh).
bench: deps bench-deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all $(KBENCH)
	$(Q)ENPU_BIN=$(BIN) KBENCH=$(KBENCH) tests/bench/bench.sh

# the anchors' packages (make test installs them too: it runs the bench at
# a tiny size, and tests/e2e/balancer.sh puts nginx in front of two servers)
bench-deps:
	@missing=""; for p in $(BENCH_DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# jobscale: the job table's scale benchmark of `make stress`
# (tests/bench/jobscale.sh); built by make tests so that it stays
# warning-free.
JOBSCALE := $(B)/bench/jobscale

$(JOBSCALE): tests/bench/jobscale.c tests/load/clock.c tests/load/clock.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) -Itests/load $(PKG_CFLAGS) $(LDFLAGS) -o $@ tests/bench/jobscale.c \
		tests/load/clock.c $(PKG_LIBS) $(LDLIBS)

tests: $(JOBSCALE)
