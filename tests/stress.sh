#!/usr/bin/env bash
# stress.sh: `make stress`, the long runs kept out of make test:
#   - the load test at full length (LOAD_SECONDS, default 30) on the plain
#     and the ASan+UBSan daemon (the latter also checks LeakSanitizer at exit);
#   - the fault tests (kill -9 at each commit point, a full tmpfs cache);
#   - the job table's scale benchmark (tests/bench/jobscale.sh: submit,
#     list, health and cancel with 100 to 30,000 jobs queued, the RSS per
#     finished job, 30,000 jobs expiring at once; it prints, never asserts
#     a speed);
#   - every unit test under valgrind memcheck (tests/memcheck.sh);
#   - each fuzz target for FUZZ_SECONDS (default 60; make fuzz);
#   - the cache scale benchmark (tests/bench/cachescale.py: restart with a
#     smaller --cache-max, health, stats, /metrics, ls, a compile at the
#     bound, at 100 to 30,000 artifacts; CACHESCALE_POINTS): a table, no
#     assertion about speed.
# Prints one closing "N passed, M failed" line.
set -u
cd "$(dirname "$0")/.."
export LOAD_SECONDS=${LOAD_SECONDS:-30}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
pass=0 fail=0 failed=()

tally() {   # $1 = label, $2 = log, $3 = exit status
	local pf p f
	pf=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$2" | tail -1)
	read -r p f <<<"${pf:-0 1}"
	if [ "$3" != 0 ] && [ "${f:-0}" = 0 ]; then f=1; fi
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$3" = 0 ]; then echo "ok   $1: $p passed"; else failed+=("$1"); echo "FAIL $1"; tail -30 "$2"; fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for b in bin build-san/bin; do
	for s in load faults; do
		[ -x "$b/eulernpud" ] || continue
		ENPU_BIN=$b bash tests/e2e/$s.sh >"$log" 2>&1; r=$?
		grep -a -E '^(#|load|rss|  )' "$log" | head -40
		tally "$s ($b, LOAD_SECONDS=$LOAD_SECONDS)" "$log" $r
	done
done
tests/bench/jobscale.sh >"$log" 2>&1; r=$?
grep -a -E '^(\||jobscale|finished|expire)' "$log"
tally "jobscale (the job table at scale, a benchmark)" "$log" $r
tests/memcheck.sh build >"$log" 2>&1; r=$?
grep -a '^ok\|^FAIL' "$log"
tally "memcheck (unit tests under valgrind)" "$log" $r
make --no-print-directory fuzz FUZZ_SECONDS="$FUZZ_SECONDS" >"$log" 2>&1; r=$?
grep -a -E '^(ok|FAIL|fuzz)' "$log" | head -40
tally "fuzz ($FUZZ_SECONDS s per target)" "$log" $r
ENPU_BIN=bin tests/bench/cachescale.py >"$log" 2>&1; r=$?
sed -n '/^cache scale/,/^$/p; /^| /p' "$log" | awk '!seen[$0]++'
tally "cache scale benchmark (bin)" "$log" $r
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
