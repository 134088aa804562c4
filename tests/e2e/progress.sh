#!/usr/bin/env bash
# progress.sh: the client's progress output on a terminal. `script` (from
# util-linux) runs the client on a pseudo-terminal: a run or `jobs wait` on
# a slow job shows a status line on stderr, erased (ESC[K) before the final
# line, so what the terminal ends up showing equals the plain output; the
# same commands without a TTY, with --json, or when they end within a
# second print no progress at all. The transfer bar's layout is covered by
# tests/unit/test_cli_progress.c (a local upload rarely lasts a second).
. "$(dirname "$0")/lib.sh"

if ! command -v script >/dev/null 2>&1; then
	skip no-script "no 'script' (util-linux, Debian's bsdutils) to make a pseudo-terminal: progress output NOT tested"
	finish
	exit $?
fi

MLP=$EX/tiny_mlp
SOCK=$TMP/p.sock
enpu() { EULERNPU_SERVER=unix:$SOCK timeout 300 "$BIN/eulernpu" "$@"; }
# tty OUT CMD...: run the client on a pseudo-terminal; everything the
# terminal received (stdout and stderr, raw) goes to OUT.
tty() {
	local out=$1; shift
	local cmd="EULERNPU_SERVER=unix:$SOCK timeout 300 $BIN/eulernpu"
	for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
	TERM=dumb timeout 320 script -qefc "$cmd" /dev/null </dev/null >"$out"
}
# shown RAW: what a terminal ends up showing: per line, the text after the
# last carriage return, with ESC[K erasures removed.
shown() {
	"$PY" -c '
import sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
for line in raw.replace("\r\n", "\n").split("\n")[:-1] if raw.endswith("\n") else raw.replace("\r\n", "\n").split("\n"):
    print(line.split("\r")[-1].replace("\x1b[K", ""))' "$1"
}
has_esc() { grep -q $'\033\\[K' "$1"; }

# ---- a slow model (120 chained 640x640 matmuls, as in jobs.sh) ------------------
make_slow_model "$TMP/slow"
check "slow model generated" test -s "$TMP/slow/spec.yaml"

EULERNPUD_HOLD=$HOLD start_daemon p --workers 1 || { finish; exit 1; }
check "compile the slow model" enpu compile --spec "$TMP/slow/spec.yaml" --weights "$TMP/slow/weights.npz" --out "$TMP/slow.art"
check "compile tiny_mlp" enpu compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --out "$TMP/mlp"

# A job in front, held running (lib.sh's hold), keeps the worker busy, so
# the run below waits in the queue; the hold is released once the client
# has shown what is checked (or, where nothing is shown, once the server has
# had the job waiting for two seconds, longer than the client's one-second
# threshold), and then both run.
blocker() { hold; enpu run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" --detach; }
queued_for_2s() {   # a job has been queued for 2 s (the server's clock)
	curl -sf --max-time 10 --unix-socket "$SOCK" "http://localhost/v1/jobs?state=queued" |
		"$PY" -c 'import json,sys,time,datetime as dt
j = json.load(sys.stdin)["jobs"]
sys.exit(0 if j and time.time() - dt.datetime.fromisoformat(j[0]["created"].replace("Z", "+00:00")).timestamp() >= 2 else 1)'
}

# ---- run on a TTY: the wait status, then exactly the plain output ---------------
B1=$(blocker)
check "a job in front was submitted" test -n "$B1"
release_when grep -q 'queued, #1 in queue' "$TMP/run.tty"
tty "$TMP/run.tty" run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" --out "$TMP/r1.npz"
expect_eq "tty run: exit 0" "$?" 0
expect_match "tty run: the wait status names the job's state" "$(tr '\r' '\n' <"$TMP/run.tty")" \
	'^waiting for (the )?job[^:]*: (queued|running)'
expect_match "tty run: queue position while queued" "$(tr '\r' '\n' <"$TMP/run.tty")" \
	'^waiting for job [^:]+: queued, #1 in queue'
expect_match "tty run: elapsed seconds" "$(tr '\r' '\n' <"$TMP/run.tty")" ' · [0-9]+(s|m[0-9]{2}s)'
check "tty run: the status line is erased (ESC[K)" has_esc "$TMP/run.tty"
shown "$TMP/run.tty" >"$TMP/run.shown"

# ---- the same without a TTY: nothing on stderr, the same lines on stdout ---------
B2=$(blocker)
check "a second job in front was submitted" test -n "$B2"
release_when queued_for_2s
enpu run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" --out "$TMP/r2.npz" \
	>"$TMP/run.out" 2>"$TMP/run.err"
expect_eq "no tty: exit 0" "$?" 0
expect_eq "no tty: nothing on stderr" "$(wc -c <"$TMP/run.err")" 0
expect_match "no tty: the run line" "$(cat "$TMP/run.out")" '^Run      OK: 1 output tensor \(640, 640\)'
expect_eq "tty run: the terminal ends up showing exactly the plain output" \
	"$(cat "$TMP/run.shown")" "$(cat "$TMP/run.out")"
check "both runs wrote the same result" cmp "$TMP/r1.npz" "$TMP/r2.npz"

# ---- --json on a TTY: no progress ----------------------------------------------
B3=$(blocker)
check "a third job in front was submitted" test -n "$B3"
release_when queued_for_2s
tty "$TMP/json.tty" run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" --out "$TMP/r3.npz" --json
expect_eq "tty run --json: exit 0" "$?" 0
check_status "tty run --json: no status line" 1 has_esc "$TMP/json.tty"
check_status "tty run --json: no wait text" 1 grep -q 'waiting for' "$TMP/json.tty"

# ---- jobs wait on a TTY ---------------------------------------------------------
hold
J=$(enpu run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" --detach)
release_when grep -q "waiting for job $J" "$TMP/wait.tty"
tty "$TMP/wait.tty" jobs wait "$J"
expect_eq "tty jobs wait: exit 0" "$?" 0
expect_match "tty jobs wait: the status names the job" "$(tr '\r' '\n' <"$TMP/wait.tty")" \
	"^waiting for job $J: (queued|running)"
check "tty jobs wait: erased" has_esc "$TMP/wait.tty"
expect_match "tty jobs wait: the terminal shows just the final line" "$(shown "$TMP/wait.tty")" \
	"^$J succeeded in [0-9.]+ s\$"

# ---- fast commands on a TTY: no progress (under a second) -------------------------
tty "$TMP/fast.tty" jobs wait "$J"
expect_eq "tty jobs wait on a finished job: exit 0" "$?" 0
check_status "tty jobs wait on a finished job: no progress" 1 has_esc "$TMP/fast.tty"
expect_match "tty jobs wait on a finished job: the line" "$(shown "$TMP/fast.tty")" "^$J succeeded in"
tty "$TMP/mlp.tty" run --artifact "$TMP/mlp" --input "$MLP/input.npz" --out "$TMP/m.npz"
expect_eq "tty tiny_mlp run: exit 0" "$?" 0
check_status "tty tiny_mlp run: no progress" 1 has_esc "$TMP/mlp.tty"
check_status "tty tiny_mlp run: no wait text" 1 grep -q 'waiting for' "$TMP/mlp.tty"
expect_match "tty tiny_mlp run: the run line" "$(shown "$TMP/mlp.tty")" '^Run      OK: 1 output tensor \(1, 4\)'

stop_daemon p
finish
