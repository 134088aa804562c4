#!/usr/bin/env bash
# run.sh: run the libFuzzer targets (make fuzz), or only replay the checked-in
# crash inputs (make fuzz-regress). Prints "N passed, M failed": one check
# per target run and one per regression input replayed.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]     fuzz each target (default: every
#                                             build-fuzz/fuzz_*) for SECONDS,
#                                             then replay tests/fuzz/regress/
#   tests/fuzz/run.sh --regress-only BDIR     replay tests/fuzz/regress/T/* with
#                                             BDIR/tests/replay_T (build, build-san)
#
# The working corpus is build-fuzz/corpus/T (grows across runs, not checked
# in); seeds are rebuilt into build-fuzz/seeds/T by seed.sh each run; logs
# go to build-fuzz/logs/T.log and crash inputs to build-fuzz/crashes/T/.
set -u
cd "$(dirname "$0")/../.."
FB=build-fuzz
pass=0 fail=0 child=

cleanup() {   # never leave a fuzzer behind (Ctrl-C, a CI timeout)
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	[ -n "${FUZZ_TMP:-}" ] && rm -rf "$FUZZ_TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The fuzzers' temporary files: tmpfs when there is one, removed at the end
# even if a fuzzer crashed before its own clean-up.
if [ -w /dev/shm ]; then FUZZ_TMP=$(mktemp -d /dev/shm/enpu-fuzz.XXXXXX); else FUZZ_TMP=$(mktemp -d); fi
export ENPU_FUZZ_TMP=$FUZZ_TMP

# One dictionary per target, from the shared ones.
dicts_of() {
	case "$1" in
	spec) echo yaml ;;
	npz|compare) echo npz ;;
	artifact) echo json npz ;;
	http) echo http json yaml ;;
	*) echo "$1" ;;
	esac
}

make_dict() {   # $1 = target; prints the path of its dictionary, or nothing
	local t=$1 d out=$FB/dict/$1.dict
	mkdir -p "$FB/dict"
	: >"$out"
	for d in $(dicts_of "$t"); do
		[ -f "tests/fuzz/dict/$d.dict" ] && cat "tests/fuzz/dict/$d.dict" >>"$out"
	done
	[ -s "$out" ] && echo "$out"
}

stat_of() {   # $1 = key, $2 = log: libFuzzer's -print_final_stats=1 line
	sed -n "s/^stat::$1: *//p" "$2" | tail -1
}

fuzz_one() {   # $1 = target, $2 = seconds
	local t=$1 secs=$2 bin=$FB/fuzz_$1 log=$FB/logs/$1.log dict r nseeds
	local execs eps cov ft corp crash
	mkdir -p "$FB/corpus/$t" "$FB/crashes/$t" "$FB/logs"
	if ! nseeds=$(tests/fuzz/seed.sh "$t" "$FB/seeds/$t" "$bin" 2>&1); then
		echo "FAIL fuzz_$t: seeds: $nseeds"
		fail=$((fail + 1))
		return
	fi
	dict=$(make_dict "$t")
	# libFuzzer ends on its own after max_total_time; timeout is only the
	# backstop (corpus loading and the last input also take time)
	timeout -k 10 $((secs + 300)) "$bin" -max_total_time="$secs" -print_final_stats=1 \
		-rss_limit_mb=2048 -timeout=10 ${dict:+-dict="$dict"} \
		-artifact_prefix="$FB/crashes/$t/" "$FB/corpus/$t" "$FB/seeds/$t" >"$log" 2>&1 &
	child=$!
	wait "$child"; r=$?
	child=
	execs=$(stat_of number_of_executed_units "$log")
	eps=$(stat_of average_exec_per_sec "$log")
	cov=$(grep -a -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -a -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	# libFuzzer's own count (seeds and new units after its merge)
	corp=$(grep -a -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	if [ "$r" = 0 ]; then
		pass=$((pass + 1))
		printf 'ok   fuzz_%-9s %5ss  %9s execs  %6s exec/s  cov %5s  ft %6s  corpus %5s (%s new in %s)\n' \
			"$t" "$secs" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" \
			"$(ls "$FB/corpus/$t" | wc -l)" "$FB/corpus/$t"
		return
	fi
	fail=$((fail + 1))
	crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
	echo "FAIL fuzz_$t (exit $r) after ${execs:-?} execs; log: $log"
	grep -a -m1 -A12 -E '^==[0-9]+==ERROR|runtime error|^fuzz_[a-z]*: |ERROR: libFuzzer' "$log" | sed 's/^/    /'
	if [ -n "$crash" ]; then
		echo "    crash input: $crash"
		echo "    reproduce:   $bin $crash"
		echo "            or:  make tests && build/tests/replay_$t $crash"
		echo "    keep it:     cp $crash tests/fuzz/regress/$t/<what-it-does>"
	fi
}

replay_regress() {   # $1 = target, $2 = command running one input
	local t=$1 f log
	shift
	[ -d "tests/fuzz/regress/$t" ] || return 0
	for f in "tests/fuzz/regress/$t"/*; do
		[ -f "$f" ] || continue
		case "$(basename "$f")" in README*) continue ;; esac
		log=$(mktemp)
		if timeout -k 5 120 "$@" "$f" >"$log" 2>&1; then
			pass=$((pass + 1))
			echo "ok   regress $t/$(basename "$f")"
		else
			fail=$((fail + 1))
			echo "FAIL regress $t/$(basename "$f"): $* $f"
			tail -20 "$log" | sed 's/^/    /'
		fi
		rm -f "$log"
	done
}

targets_of() {   # $1 = dir, $2 = prefix of the binaries
	local b
	for b in "$1"/"$2"*; do
		[ -x "$b" ] && basename "$b" | sed "s/^$2//"
	done
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ "${1:-}" = --regress-only ]; then
	bdir=${2:?usage: run.sh --regress-only BUILD_DIR}
	for t in $(targets_of "$bdir/tests" replay_); do
		replay_regress "$t" "$bdir/tests/replay_$t"
	done
else
	secs=${1:-60}
	shift || true
	case "$secs" in ''|*[!0-9]*) echo "usage: run.sh SECONDS [TARGET...]" >&2; exit 2 ;; esac
	targets=("$@")
	[ ${#targets[@]} -gt 0 ] || targets=($(targets_of "$FB" fuzz_))
	for t in "${targets[@]}"; do
		if [ ! -x "$FB/fuzz_$t" ]; then
			echo "FAIL fuzz_$t: $FB/fuzz_$t is not built (make fuzz-build)"
			fail=$((fail + 1))
			continue
		fi
		fuzz_one "$t" "$secs"
	done
	for t in "${targets[@]}"; do
		[ -x "$FB/fuzz_$t" ] && replay_regress "$t" "$FB/fuzz_$t" -runs=1
	done
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
