# lib.sh: shared harness of the end-to-end tests (sourced, bash).
#
#   . "$(dirname "$0")/lib.sh"
#   start_daemon a [--workers 2]   # eulernpud on $TMP/a.sock, cache $TMP/a.cache, log $TMP/a.log
#   check "compile works" "$BIN/eulernpu" compile ...
#   expect_eq "prints OK" "$out" "Compile  OK: ..."
#   finish                          # "N passed, M failed"; exit status 1 on failures
#
# Every daemon started here is stopped when the script exits, whatever the
# reason; daemons log to files and never hold the script's stdout/stderr.

set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${ENPU_BIN:-$ROOT/bin}
case "$BIN" in /*) ;; *) BIN=$ROOT/$BIN ;; esac
EX=$ROOT/examples
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/enpu-e2e.XXXXXX")
T_PASS=0
T_FAIL=0
declare -A T_PIDS=()
EXTRA_PIDS=()

cleanup() {
	local p
	for p in "${T_PIDS[@]}" "${EXTRA_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${T_PIDS[@]}" "${EXTRA_PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok()   { T_PASS=$((T_PASS + 1)); echo "ok - $1"; }
notok() { T_FAIL=$((T_FAIL + 1)); echo "not ok - $1"; }

# check DESC CMD...: passes when CMD exits 0 (output goes to $TMP/last.out/.err).
check() {
	local desc=$1; shift
	if "$@" >"$TMP/last.out" 2>"$TMP/last.err"; then
		ok "$desc"
	else
		notok "$desc (exit $?)"
		sed 's/^/    | /' "$TMP/last.out" "$TMP/last.err" | head -20
	fi
}

# check_fails DESC STATUS CMD...: passes when CMD exits with STATUS.
check_status() {
	local desc=$1 want=$2; shift 2
	"$@" >"$TMP/last.out" 2>"$TMP/last.err"
	local got=$?
	if [ "$got" = "$want" ]; then
		ok "$desc"
	else
		notok "$desc (exit $got, want $want)"
		sed 's/^/    | /' "$TMP/last.out" "$TMP/last.err" | head -20
	fi
}

expect_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		notok "$1"
		printf '    | got:  %s\n    | want: %s\n' "$2" "$3"
	fi
}

# expect_match DESC TEXT REGEX (grep -E on the text)
expect_match() {
	if printf '%s\n' "$2" | grep -Eq -- "$3"; then
		ok "$1"
	else
		notok "$1"
		printf '    | text: %s\n    | want /%s/\n' "$2" "$3" | head -20
	fi
}

# start_daemon NAME [eulernpud args...]
start_daemon() {
	local name=$1; shift
	local sock=$TMP/$name.sock
	"$BIN/eulernpud" --socket "$sock" --cache "$TMP/$name.cache" --log "$TMP/$name.log" \
		"$@" </dev/null >/dev/null 2>>"$TMP/$name.stderr" &
	T_PIDS[$name]=$!
	for _ in $(seq 200); do
		if curl -sf --max-time 2 --unix-socket "$sock" http://localhost/v1/health >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "${T_PIDS[$name]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "daemon '$name' did not start; its log:" >&2
	cat "$TMP/$name.log" "$TMP/$name.stderr" 2>/dev/null | tail -20 >&2
	return 1
}

# stop_daemon NAME: SIGTERM and wait (bounded), SIGKILL as a last resort.
stop_daemon() {
	local p=${T_PIDS[$1]:-}
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	unset "T_PIDS[$1]"
}

daemon_pid() { echo "${T_PIDS[$1]:-}"; }

# curl against a daemon's socket: dcurl NAME [curl args...] PATH
dcurl() {
	local name=$1; shift
	curl -s --max-time 60 --unix-socket "$TMP/$name.sock" "$@"
}

# make_slow_model DIR: a spec whose run takes seconds on this machine (120
# chained 640x640 matmuls; tests assert job states, never durations), with
# its weights.npz and input.npz.
make_slow_model() {
	mkdir -p "$1"
	"$PY" - "$1" <<'PYEOF'
import sys, numpy as np
out, n, k = sys.argv[1], 120, 640
rng = np.random.default_rng(0)
lines = ["eulernpu: 1", "name: slow_chain", "backend: cpu_ref", "inputs:",
         "  - {name: x, dtype: float32, shape: [%d, %d]}" % (k, k), "outputs: [y%d]" % n,
         "weights:", "  - {name: w, dtype: float32, shape: [%d, %d]}" % (k, k),
         "components:", "  - name: chain", "    ops:"]
prev = "x"
for i in range(1, n + 1):
    lines.append("      - {name: mm%d, op: matmul, in: [%s, w], out: y%d}" % (i, prev, i))
    prev = "y%d" % i
open(out + "/spec.yaml", "w").write("\n".join(lines) + "\n")
np.savez(out + "/weights.npz", w=(rng.standard_normal((k, k)) / np.sqrt(k)).astype(np.float32))
np.savez(out + "/input.npz", x=rng.standard_normal((k, k)).astype(np.float32))
PYEOF
}

finish() {
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" = 0 ]
}
