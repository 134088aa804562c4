# lib.sh: shared harness of the end-to-end tests (sourced, bash).
#
#   . "$(dirname "$0")/lib.sh"
#   start_daemon a [--workers 2]   # eulernpud on $TMP/a.sock, cache $TMP/a.cache, log $TMP/a.log
#   check "compile works" "$BIN/eulernpu" compile ...
#   expect_eq "prints OK" "$out" "Compile  OK: ..."
#   v=$(jget "$TMP/j.json" jobs.0.state)   # one value of a JSON document (see jget)
#   skip no-foo "foo is not installed"       # a skip, by an id of tests/skips.allow
#   start_board b1; kill_board b1    # a board agent on 127.0.0.1, token $TMP/tok
#   finish                          # "N passed, M failed" (+ "K skipped"); exit status 1 on failures
#
# A skip is never a pass. Outside CI it is reported ("skip - ID: text", and
# "K skipped" after the closing line); under CI=true a skip whose ID is not
# in tests/skips.allow (or $SKIPS_ALLOW) counts as a failure.
#
# A JSON read that meets a missing file, empty or invalid JSON, or a missing
# key fails loudly: jget prints why on stderr, returns 1, and records it, so
# the next check (ok, notok, expect_*, check*) or finish counts it as a
# failure even when the read ran inside $(...).
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
T_SKIP=0
T_JERR=$TMP/json.errors
SKIPS_ALLOW=${SKIPS_ALLOW:-$ROOT/tests/skips.allow}
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

# json_errors: JSON reads that failed since the last check count as failures.
json_errors() {
	[ -s "$T_JERR" ] || return 0
	local e
	while IFS= read -r e; do
		T_FAIL=$((T_FAIL + 1)); echo "not ok - JSON read failed: $e"
	done <"$T_JERR"
	: >"$T_JERR"
	return 1
}

ok() {
	if json_errors; then
		T_PASS=$((T_PASS + 1)); echo "ok - $1"
	else
		echo "    | (so this check does not count as passed: $1)"
	fi
}
notok() { json_errors; T_FAIL=$((T_FAIL + 1)); echo "not ok - $1"; }

# skip_allowed ID: ID has a line in the allow-list ("ID  reason").
skip_allowed() {
	[ -f "$SKIPS_ALLOW" ] && awk -v id="$1" '$1 == id { f = 1 } END { exit !f }' "$SKIPS_ALLOW"
}

# skip ID TEXT: a check that did not run. Reported, never a pass; under
# CI=true a failure unless ID is in the allow-list.
skip() {
	local id=$1 text=${2:-}
	echo "skip - $id: $text"
	if [ "${CI:-}" = true ] && ! skip_allowed "$id"; then
		notok "skip '$id' under CI=true, and '$id' is not in ${SKIPS_ALLOW#"$ROOT"/}"
	else
		T_SKIP=$((T_SKIP + 1))
	fi
}

# free_port: a TCP port free on 127.0.0.1 now, for a server the test starts.
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# nginx_head DIR: the start of an nginx.conf whose every file (pid, logs,
# temporary bodies) stays under DIR; the caller adds its server blocks and
# the closing brace. nginx's workers run as another user when the test is
# root: DIR and the test's directory are made 755.
nginx_head() {
	mkdir -p "$1"
	chmod 755 "$TMP" "$1"
	cat <<EOF
worker_processes 1;
error_log $1/error.log;
pid $1/nginx.pid;
events { worker_connections 64; }
http {
	access_log $1/access.log;
	client_body_temp_path $1/body;
	proxy_temp_path $1/proxy;
	fastcgi_temp_path $1/fastcgi;
	uwsgi_temp_path $1/uwsgi;
	scgi_temp_path $1/scgi;
EOF
}

# jget FILE|- PATH...: values of a JSON document (space-separated), strings
# bare, everything else as JSON (null prints "null"). PATH is dot-separated keys and list
# indexes; "*" maps the rest of the path over a list or object's values
# (the results space-separated), "#" is the length of a list or object, an
# empty PATH is the whole document. Fails (exit 1, the reason on stderr and
# recorded, see json_errors) on a missing file, empty or invalid JSON, a
# missing key or index, or a path through a scalar.
JGET_PY=$(cat <<'PYEOF'
import json, sys
if len(sys.argv) < 3:
    sys.exit("usage: jget FILE|- PATH...")
src, paths = sys.argv[1], sys.argv[2:]
try:
    text = sys.stdin.read() if src == "-" else open(src, encoding="utf-8").read()
except (OSError, UnicodeDecodeError) as e:
    sys.exit("cannot read: %s" % e)
if not text.strip():
    sys.exit("empty input, no JSON")
try:
    doc = json.loads(text)
except ValueError as e:
    sys.exit("invalid JSON: %s: %r" % (e, text[:80]))
def walk(v, keys, done):
    if not keys:
        return [v]
    k, rest = keys[0], keys[1:]
    here = ".".join(done + [k])
    if k == "#":
        if not isinstance(v, (list, dict)) or rest:
            raise LookupError("%s: '#' needs a list or an object, at the end" % here)
        return [len(v)]
    if k == "*":
        if isinstance(v, list):
            vals = v
        elif isinstance(v, dict):
            vals = list(v.values())
        else:
            raise LookupError("%s: not a list or an object" % here)
        return [x for i, e in enumerate(vals) for x in walk(e, rest, done + [str(i)])]
    if isinstance(v, list):
        try:
            i = int(k)
        except ValueError:
            raise LookupError("%s: a list has no key %r" % (here, k))
        if not -len(v) <= i < len(v):
            raise LookupError("%s: no index %d (length %d)" % (here, i, len(v)))
        return walk(v[i], rest, done + [k])
    if isinstance(v, dict):
        if k not in v:
            raise LookupError("%s: no such key (keys: %s)" % (here, ", ".join(sorted(v))[:120]))
        return walk(v[k], rest, done + [k])
    raise LookupError("%s: %s is not a list or an object" % (here, json.dumps(v)[:40]))
try:
    vals = [v for path in paths for v in walk(doc, [k for k in path.split(".") if k != ""], [])]
except LookupError as e:
    sys.exit(str(e))
print(" ".join(v if isinstance(v, str) else json.dumps(v) for v in vals))
PYEOF
)
jget() {
	local out
	if out=$("$PY" -c "$JGET_PY" "$@" 2>&1); then
		printf '%s
' "$out"
		return 0
	fi
	jerr "jget $*: $out"
}

# jexpr FILE|-... EXPR: the Python expression EXPR over the parsed document
# d (with several files: ds, the list of them, d the first; json and re
# available), printed as jget prints (True as true). Fails like jget, and on
# any exception EXPR raises (a KeyError, an IndexError...).
JEXPR_PY=$(cat <<'PYEOF'
import json, re, sys
if len(sys.argv) < 3:
    sys.exit("usage: jexpr FILE|-... EXPR")
ds = []
for src in sys.argv[1:-1]:
    try:
        text = sys.stdin.read() if src == "-" else open(src, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        sys.exit("%s: cannot read: %s" % (src, e))
    if not text.strip():
        sys.exit("%s: empty input, no JSON" % src)
    try:
        ds.append(json.loads(text))
    except ValueError as e:
        sys.exit("%s: invalid JSON: %s: %r" % (src, e, text[:80]))
try:
    v = eval(sys.argv[-1], {"json": json, "re": re, "d": ds[0], "ds": ds})
except Exception as e:
    sys.exit("%s: %s" % (type(e).__name__, e))
print(v if isinstance(v, str) else json.dumps(v))
PYEOF
)
jexpr() {
	local out
	if out=$("$PY" -c "$JEXPR_PY" "$@" 2>&1); then
		printf '%s
' "$out"
		return 0
	fi
	jerr "jexpr $*: $out"
}

# jerr MESSAGE: a failed JSON read: on stderr, and recorded for json_errors.
jerr() {
	echo "$1" >&2
	echo "$1" | head -1 >>"$T_JERR"
	return 1
}

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

# start_fronted_board NAME [eulernpud args...]: a board agent "bd" (token
# $TMP/tok, written here) and daemon NAME fronting it as board "b", with
# EULERNPU_SERVER set to NAME and the board up (up to 10 s): zynq_ps and
# fpga_board jobs run there. 1 when a daemon does not start.
start_fronted_board() {
	local name=$1; shift
	printf 'tok-%s-%s\n' "$name" "$$" >"$TMP/tok"
	chmod 600 "$TMP/tok"
	start_daemon bd --role board --listen 127.0.0.1:0 --port-file "$TMP/bd.port" \
		--token-file "$TMP/tok" --workers 1 || return 1
	start_daemon "$name" --board "b=http://127.0.0.1:$(cat "$TMP/bd.port")" \
		--board-token-file "$TMP/tok" --board-health-interval 1 "$@" || return 1
	export EULERNPU_SERVER=unix:$TMP/$name.sock
	for _ in $(seq 100); do
		[ "$(dcurl "$name" http://localhost/v1/boards | jget - boards.0.state)" = up ] && break
		sleep 0.1
	done
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

# settled NAME: up to 60 s for the daemon's eviction passes (the start-up
# one runs in the background) to end: GET /v1/cache says evicting false.
settled() {
	for _ in $(seq 600); do
		[ "$(curl -sf --max-time 5 --unix-socket "$TMP/$1.sock" http://localhost/v1/cache |
			"$PY" -c 'import json, sys; print(json.load(sys.stdin)["evicting"])' 2>/dev/null)" = False ] &&
			return 0
		sleep 0.1
	done
	return 1
}

# curl against a daemon's socket: dcurl NAME [curl args...] PATH
dcurl() {
	local name=$1; shift
	curl -s --max-time 60 --unix-socket "$TMP/$name.sock" "$@"
}

# jstate DAEMON ID [FIELD]: a field of the job (its state by default)
jstate() { dcurl "$1" -o "$TMP/js.json" "http://localhost/v1/jobs/$2"; jget "$TMP/js.json" "${3:-state}"; }
# wait_job DAEMON ID STATE: poll until the job is in STATE, up to 120 s
wait_job() {
	for _ in $(seq 1200); do
		[ "$(jstate "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# start_board NAME [PORT [ARGS...]]: a board agent on 127.0.0.1 (port 0 = a
# free one) whose token is the one in $TMP/tok (the test writes it, mode
# 600); its port in $TMP/NAME.port, its pid in T_PIDS[NAME].
start_board() {
	local name=$1 port=${2:-0}
	shift; [ $# -gt 0 ] && shift
	rm -f "$TMP/$name.port"
	"$BIN/eulernpud" --role board --listen "127.0.0.1:$port" --port-file "$TMP/$name.port" \
		--token-file "$TMP/tok" --cache "$TMP/$name.cache" --log "$TMP/$name.log" --workers 1 \
		"$@" </dev/null >/dev/null 2>>"$TMP/$name.stderr" &
	T_PIDS[$name]=$!
	disown "${T_PIDS[$name]}"   # no "Killed" notice when a test kills it
	for _ in $(seq 200); do
		if [ -s "$TMP/$name.port" ] &&
		   curl -sf --max-time 2 "http://127.0.0.1:$(cat "$TMP/$name.port")/v1/health" >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "${T_PIDS[$name]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "board '$name' did not start" >&2
	tail -5 "$TMP/$name.log" "$TMP/$name.stderr" >&2
	return 1
}
bport() { cat "$TMP/$1.port"; }
# kill_board NAME: SIGKILL, gone within 5 s.
kill_board() {
	local p=${T_PIDS[$1]:-}
	[ -n "$p" ] || return 0
	kill -KILL "$p" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	unset "T_PIDS[$1]"
}
# The daemon's job gate (EULERNPUD_HOLD, server/fault.h): a daemon started
# with EULERNPUD_HOLD=$HOLD keeps every job it takes running, before its
# first op, while the file $HOLD exists. hold creates it, release removes
# it; release_when CMD... removes it in the background once CMD succeeds
# (polled, bounded at 300 s), so a test can let jobs end at the moment it
# has seen what it waited for, never after a guessed delay.
HOLD=$TMP/hold
hold() { : >"$HOLD"; }
release() { rm -f "$HOLD"; }
release_when() {
	( for _ in $(seq 3000); do "$@" >/dev/null 2>&1 && break; sleep 0.1; done; rm -f "$HOLD" ) &
	EXTRA_PIDS+=($!)
}

# make_slow_model DIR: a spec whose run takes a second or more on this
# machine (120 chained 640x640 matmuls), with its weights.npz and
# input.npz. Tests that need a job to stay running hold it (above); none
# relies on how long this one takes.
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
	json_errors
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_SKIP" = 0 ] || echo "$T_SKIP skipped"
	[ "$T_FAIL" = 0 ]
}
