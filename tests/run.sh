#!/usr/bin/env bash
# run.sh: run every test of `make test`: the unit tests (criterion), the
# fuzz regression inputs and the end-to-end scripts, first on the normal
# build, then under ASan+UBSan; then tests/conformance/*.sh once (plain
# build: ONNX's node tests and PyTorch's model families through import,
# make conformance; TEST_CONFORMANCE=0 leaves them out); then make bench at
# a tiny size (TEST_BENCH=0 leaves it out); then every mutant of
# tests/mutants (on the normal build; TEST_MUTANTS=0 leaves them out); then
# each fuzz target for FUZZ_SECONDS (10; 0 leaves them out). Prints one
# closing line "N passed, N failed" over everything, after a line "K
# skipped" when tests were skipped.
#
# A skipped test is never a pass: criterion's (cr_skip_test, from its TAP
# report) and the end-to-end scripts' ("skip - ID: text", lib.sh's skip) are
# counted and listed under "skipped:". Under CI=true a skip whose ID is not
# in tests/skips.allow is a failure (lib.sh fails the script; a unit test's
# skip, ID unit:SUITE::TEST, is failed here).
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skipped=0 failed=() skips=()
SKIPS_ALLOW=${SKIPS_ALLOW:-tests/skips.allow}

skip_allowed() {      # ID: listed in the allow-list ("ID  reason" lines)
	[ -f "$SKIPS_ALLOW" ] && awk -v id="$1" '$1 == id { f = 1 } END { exit !f }' "$SKIPS_ALLOW"
}

# count_tap_skips LABEL BINARY TAP: criterion's skipped tests ("ok - SUITE::TEST  # SKIP why")
count_tap_skips() {
	local label=$1 name=$2 line id why
	[ -f "$3" ] || return 0
	while IFS= read -r line; do
		id=unit:$(sed -n 's/^ok - \([^ ]*\) .*# SKIP.*/\1/p' <<<"$line")
		why=$(sed -n 's/.*# SKIP *//p' <<<"$line")
		if [ "${CI:-}" = true ] && ! skip_allowed "$id"; then
			fail=$((fail + 1))
			failed+=("$label $name: skip $id under CI=true, not in $SKIPS_ALLOW ($why)")
			echo "FAIL [$label] $name: $id skipped under CI=true and not in $SKIPS_ALLOW: $why"
		else
			skipped=$((skipped + 1))
			skips+=("$label $name $id: $why")
			echo "skip [$label] $name: $id: $why"
		fi
	done < <(grep -a '^ok - .*# SKIP' "$3")
}
E2E_JOBS=${E2E_JOBS:-$(nproc 2>/dev/null || echo 2)}

count_criterion() {   # parse "Synthesis: Tested: 12 | Passing: 12 | Failing: 0 | Crashing: 0"
	local line t p
	line=$(grep -a 'Synthesis:' "$1" | tail -1)
	t=$(sed -n 's/.*Tested: \([0-9]*\).*/\1/p' <<<"$line")
	p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$line")
	echo "${p:-0} $(( ${t:-0} - ${p:-0} ))"
}

count_plain() {       # the e2e scripts end with "N passed, M failed"
	sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$1" | tail -1
}

run_suite() {   # $1 = label, $2 = build dir, $3 = bin dir
	local label=$1 bdir=$2 bin=$3 t log tap r pf
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	for t in "$bdir"/tests/test_*; do
		[ -x "$t" ] || continue
		log=$(mktemp) tap=$(mktemp)
		timeout 600 "$t" --jobs 2 --tap="$tap" >"$log" 2>&1; r=$?
		# criterion's boxfort sometimes fails to spawn a test process on a
		# loaded machine ("Could not spawn test instance: Protocol error"):
		# that is the harness, not a test, so such a binary runs once more,
		# serially. Any other failure counts as it is.
		if [ "$r" != 0 ] && grep -q 'Could not spawn test instance' "$log"; then
			echo "note [$label] $(basename "$t"): criterion could not spawn a test; running it again serially"
			timeout 600 "$t" --jobs 1 --tap="$tap" >"$log" 2>&1; r=$?
		fi
		count_tap_skips "$label" "$(basename "$t")" "$tap"
		read -r p f <<<"$(count_criterion "$log")"
		if [ "$r" != 0 ] && [ "${f:-0}" = 0 ]; then f=1; fi
		pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
		if [ "$r" != 0 ]; then
			failed+=("$label $(basename "$t")")
			echo "FAIL [$label] $(basename "$t"):"; tail -40 "$log"
		else
			echo "ok   [$label] $(basename "$t"): ${p:-0} passed"
		fi
		rm -f "$log" "$tap"
	done
	# the inputs that once crashed a fuzz target, replayed on this build
	log=$(mktemp)
	tests/fuzz/run.sh --regress-only "$bdir" >"$log" 2>&1; r=$?
	tally_plain "$label" "fuzz regressions" "$log" "$r"
	# The end-to-end scripts, E2E_JOBS at a time (each has its own
	# directory, sockets and daemons, and none asserts a duration); their
	# results are counted in name order.
	local dir names=() i
	dir=$(mktemp -d)
	for t in tests/e2e/*.sh; do
		case "$(basename "$t")" in lib.sh|demo.sh) continue ;; esac
		names+=("$t")
	done
	for i in "${!names[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$E2E_JOBS" ]; do wait -n; done
		( ENPU_BIN=$bin timeout 900 bash "${names[$i]}" >"$dir/$i.log" 2>&1
		  echo $? >"$dir/$i.rc" ) &
	done
	wait
	for i in "${!names[@]}"; do
		tally_plain "$label" "$(basename "${names[$i]}")" "$dir/$i.log" "$(cat "$dir/$i.rc" 2>/dev/null || echo 1)"
	done
	rm -rf "$dir"
}

tally_plain() {   # $1 label, $2 name, $3 log ("N passed, M failed" at the end), $4 status
	local pf p f line id
	pf=$(count_plain "$3")
	read -r p f <<<"${pf:-0 1}"
	if [ "$4" != 0 ] && [ "${f:-0}" = 0 ]; then f=1; fi
	pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
	# its skips ("skip - ID: text"); under CI=true an unlisted one already
	# failed the script (lib.sh), so it is listed under failed, not here
	while IFS= read -r line; do
		id=$(sed -n 's/^skip - \([^:]*\):.*/\1/p' <<<"$line")
		if [ "${CI:-}" = true ] && ! skip_allowed "$id"; then continue; fi
		skipped=$((skipped + 1))
		skips+=("$1 $2 ${line#skip - }")
		echo "skip [$1] $2: ${line#skip - }"
	done < <(grep -a '^skip - ' "$3")
	if [ "$4" != 0 ]; then
		failed+=("$1 $2")
		echo "FAIL [$1] $2:"; grep -a -A8 '^not ok\|^FAIL' "$3" | head -80; tail -5 "$3"
	else
		echo "ok   [$1] $2: ${p:-0} passed"
	fi
	rm -f "$3"
}

start=$(date +%s)
run_suite plain build bin
run_suite asan build-san build-san/bin
# the conformance runs (ONNX's node tests, PyTorch's model families: issue
# 13, make conformance), once, on the plain build: they check what is
# imported and computed, which the sanitized build would only repeat at
# several times the cost
if [ "${TEST_CONFORMANCE:-1}" != 0 ]; then
	for t in tests/conformance/*.sh; do
		log=$(mktemp); t0=$(date +%s)
		ENPU_BIN=bin timeout 1800 bash "$t" >"$log" 2>&1; r=$?
		grep -a '^nodetests:\|^# ' "$log" | sed 's/^/    /'
		tally_plain conformance "$(basename "$t") ($(( $(date +%s) - t0 )) s)" "$log" "$r"
	done
fi
# make bench once at a tiny size: it runs end to end (a benchmark: no speed
# is asserted; its table goes to the log)
if [ "${TEST_BENCH:-1}" != 0 ]; then
	log=$(mktemp); t0=$(date +%s)
	BENCH_SIZE=tiny ENPU_BIN=bin timeout 900 tests/bench/bench.sh >"$log" 2>&1; r=$?
	if [ "$r" = 0 ] && grep -q '^| matmul' "$log" && grep -q '^| memory plan' "$log"; then
		pass=$((pass + 1)); echo "ok   [bench] make bench, tiny ($(( $(date +%s) - t0 )) s)"
	else
		fail=$((fail + 1)); failed+=("bench tiny"); echo "FAIL [bench] make bench, tiny:"; tail -20 "$log"
	fi
	rm -f "$log"
fi
# every mutant of tests/mutants must be killed by its tests (on the plain
# build; each mutant is one small planted bug: tests/mutants/README.md)
if [ "${TEST_MUTANTS:-1}" != 0 ]; then
	log=$(mktemp)
	tests/mutants/run.sh >"$log" 2>&1; r=$?
	grep -a '^SURVIVED\|^ERROR\|^total' "$log" | sed 's/^/    /' | head -20
	tally_plain mutants "tests/mutants (make mutants)" "$log" "$r"
fi
# each fuzz target briefly (make fuzz-build made them), from its seeds and
# the corpus of earlier runs; then the regression inputs through the fuzzers
if [ "${FUZZ_SECONDS:-10}" != 0 ]; then
	log=$(mktemp)
	tests/fuzz/run.sh "${FUZZ_SECONDS:-10}" >"$log" 2>&1; r=$?
	grep -a '^fuzz\|^ok\|^FAIL' "$log" | sed 's/^/    /' | head -20
	tally_plain fuzz "libFuzzer targets, ${FUZZ_SECONDS:-10} s each" "$log" "$r"
fi
echo "make test: $(( $(date +%s) - start )) s"
if [ ${#skips[@]} -gt 0 ]; then
	printf 'skipped: %s\n' "${skips[@]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
	printf 'failed: %s\n' "${failed[@]}"
fi
[ "$skipped" = 0 ] || echo "$skipped skipped"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ ${#failed[@]} = 0 ]
