#!/usr/bin/env bash
# memcheck.sh: every unit test binary under valgrind's memcheck, following
# criterion's test processes (--trace-children). Passes when every test
# passes and no process reports a memory error or a definite leak.
#   tests/memcheck.sh [BUILD_DIR [TEST_NAME...]]     (default: build, all)
# Prints "N passed, M failed" (one per binary) like the e2e scripts.
set -u
cd "$(dirname "$0")/.."
bdir=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for t in "$bdir"/tests/test_*; do
		case "$t" in *.d) continue ;; esac
		[ -x "$t" ] && names+=("$(basename "$t")")
	done
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/enpu-memcheck.XXXXXX")
trap 'rm -rf "$logs"' EXIT
pass=0 fail=0
for n in "${names[@]}"; do
	t=$bdir/tests/$n
	mkdir -p "$logs/$n"
	t0=$(date +%s)
	# Definite leaks count as errors; "still reachable" does not (criterion
	# and libcurl keep process-lifetime state). A failed assertion leaks by
	# design (criterion aborts the test), so the criterion result decides
	# first.
	timeout 3600 valgrind --tool=memcheck --trace-children=yes --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
		--log-file="$logs/$n/%p.log" "$t" --jobs 2 >"$logs/$n/out" 2>&1
	r=$?
	bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs/$n"/*.log 2>/dev/null)
	syn=$(grep -a 'Synthesis:' "$logs/$n/out" | tail -1)
	if [ "$r" = 0 ] && [ -z "$bad" ]; then
		pass=$((pass + 1))
		echo "ok   memcheck $n ($(( $(date +%s) - t0 )) s): $syn"
	else
		fail=$((fail + 1))
		echo "FAIL memcheck $n (exit $r): $syn"
		grep -a -A3 '\[FAIL\]' "$logs/$n/out" | head -20
		for f in $bad; do sed -n '/ERROR SUMMARY\|Invalid\|uninitialised\|definitely lost/,+12p' "$f" | head -60; done
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
