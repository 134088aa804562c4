# eulernpu: one plain Makefile. `make` builds bin/eulernpud, bin/eulernpu and
# build/libeulernpu.a; `make demo` runs the tiny_mlp pipeline; `make test`
# runs every test, then again under ASan+UBSan. Quiet by default; V=1 shows
# the commands. SAN=1 builds the sanitizer variant into build-san/.
# `make core` builds the compute core alone (libc, libm, pthread: no
# pkg-config package); `make cross` builds its static test runner for armhf
# and aarch64 (tests/cross/, run under qemu-user-static by make test).
# `make mutants [MUTANTS="a b"] [MUTANT_JOBS=N]` plants each small bug of
# tests/mutants/*.patch in a copy of the tree and fails if any survives
# its tests (tests/mutants/run.sh).

CC      ?= cc
NPROC   := $(shell nproc 2>/dev/null || echo 2)
PKGS    := libmicrohttpd libcurl yaml-0.1 json-c libzip zlib libcrypto libsystemd libprotobuf-c
DEBS    := libmicrohttpd-dev libcurl4-openssl-dev libyaml-dev libjson-c-dev libsystemd-dev libbsd-dev \
           libzip-dev zlib1g-dev libssl-dev libcriterion-dev python3-numpy \
           pkg-config curl \
           gcc-arm-linux-gnueabihf gcc-aarch64-linux-gnu \
           libc6-dev-armhf-cross libc6-dev-arm64-cross qemu-user-static systemd \
           clang libclang-rt-14-dev valgrind bsdutils groff-base man-db lowdown \
           protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata \
           python3-onnx python3-torch python3-torchvision chromium
NPM_DEBS := nodejs npm
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
ifeq ($(CI),true)
WARN    += -Werror
endif
OPT     ?= -O2 -g
# common/ is a room per layer (base, formats, model, compile, run) and
# backends/ a room per backend (docs/architecture.md); headers are
# included by name, so each room is on the include path.
COMMON_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard common/*/*.c common/backends/*/*.c))))
# build/gen: code generated at build time (never committed): onnx.pb-c.[ch]
# from Debian's onnx.proto (libonnx-dev) by protoc-c, for common/import/.
GEN     := build/gen
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
INC     := -Icommon $(addprefix -I,$(COMMON_DIRS)) -Iproto -I$(GEN)
# The compute core's rooms (no package headers).
CORE_INC := -Icommon/base -Icommon/model -Icommon/compile -Icommon/run
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -ffp-contract=off -fno-fast-math \
           -pthread -MMD -MP $(INC)
LDLIBS  += -pthread -lm

# The compute core's flags: the same, minus the packages' include paths.
CORE_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -ffp-contract=off -fno-fast-math \
           -pthread -MMD -MP $(CORE_INC)

ifeq ($(SAN),1)
B       := build-san
BIN     := build-san/bin
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CORE_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else
B       := build
BIN     := bin
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CRIT_LIBS  = $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)

# proto/*.c: the code both sides of the API share (the REST client, the
# wire formats), in the library the server and the client link.
COMMON_SRC := $(sort $(wildcard common/*/*.c common/backends/*/*.c proto/*.c))
SERVER_SRC := $(sort $(wildcard server/*.c server/*/*.c))
# server/ is the daemon (main, options, config, log, metrics) with a room
# per layer: http/, routes/, jobs/, cache/, boards/ (docs/architecture.md).
SERVER_DIRS := server $(patsubst %/,%,$(sort $(dir $(wildcard server/*/*.c))))
SERVER_INC  := $(addprefix -I,$(SERVER_DIRS))
CLIENT_SRC := $(sort $(wildcard client/*.c))
TEST_SRC   := $(sort $(wildcard tests/unit/test_*.c))

COMMON_OBJ := $(COMMON_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/onnx.pb-c.o
SERVER_OBJ := $(SERVER_SRC:%.c=$(B)/obj/%.o)
$(SERVER_OBJ): CFLAGS += $(SERVER_INC)
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(B)/obj/%.o)
TEST_BINS  := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
# tests/ref: the tests' independent references and shared helpers (a
# library the unit tests link), and order_cases, which writes the order
# cases as model directories (tests/e2e/cross.sh).
TESTREF_SRC := $(filter-out tests/ref/order_cases.c,$(sort $(wildcard tests/ref/*.c)))
TESTREF_OBJ := $(TESTREF_SRC:%.c=$(B)/obj/%.o)
TESTREF_LIB := $(B)/libtestref.a
LIB        := $(B)/libeulernpu.a
# server/ and client/ modules minus main.c, so unit tests can link them.
SRV_LIB    := $(B)/libsrv.a
CLI_LIB    := $(B)/libcli.a

# The compute core: kernels, shape rules, planner, executor, over tensors in
# memory. Exactly these files, with libc + libm + pthread and nothing else.
CORE_SRC   := common/base/err.c common/base/buf.c common/base/tensor.c common/model/ops.c \
              $(sort $(wildcard common/model/shape*.c)) $(sort $(wildcard common/run/kernels*.c)) \
              common/run/kmath.c common/run/gemm.c common/run/qgemm.c \
              common/run/par.c common/compile/plan.c common/compile/planplace.c common/model/ir.c common/run/engine.c
CORE_OBJ   := $(CORE_SRC:%.c=$(B)/core/%.o)
CORE_LIB   := $(B)/libeulernpu-core.a

# Cross-ISA proof: the runner, static, for the Zynq-7000 (Cortex-A9, VFPv3 +
# NEON, hard float) and the Zynq UltraScale+ (Cortex-A53). Always unsanitized,
# always into build/cross/. The host tools (bundle writer and comparer, and
# a native runner) follow SAN like everything else.
CROSS_ARMHF   ?= arm-linux-gnueabihf-gcc
CROSS_AARCH64 ?= aarch64-linux-gnu-gcc
CROSS_CFLAGS  := -std=c11 -D_GNU_SOURCE -O2 $(WARN) -ffp-contract=off -fno-fast-math \
                 -pthread -static $(CORE_INC)
ARMHF_CPU     := -mcpu=cortex-a9 -mfpu=neon -mfloat-abi=hard
AARCH64_CPU   := -mcpu=cortex-a53
# The runner: its driver (runner.c) and its bundle reader (reader.c).
CROSS_SRC     := tests/cross/runner.c tests/cross/reader.c
CROSS_OBJ     := $(CROSS_SRC:%.c=$(B)/core/%.o)
CROSS_DEPS    := $(CROSS_SRC) tests/cross/bundle.h tests/cross/reader.h $(CORE_SRC) \
                 $(wildcard common/*/*.h)
CROSS_BINS    := build/cross/armhf/runner build/cross/aarch64/runner
CROSS_HOST    := $(B)/cross/bundle $(B)/cross/runner

# make install [PREFIX=/usr/local] [DESTDIR=]: the two programs, their man
# pages, the bash completion, the systemd units (lab server service and
# socket, board agent; ExecStart follows BINDIR), the sysusers.d entry of
# user eulernpu, the example config /etc/eulernpu/eulernpud.yaml.example
# the documents (README.md, docs/*.md) in DOCDIR and the status page in WWWDIR.
# Then: systemd-sysusers; systemctl daemon-reload (README, "Operating a lab
# server"). make uninstall removes the same files (never a config you made).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
DOCDIR  ?= $(PREFIX)/share/doc/eulernpu
# The status page's files (server/www/), where eulernpud looks for them by
# default: ../share/eulernpu/www beside BINDIR (--www DIR otherwise).
WWWDIR  ?= $(PREFIX)/share/eulernpu/www
WWW     := $(sort $(wildcard $(addprefix server/www/*.,html css js svg png ico txt)))
UNITS   := eulernpud.service eulernpud.socket eulernpud-board.service

.PHONY: all deps npm-deps demo test test-unit test-e2e test-san clean tests check-deps \
        core cross cross-host print-core-src print-core-inc print-cross-src man-spec install install-board uninstall stress \
        mutants conformance bench bench-deps
all: $(BIN)/eulernpud $(BIN)/eulernpu $(LIB)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# onnx.proto is proto2 with `syntax = "proto2"`, which protoc-c (1.4) takes
# as it is: copied into build/gen so the generated names are onnx.pb-c.*.
# Generated code is compiled without the project's warning flags.
$(GEN)/onnx.pb-c.c $(GEN)/onnx.pb-c.h &: $(ONNX_PROTO)
	@mkdir -p $(GEN)
	@$(if $(Q),echo "  PROTOC  $(ONNX_PROTO)")
	$(Q)cp $(ONNX_PROTO) $(GEN)/onnx.proto && cd $(GEN) && protoc-c --c_out=. onnx.proto

$(B)/obj/gen/onnx.pb-c.o: $(GEN)/onnx.pb-c.c $(GEN)/onnx.pb-c.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(filter-out $(WARN) -Werror,$(CFLAGS)) $(PKG_CFLAGS) -c $< -o $@

# Everything that includes onnx_read.h needs the generated header first.
$(patsubst %.c,$(B)/obj/%.o,$(wildcard common/import/*.c)) $(TEST_BINS): | $(GEN)/onnx.pb-c.h

$(LIB): $(COMMON_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SRV_LIB): $(filter-out %/main.o,$(SERVER_OBJ))
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(CLI_LIB): $(filter-out %/main.o,$(CLIENT_OBJ))
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BIN)/eulernpud: $(SERVER_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(SERVER_OBJ) $(LIB) $(PKG_LIBS) $(LDLIBS)

$(BIN)/eulernpu: $(CLIENT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLIENT_OBJ) $(LIB) $(PKG_LIBS) $(LDLIBS)

$(TESTREF_LIB): $(TESTREF_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(B)/tests/%: tests/unit/%.c $(LIB) $(SRV_LIB) $(CLI_LIB) $(TESTREF_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) $(SERVER_INC) -Iclient -Itests/ref $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTREF_LIB) $(SRV_LIB) $(CLI_LIB) $(LIB) $(CRIT_LIBS) $(PKG_LIBS) $(LDLIBS)

$(B)/tests/order_cases: tests/ref/order_cases.c $(TESTREF_LIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) -Itests/ref $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(TESTREF_LIB) $(LIB) $(PKG_LIBS) $(LDLIBS)

tests: all $(TEST_BINS) $(CROSS_HOST) $(B)/tests/order_cases

$(B)/core/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (core)")
	$(Q)$(CC) $(CORE_CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

core: $(CORE_LIB)

build/cross/armhf/runner: $(CROSS_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CROSS   $@")
	$(Q)$(CROSS_ARMHF) $(CROSS_CFLAGS) $(ARMHF_CPU) -o $@ $(CROSS_SRC) $(CORE_SRC) -lm

build/cross/aarch64/runner: $(CROSS_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CROSS   $@")
	$(Q)$(CROSS_AARCH64) $(CROSS_CFLAGS) $(AARCH64_CPU) -o $@ $(CROSS_SRC) $(CORE_SRC) -lm

cross: $(CROSS_BINS)

$(B)/cross/bundle: tests/cross/bundle.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS) $(LDLIBS)

$(B)/cross/runner: $(CROSS_OBJ) $(CORE_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CORE_CFLAGS) $(LDFLAGS) -o $@ $(CROSS_OBJ) $(CORE_LIB) $(LDLIBS)

cross-host: $(CROSS_HOST)

print-core-src:
	@echo $(CORE_SRC)

print-core-inc:
	@echo $(CORE_INC)

print-cross-src:
	@echo $(CROSS_SRC)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(COMPLETIONDIR) \
	  $(DESTDIR)$(SYSCONFDIR)/eulernpu
	install -m 0755 $(BIN)/eulernpud $(BIN)/eulernpu $(DESTDIR)$(BINDIR)/
	gzip -n -9 <client/eulernpu.1 >$(DESTDIR)$(MANDIR)/man1/eulernpu.1.gz
	gzip -n -9 <server/eulernpud.8 >$(DESTDIR)$(MANDIR)/man8/eulernpud.8.gz
	install -d $(DESTDIR)$(MANDIR)/man5
	gzip -n -9 <docs/eulernpu-spec.5 >$(DESTDIR)$(MANDIR)/man5/eulernpu-spec.5.gz
	chmod 0644 $(DESTDIR)$(MANDIR)/man5/eulernpu-spec.5.gz
	chmod 0644 $(DESTDIR)$(MANDIR)/man1/eulernpu.1.gz $(DESTDIR)$(MANDIR)/man8/eulernpud.8.gz
	for u in $(UNITS); do \
	  sed 's|/usr/local/bin/eulernpud|$(BINDIR)/eulernpud|' systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -m 0644 systemd/eulernpu.sysusers $(DESTDIR)$(SYSUSERSDIR)/eulernpu.conf
	install -m 0644 client/eulernpu.bash $(DESTDIR)$(COMPLETIONDIR)/eulernpu
	install -m 0644 systemd/eulernpud.yaml.example $(DESTDIR)$(SYSCONFDIR)/eulernpu/
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(WWWDIR)
	install -m 0644 $(WWW) $(DESTDIR)$(WWWDIR)/

# The board agent's unit comes with `install` now; kept for old instructions.
install-board: install

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/eulernpud $(DESTDIR)$(BINDIR)/eulernpu \
	  $(DESTDIR)$(MANDIR)/man1/eulernpu.1.gz $(DESTDIR)$(MANDIR)/man8/eulernpud.8.gz \
	  $(DESTDIR)$(MANDIR)/man5/eulernpu-spec.5.gz \
	  $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) $(DESTDIR)$(SYSUSERSDIR)/eulernpu.conf \
	  $(DESTDIR)$(COMPLETIONDIR)/eulernpu $(DESTDIR)$(SYSCONFDIR)/eulernpu/eulernpud.yaml.example
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(WWWDIR)

# eulernpu-spec(5) is docs/spec-format.md as a man page, generated with
# lowdown and kept in the repository (tests/e2e/docs.sh checks it is
# current): `make man-spec` after editing the format.
man-spec:
	lowdown -s -Tman -M title=eulernpu-spec -M section=5 docs/spec-format.md >docs/eulernpu-spec.5

# Install the Debian packages the build and the tests need (sudo when not root).
# nodejs and npm (for the OpenAPI linter, npm-deps) only when no npm is on
# PATH: a node installed otherwise (e.g. NodeSource's) is used as it is.
deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null || missing="$$missing $(NPM_DEBS)"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# The OpenAPI linter of tests/e2e/openapi.sh: @redocly/cli at the exact
# version of tests/tools/redocly/package.json, every dependency pinned by its
# package-lock.json, installed by `npm ci` from the npm registry into
# build/npm (never globally). The version is the last whose engines (and its
# dependencies', cheerio held at 1.0.0 by an override for that) accept
# Debian 12's nodejs 18 and npm 9; openapi.sh checks that they still do.
# The browser driver of tests/e2e/page.sh likewise: puppeteer-core as pinned
# by tests/tools/browser/, into build/npm-browser. It drives Debian's
# chromium (DEBS); no browser is ever downloaded (--ignore-scripts runs no
# install script, and the test names /usr/bin/chromium).
NPM_DIR := build/npm
REDOCLY := $(NPM_DIR)/node_modules/.bin/redocly
BROWSER_NPM_DIR := build/npm-browser
PUPPETEER := $(BROWSER_NPM_DIR)/node_modules/puppeteer-core/package.json
npm-deps: $(REDOCLY) $(PUPPETEER)
$(REDOCLY): tests/tools/redocly/package.json tests/tools/redocly/package-lock.json
$(PUPPETEER): tests/tools/browser/package.json tests/tools/browser/package-lock.json
$(REDOCLY) $(PUPPETEER):
	@command -v npm >/dev/null || { echo "npm is not installed: run make deps (apt-get install $(NPM_DEBS))" >&2; exit 1; }
	$(Q)dir=$(firstword $(subst /node_modules/, ,$@)) && mkdir -p $$dir && cp $^ $$dir/ && \
	  cd $$dir && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	$(Q)touch $@

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/e2e/demo.sh $(BIN)

# The whole suite: unit tests and end-to-end tests, then again under
# ASan+UBSan, then every mutant (make mutants), then each fuzz target for
# FUZZ_SECONDS (10 by default here; `make fuzz` runs them longer). Prints a
# closing "N passed, N failed" line.
test: deps bench-deps
	$(Q)$(MAKE) --no-print-directory npm-deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) tests cross $(KBENCH)
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) SAN=1 tests
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) fuzz-build
	$(Q)FUZZ_SECONDS=$(or $(TEST_FUZZ_SECONDS),10) tests/run.sh

# make stress: the long runs kept out of make test: the load test for 30 s
# (LOAD_SECONDS), the fault tests, valgrind memcheck over every unit test.
stress: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) tests
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) SAN=1 tests
	$(Q)tests/stress.sh

# make conformance: ONNX's node tests (libonnx-testdata) through import,
# compile and run on one daemon, against their outputs and npu_sim against
# cpu_ref; checks docs/conformance.md's per-op table (tests/conformance/nodetests.sh;
# --write rewrites it); then PyTorch's model families exported with torch,
# imported and run on cpu_ref (against torch), npu_sim and fpga_board
# (tests/conformance/models.sh); then quantised resnet18 and mobilenet_v2
# (QDQ) against a NumPy integer reference and PyTorch's float top-1
# (tests/conformance/int8_models.sh). make test runs all three (tests/run.sh).
conformance: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all
	$(Q)ENPU_BIN=$(BIN) tests/conformance/nodetests.sh
	$(Q)ENPU_BIN=$(BIN) tests/conformance/models.sh
	$(Q)ENPU_BIN=$(BIN) bash tests/conformance/int8_models.sh

# make mutants: each tests/mutants/*.patch (or those named in MUTANTS) applied
# to a copy of the tree, rebuilt and run against the tests its "# kill:"
# lines name, MUTANT_JOBS (nproc) at a time; fails and names the survivors
# when a planted bug passes its tests. Needs the normal build, made first.
mutants: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) SAN=0 tests
	$(Q)tests/mutants/run.sh -j $(or $(MUTANT_JOBS),$(NPROC)) $(MUTANTS)

# Fuzzing (tests/fuzz/fuzz.mk: make fuzz FUZZ_SECONDS=N) and the load
# generator (tests/load/load.mk).
include tests/fuzz/fuzz.mk tests/load/load.mk tests/bench/bench.mk

clean:
	rm -rf build build-san build-fuzz bin

-include $(COMMON_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(CLIENT_OBJ:.o=.d) $(TEST_BINS:=.d) \
	 $(TESTREF_OBJ:.o=.d) $(B)/tests/order_cases.d \
	 $(CORE_OBJ:.o=.d) $(CROSS_OBJ:.o=.d) $(CROSS_HOST:=.d)
