#!/usr/bin/env bash
# run.sh [-j N] [NAME...]: mutation testing. Each tests/mutants/NAME.patch
# plants one small bug; for each (all by default), N at a time (nproc by
# default), this makes a clean copy of the tree (the files git knows, as they
# are in the working tree, plus a copy of build/ and bin/ with their mtimes so
# that make only recompiles the patched file and relinks), applies the patch,
# builds what its tests need (CI=true: -Werror), runs the tests named by its
# "# kill:" lines and deletes the copy. A mutant is killed when one of its
# tests fails; it survives when all pass; a patch that does not apply or a
# build that fails is an ERROR. Prints one line per mutant, the survivors,
# then "N passed, M failed" (passed = killed), and exits 1 when any mutant
# survived or errored. Needs the normal build first (make tests).
#
# A mutant file:
#   # mutant: one line saying what the planted bug is
#   # kill: unit test_compare                (build/tests/test_compare)
#   # kill: unit test_kernels avgpool/*      (with criterion --filter)
#   # kill: e2e hostile.sh                   (tests/e2e/hostile.sh)
#   diff --git a/common/compare.c b/common/compare.c
#   ...                                      (as git diff prints it; patch -p1)
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
MDIR=$ROOT/tests/mutants
JOBS=$(nproc 2>/dev/null || echo 2)
UNIT_TIMEOUT=${MUTANT_UNIT_TIMEOUT:-300}
E2E_TIMEOUT=${MUTANT_E2E_TIMEOUT:-600}

usage() { echo "usage: tests/mutants/run.sh [-j N] [NAME...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	-j) [ $# -ge 2 ] || usage; JOBS=$2; shift 2 ;;
	-j*) JOBS=${1#-j}; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
case "$JOBS" in ''|*[!0-9]*|0) usage ;; esac

names=()
if [ $# -gt 0 ]; then
	for a in "$@"; do a=${a##*/}; names+=("${a%.patch}"); done
else
	for f in "$MDIR"/*.patch; do
		[ -e "$f" ] || continue
		f=${f##*/}; names+=("${f%.patch}")
	done
fi
if [ ${#names[@]} = 0 ]; then
	echo "no mutants in tests/mutants/"; echo "0 passed, 0 failed"; exit 0
fi

for f in bin/eulernpud bin/eulernpu build/libeulernpu.a build/libsrv.a build/libcli.a; do
	if [ ! -e "$f" ]; then
		echo "run.sh: $f is missing: build the tree first (make tests), or use make mutants" >&2
		exit 2
	fi
done

# The make that may have started us must not leak its flags (SAN=1, -j,
# jobserver descriptors) into the builds of the copies.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS

WORK=$(mktemp -d "${TMPDIR:-/tmp}/enpu-mutants.XXXXXX")
PGIDS=()
cleanup() {
	local p
	trap - EXIT INT TERM
	for p in "${PGIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One snapshot of the tree; every mutant starts from a copy of it (cp -a
# keeps the mtimes, so the copied objects stay newer than their sources).
# The copy holds what any build needs; the test binaries (113 MB) are kept
# apart, and a mutant's copy gets only those its kill lines run; the npm
# trees (the OpenAPI linter's, the browser's for page.sh) are linked, not
# copied: 200 MB less to copy per mutant.
mkdir -p "$WORK/base" "$WORK/res" "$WORK/tests"
git ls-files -z --cached --others --exclude-standard |
	tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$WORK/base"
tar -cf - --exclude=build/npm --exclude=build/npm-browser --exclude=build/tests build bin |
	tar -xf - -C "$WORK/base"
mkdir -p "$WORK/base/build/tests"
tar -C build/tests -cf - . | tar -xf - -C "$WORK/tests"
for f in build/npm build/npm-browser; do
	[ -e "$f" ] && ln -s "$ROOT/$f" "$WORK/base/$f"
done

# run_one NAME: writes "$WORK/res/NAME" = "killed|survived|error<TAB>line".
run_one() {
	local name=$1 patch=$MDIR/$1.patch dir=$WORK/m.$1 log=$WORK/m.$1.log
	local start=$SECONDS kills=() k kind what filt targets=() files=() f r t
	local res line
	finish() {   # $1 = killed|survived|error, $2 = the line
		printf '%s\t%s\n' "$1" "$2" >"$WORK/res/$name"
		echo "$2"
		rm -rf "$dir"
	}
	if [ ! -f "$patch" ]; then finish error "ERROR    $name: no tests/mutants/$name.patch"; return; fi
	mapfile -t kills < <(sed -n 's/^# kill:[[:space:]]*//p' "$patch")
	if [ ${#kills[@]} = 0 ]; then finish error "ERROR    $name: no '# kill:' line"; return; fi
	for k in "${kills[@]}"; do
		read -r kind what filt <<<"$k"
		case "$kind" in
		unit) [ -f "tests/unit/$what.c" ] || { finish error "ERROR    $name: no unit test $what"; return; }
		      targets+=("build/tests/$what") ;;
		e2e)  [ -f "tests/e2e/$what" ] || { finish error "ERROR    $name: no e2e script $what"; return; }
		      targets+=(bin/eulernpud bin/eulernpu) ;;
		*)    finish error "ERROR    $name: bad kill line '$k'"; return ;;
		esac
	done
	cp -a "$WORK/base" "$dir"
	for t in "${targets[@]}"; do   # its test binaries, as built (make relinks what changes)
		case "$t" in build/tests/*) cp -a "$WORK/tests/${t#build/tests/}" "$WORK/tests/${t#build/tests/}.d" \
			"$dir/build/tests/" 2>/dev/null ;; esac
	done
	if ! (cd "$dir" && patch -p1 -N -t -s --fuzz=0 --no-backup-if-mismatch -r - <"$patch") >"$log" 2>&1; then
		finish error "ERROR    $name: patch does not apply: $(grep -v '^$' "$log" | head -1)"; return
	fi
	mapfile -t files < <(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patch")
	for f in "${files[@]}"; do touch "$dir/$f"; done
	mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)
	if ! make -C "$dir" --no-print-directory CI=true "${targets[@]}" >"$log" 2>&1; then
		finish error "ERROR    $name: build fails: $(grep -m1 -E 'error|Error' "$log")"; return
	fi
	res=survived
	for k in "${kills[@]}"; do
		read -r kind what filt <<<"$k"
		t=$SECONDS
		if [ "$kind" = unit ]; then
			local fa=()
			[ -n "$filt" ] && fa=(--filter "$filt")
			(cd "$dir" && timeout --foreground -k 10 "$UNIT_TIMEOUT" "build/tests/$what" --jobs 2 "${fa[@]}") >"$log" 2>&1; r=$?
			# criterion's boxfort may fail to spawn a test process on a
			# loaded machine: the harness, not a kill; run it again serially.
			if [ "$r" != 0 ] && grep -q 'Could not spawn test instance' "$log"; then
				(cd "$dir" && timeout --foreground -k 10 "$UNIT_TIMEOUT" "build/tests/$what" --jobs 1 "${fa[@]}") >"$log" 2>&1; r=$?
			fi
		else
			(cd "$dir" && ENPU_BIN=bin timeout --foreground -k 10 "$E2E_TIMEOUT" bash "tests/e2e/$what") >"$log" 2>&1; r=$?
		fi
		if [ "$r" != 0 ]; then
			res=killed
			line="killed   $name  by $kind $what${filt:+ $filt}$([ "$r" = 124 ] && echo ' (timeout)') ($((SECONDS - start)) s)"
			break
		fi
	done
	[ "$res" = survived ] &&
		line="SURVIVED $name  ($(sed -n 's/^# mutant:[[:space:]]*//p' "$patch" | head -1)) ($((SECONDS - start)) s)"
	finish "$res" "$line"
}

T0=$SECONDS
echo "mutants: ${#names[@]}, $JOBS at a time"
# Job control: each mutant runs in its own process group, which cleanup
# kills whole (its make, tests and the daemons they started).
set -m
for n in "${names[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	bash -c "$(declare -f run_one); WORK='$WORK' MDIR='$MDIR' UNIT_TIMEOUT=$UNIT_TIMEOUT E2E_TIMEOUT=$E2E_TIMEOUT; run_one '$n'" &
	PGIDS+=("$!")
done
wait

killed=0 bad=0 survivors=()
for n in "${names[@]}"; do
	st=$(cut -f1 "$WORK/res/$n" 2>/dev/null || echo error)
	case "$st" in
	killed) killed=$((killed + 1)) ;;
	survived) bad=$((bad + 1)); survivors+=("$n") ;;
	*) bad=$((bad + 1)); [ -e "$WORK/res/$n" ] || echo "ERROR    $n: no result" ;;
	esac
done
echo "total $((SECONDS - T0)) s"
if [ ${#survivors[@]} -gt 0 ]; then
	echo "survivors:"
	for n in "${survivors[@]}"; do echo "  $n"; done
fi
echo "$killed passed, $bad failed"
[ "$bad" = 0 ]
