#!/usr/bin/env bash
# load.sh: the load tests (issue 6): 64 clients run tiny_mlp for
# LOAD_SECONDS (make test: 5, make stress: 30), every result byte-equal;
# then compiles of distinct specs, their runs and cache reads against a
# daemon whose small --cache-max evicts during the run. No failure but
# documented 429s and eviction answers, daemon RSS bounded, and the daemon
# exits 0 on SIGTERM with no sanitizer report (LeakSanitizer in the SAN run).
. "$(dirname "$0")/lib.sh"

SECS=${LOAD_SECONDS:-5}
CLIENTS=64
case "$BIN" in
*/build-san/bin) LOADGEN=$ROOT/build-san/tests/loadgen ;;
*) LOADGEN=$ROOT/build/tests/loadgen ;;
esac
SAN=0
ldd "$BIN/eulernpud" 2>/dev/null | grep -q libasan && SAN=1

# The job table is a bounded history by design (--job-history, default
# 10000; about 2.2 KiB of RSS per finished job, measured by make stress's
# jobscale). A client forgets its job only if the history turns over
# between the job's end and the client's GET of its result: with 4096 kept
# and each of the other 63 clients holding one job at a time, that takes
# 65 of their jobs (some 0.4 s of the daemon's work) while this client's
# thread does not run. 128 was turned over by an ordinary scheduling gap on
# 2 cores once jobs got faster. 4096 jobs are at most 9 MiB, inside the
# RSS slack below, and the warm-up runs that many so the history is full
# before the first RSS reading: growth after the warm-up means a leak, not
# the history filling. --conn-limit: the 64 clients hold 64 connections,
# the default limit; the spare ones are for this script.
DAEMON_ARGS=(--workers 2 --conn-limit 100 --job-history 4096)
WARMUP=(--warmup 2 --warmup-iters 4096)

# RSS bound: end <= warm-up x 1.25 + 16 MiB. Under ASan the allocator's
# quarantine (256 MiB by default, plus 1 MiB in each thread, and the daemon
# has a thread per connection) keeps freed memory resident and grows RSS by
# design: the daemon gets a 16 MiB quarantine and 64 KiB per thread (its
# use-after-free window is still thousands of allocations) so that the same
# bound holds.
if [ "$SAN" = 1 ]; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:quarantine_size_mb=16:thread_local_quarantine_size_kb=64"
fi

[ -x "$LOADGEN" ] || { notok "loadgen is built ($LOADGEN)"; finish; exit 1; }

# field FILE KEY: a top-level number of loadgen's JSON
field() {
	jget "$1" "$2"
}

# stop_checked NAME: SIGTERM, wait (bounded: LeakSanitizer's pass at exit
# takes a while), then the exit status and the daemon's stderr.
stop_checked() {
	local name=$1 p rc
	p=$(daemon_pid "$name")
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 1200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
	wait "$p"; rc=$?
	unset "T_PIDS[$name]"
	expect_eq "$name: the daemon exits 0 on SIGTERM after the load" "$rc" 0
	if [ "$SAN" = 1 ]; then
		if grep -q 'ERROR: LeakSanitizer' "$TMP/$name.stderr"; then
			notok "$name: no LeakSanitizer report at the daemon's exit"
			grep -A30 'ERROR: LeakSanitizer' "$TMP/$name.stderr" | head -60 | sed 's/^/    | /'
		else
			ok "$name: no LeakSanitizer report at the daemon's exit (ASan build, detect_leaks=1)"
		fi
	else
		echo "# $name: plain build: no LeakSanitizer here, the leak check is vacuous (the SAN run makes it)"
	fi
	if grep -Eq 'ERROR: AddressSanitizer|runtime error:' "$TMP/$name.stderr"; then
		notok "$name: no sanitizer report in the daemon's stderr"
		head -40 "$TMP/$name.stderr" | sed 's/^/    | /'
	else
		ok "$name: no sanitizer report in the daemon's stderr"
	fi
}

# load NAME SCENARIO [loadgen args...]: run loadgen against daemon NAME,
# check its figures.
load() {
	local name=$1 scen=$2 pid out warm end bound req fails; shift 2
	pid=$(daemon_pid "$name")
	out=$TMP/$name.json
	echo "# $name: scenario $scen, $CLIENTS clients, $SECS s after the warm-up"
	"$LOADGEN" --socket "$TMP/$name.sock" --scenario "$scen" --clients "$CLIENTS" \
		--seconds "$SECS" "${WARMUP[@]}" --example "$EX/tiny_mlp" --daemon-pid "$pid" \
		--json "$out" "$@" >"$TMP/$name.lg.out" 2>"$TMP/$name.lg.err"
	local rc=$?
	sed 's/^/# /' "$TMP/$name.lg.out"
	expect_eq "$name: loadgen exits 0 (no failure but documented 429s and evictions)" "$rc" 0
	[ "$rc" = 0 ] || sed 's/^/    | /' "$TMP/$name.lg.err" | head -40
	fails=$(field "$out" failures)
	req=$(field "$out" requests)
	expect_eq "$name: 0 failed requests" "${fails:-none}" 0
	expect_match "$name: at least $CLIENTS requests were measured (got ${req:-none})" \
		"$(( ${req:-0} >= CLIENTS ))" '^1$'
	warm=$(field "$out" rss_warm_kib)
	end=$(field "$out" rss_end_kib)
	bound=$(( ${warm:-0} * 5 / 4 + 16384 ))
	echo "# $name: daemon VmRSS $warm KiB after the warm-up, $end KiB at the end (bound $bound KiB)"
	expect_match "$name: daemon RSS read after the warm-up and at the end" "${warm:-x} ${end:-x}" \
		'^[1-9][0-9]* [1-9][0-9]*$'
	expect_match "$name: RSS at the end <= warm-up x 1.25 + 16 MiB ($end <= $bound KiB)" \
		"$(( ${end:-999999999} <= bound ))" '^1$'
}

# 1. run: one artifact, 64 clients, results byte-equal (loadgen checks each).
start_daemon run "${DAEMON_ARGS[@]}" || { notok "daemon 'run' starts"; finish; exit 1; }
load run run
stop_checked run

# 2. mix: 24 distinct specs compiled, run and read under a --cache-max of
# about two thirds of their working set (so artifacts are evicted and
# compiled again, inputs and results uploaded or run again), and a short
# queue so that 429 + Retry-After is exercised too.
start_daemon mix "${DAEMON_ARGS[@]}" --cache-max 196608 --max-queue 8 ||
	{ notok "daemon 'mix' starts"; finish; exit 1; }
load mix mix --variants 24
ev=$(field "$TMP/mix.json" evictions)
expect_match "mix: the cache evicted during the run (evictions ${ev:-none})" "${ev:-0}" '^[1-9][0-9]*$'
stop_checked mix

finish
