# eulernpu: one plain Makefile. `make` builds bin/eulernpud, bin/eulernpu and
# build/libeulernpu.a; `make demo` runs the tiny_mlp pipeline; `make test`
# runs every test, then again under ASan+UBSan. Quiet by default; V=1 shows
# the commands. SAN=1 builds the sanitizer variant into build-san/.

CC      ?= cc
PKGS    := libmicrohttpd libcurl yaml-0.1 json-c libzip zlib libcrypto
DEBS    := libmicrohttpd-dev libcurl4-openssl-dev libyaml-dev libjson-c-dev \
           libzip-dev zlib1g-dev libssl-dev libcriterion-dev python3-numpy \
           pkg-config curl
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
ifeq ($(CI),true)
WARN    += -Werror
endif
OPT     ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -ffp-contract=off -fno-fast-math \
           -pthread -MMD -MP -Icommon -Iproto
LDLIBS  += -pthread -lm

ifeq ($(SAN),1)
B       := build-san
BIN     := build-san/bin
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
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

COMMON_SRC := $(sort $(wildcard common/*.c))
SERVER_SRC := $(sort $(wildcard server/*.c))
CLIENT_SRC := $(sort $(wildcard client/*.c))
TEST_SRC   := $(sort $(wildcard tests/unit/test_*.c))

COMMON_OBJ := $(COMMON_SRC:%.c=$(B)/obj/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(B)/obj/%.o)
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(B)/obj/%.o)
TEST_BINS  := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
LIB        := $(B)/libeulernpu.a
# server/ and client/ modules minus main.c, so unit tests can link them.
SRV_LIB    := $(B)/libsrv.a
CLI_LIB    := $(B)/libcli.a

.PHONY: all deps demo test test-unit test-e2e test-san clean tests check-deps
all: $(BIN)/eulernpud $(BIN)/eulernpu $(LIB)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(LIB): $(COMMON_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SRV_LIB): $(filter-out %/main.o,$(SERVER_OBJ))
	$(Q)rm -f $@ && ar rcs $@ $^

$(CLI_LIB): $(filter-out %/main.o,$(CLIENT_OBJ))
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN)/eulernpud: $(SERVER_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(SERVER_OBJ) $(LIB) $(PKG_LIBS) $(LDLIBS)

$(BIN)/eulernpu: $(CLIENT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLIENT_OBJ) $(LIB) $(PKG_LIBS) $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(LIB) $(SRV_LIB) $(CLI_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) -Iserver -Iclient $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(SRV_LIB) $(CLI_LIB) $(LIB) $(CRIT_LIBS) $(PKG_LIBS) $(LDLIBS)

tests: all $(TEST_BINS)

# Install the Debian packages the build and the tests need (sudo when not root).
deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/e2e/demo.sh $(BIN)

# The whole suite: unit tests and end-to-end tests, then again under
# ASan+UBSan. Prints a closing "N passed, N failed" line.
test: deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)$(MAKE) --no-print-directory SAN=1 tests
	$(Q)tests/run.sh

clean:
	rm -rf build build-san bin

-include $(COMMON_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(CLIENT_OBJ:.o=.d) $(TEST_BINS:=.d)
