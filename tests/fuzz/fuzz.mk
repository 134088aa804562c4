# tests/fuzz/fuzz.mk: libFuzzer targets (included by the top Makefile).
# Every tests/fuzz/fuzz_*.c is a target: clang with ASan+UBSan+libFuzzer
# into build-fuzz/fuzz_*, linked against the library and the server objects
# (minus server/main.c), all rebuilt with coverage instrumentation. The
# same sources also build as plain replayers, $(B)/tests/replay_* (gcc, and
# sanitized under SAN=1), with tests/fuzz/replay.c as main().
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="spec npz"]   build and run
#   make fuzz-build                                         build only
#   make fuzz-regress                                       replay tests/fuzz/regress/

FUZZ_CC      ?= clang
FUZZ_B       := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) -ffp-contract=off -fno-fast-math \
                -pthread -MMD -MP $(INC) $(SERVER_INC) $(FUZZ_SAN)

FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_B)/fuzz_%)
FUZZ_COMMON_OBJ := $(COMMON_SRC:%.c=$(FUZZ_B)/obj/%.o) $(FUZZ_B)/obj/gen/onnx.pb-c.o
FUZZ_SERVER_OBJ := $(filter-out $(FUZZ_B)/obj/server/main.o,$(SERVER_SRC:%.c=$(FUZZ_B)/obj/%.o))
FUZZ_LIB     := $(FUZZ_B)/libeulernpu.a
FUZZ_SRV_LIB := $(FUZZ_B)/libsrv.a
REPLAY_BINS  := $(FUZZ_NAMES:%=$(B)/tests/replay_%)

.PHONY: fuzz fuzz-build fuzz-regress

$(FUZZ_B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (fuzz)")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c $< -o $@

# The generated protobuf code (Makefile, build/gen), without warning flags;
# the ONNX reader and target need its header first.
$(FUZZ_B)/obj/gen/onnx.pb-c.o: $(GEN)/onnx.pb-c.c $(GEN)/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(filter-out $(WARN) -Werror,$(FUZZ_CFLAGS)) -fsanitize=fuzzer-no-link \
	  $(PKG_CFLAGS) -c $< -o $@

$(patsubst %.c,$(FUZZ_B)/obj/%.o,$(wildcard common/import/*.c)) \
  $(FUZZ_B)/obj/tests/fuzz/fuzz_onnx.o $(B)/tests/replay_onnx: | $(GEN)/onnx.pb-c.h

$(FUZZ_LIB): $(FUZZ_COMMON_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_SRV_LIB): $(FUZZ_SERVER_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BINS): $(FUZZ_B)/fuzz_%: $(FUZZ_B)/obj/tests/fuzz/fuzz_%.o $(FUZZ_SRV_LIB) $(FUZZ_LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_SRV_LIB) $(FUZZ_LIB) \
	  $(PKG_LIBS) $(LDLIBS)

# The replayers: the target's source and replay.c's main(), built like the
# unit tests (so `make tests` and `make SAN=1 tests` build them).
$(REPLAY_BINS): $(B)/tests/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(LIB) $(SRV_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  REPLAY  $@")
	$(Q)$(CC) $(CFLAGS) $(SERVER_INC) $(PKG_CFLAGS) $(LDFLAGS) -o $@ tests/fuzz/replay.c $< \
	  $(SRV_LIB) $(LIB) $(PKG_LIBS) $(LDLIBS)

tests: $(REPLAY_BINS)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-regress: $(REPLAY_BINS)
	$(Q)tests/fuzz/run.sh --regress-only $(B)

-include $(FUZZ_COMMON_OBJ:.o=.d) $(FUZZ_SERVER_OBJ:.o=.d) \
	 $(FUZZ_NAMES:%=$(FUZZ_B)/obj/tests/fuzz/fuzz_%.d) $(REPLAY_BINS:=.d)
