#!/usr/bin/env bash
# ci.sh: a client CI can lean on. Exit 3 only for what a retry can fix (a
# queue-full daemon: 429 E0806 after the retries; a dead server), retries of
# 429/503 honouring Retry-After (seconds and HTTP dates; a fake server,
# tools/busy_server.py, answers busy a set number of times: the assertions
# are about the client's retry lines and request counts, never durations),
# which requests are retried, --retry/--retry-max-time/EULERNPU_RETRY and
# --json's silence, `version` against a dead server, and Ctrl-C on `run`
# (one: the job is cancelled; two: it is left running). TLS and token
# failures (exit 2) are in access.sh.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp
U=http://localhost
unset EULERNPU_SERVER EULERNPU_TOKEN EULERNPU_CACERT EULERNPU_RETRY EULERNPU_RETRY_MAX_TIME
export XDG_CONFIG_HOME=$TMP/xdg
BUSY=$ROOT/tests/e2e/tools/busy_server.py
N_BUSY=0

# Its jobs are held running (EULERNPUD_HOLD, fault.h) until cancelled: the
# queue-full and Ctrl-C cases never depend on how long a run takes.
hold
EULERNPUD_HOLD=$HOLD start_daemon a --workers 1 --max-queue 1 || { finish; exit 1; }
dcurl a -o "$TMP/backends.json" "$U/v1/backends"
check "the real answer to serve" test -s "$TMP/backends.json"

# busy PLAN: a fake server answering by PLAN (busy_server.py); sets B (its URL)
# and BLOG (its request log).
busy() {
	N_BUSY=$((N_BUSY + 1))
	local pf=$TMP/busy$N_BUSY.port
	BLOG=$TMP/busy$N_BUSY.log
	: >"$BLOG"
	"$PY" "$BUSY" "$pf" "$BLOG" "$TMP/backends.json" "$1" </dev/null >/dev/null 2>&1 &
	EXTRA_PIDS+=($!)
	for _ in $(seq 200); do [ -s "$pf" ] && break; sleep 0.05; done
	B=http://127.0.0.1:$(cat "$pf")
}
busy_lines() { grep -c '^server busy' "$TMP/last.err"; }

# ---- Retry-After honoured ------------------------------------------------------------------
busy 503:2,429:1
check "503 then 429, then an answer: exit 0" "$CLI" --server "$B" backends
expect_eq "one line per retry, with Retry-After's seconds" "$(grep '^server busy' "$TMP/last.err")" \
	"server busy (503), retrying in 2 s (1/3)
server busy (429), retrying in 1 s (2/3)"
expect_eq "three requests" "$(wc -l <"$BLOG")" 3
expect_match "the answer is printed" "$(cat "$TMP/last.out")" '^op +cpu_ref'

# The date is whole seconds, 3 s past the server's clock when it answers;
# libcurl subtracts its own clock, which may still be in the second the
# request began (a slow answer under ASan crosses one): 2, 3 or 4 s, never
# the 1 s of an unread header.
busy 429:date+3
check "Retry-After as an HTTP date: exit 0" "$CLI" --server "$B" backends
expect_match "an HTTP date is read as seconds from now" "$(grep '^server busy' "$TMP/last.err")" \
	'^server busy \(429\), retrying in [234] s \(1/3\)$'

busy 429:0
check "Retry-After 0: still one retry" "$CLI" --server "$B" backends
expect_eq "Retry-After 0: waits 1 s at least" "$(grep '^server busy' "$TMP/last.err")" \
	"server busy (429), retrying in 1 s (1/3)"

# ---- limits: --retry, EULERNPU_RETRY, the config file, --retry-max-time ---------------------
busy never
check_status "always busy: exit 3 after the retries" 3 "$CLI" --server "$B" --retry 2 backends
expect_eq "always busy: --retry 2 retries twice" "$(busy_lines) $(wc -l <"$BLOG")" "2 3"
expect_match "always busy: the last answer's error (E0806)" "$(grep -v '^server busy' "$TMP/last.err" | head -1)" \
	'^error\[E0806\]: job queue full'
check_status "--retry 0: no retry" 3 "$CLI" --retry=0 --server "$B" backends
expect_eq "--retry 0: one request, no line" "$(busy_lines)" 0
: >"$BLOG"
check_status "EULERNPU_RETRY=1" 3 env EULERNPU_RETRY=1 "$CLI" --server "$B" backends
expect_eq "EULERNPU_RETRY=1: one retry, two requests" "$(busy_lines) $(wc -l <"$BLOG")" "1 2"
mkdir -p "$XDG_CONFIG_HOME/eulernpu"
printf 'server: %s\nretry: 1\n' "$B" >"$XDG_CONFIG_HOME/eulernpu/config.yaml"
check_status "config file retry: 1" 3 "$CLI" backends
expect_eq "config file retry: 1: one retry" "$(busy_lines)" 1
check_status "config file retry: 1 with server, token and CA given elsewhere" 3 \
	env EULERNPU_TOKEN=x EULERNPU_CACERT="$TMP/none.pem" "$CLI" --server "$B" backends
expect_eq "config file retry: 1 still read" "$(busy_lines)" 1
check_status "--retry beats the config file" 3 "$CLI" --retry 2 backends
expect_eq "--retry 2 beats retry: 1" "$(busy_lines)" 2
rm -f "$XDG_CONFIG_HOME/eulernpu/config.yaml"
check_status "--retry-max-time 0.. bounds the retries (1 s waits, 1 s budget)" 3 \
	"$CLI" --server "$B" --retry 50 --retry-max-time 1 backends
expect_match "--retry-max-time 1: at most one retry" "$(busy_lines)" '^[01]$'
check_status "--json: no retry lines" 3 "$CLI" --server "$B" --retry 1 backends --json
expect_eq "--json: the retry happened, silently" "$(busy_lines) $(grep -c '^error\[E0806\]' "$TMP/last.err")" "0 1"
check_status "a bad --retry: exit 2" 2 "$CLI" --retry lots --server "$B" backends
expect_match "a bad --retry: says what it takes" "$(sed -n 2p "$TMP/last.err")" '--retry takes a whole number'
check_status "a bad EULERNPU_RETRY_MAX_TIME: exit 2" 2 env EULERNPU_RETRY_MAX_TIME=-1 "$CLI" --server "$B" backends

# only requests safe to send again: POST /v1/cache/gc is not retried
busy 503:1
check_status "POST /v1/cache/gc answered 503: not retried, exit 3" 3 "$CLI" --server "$B" cache gc
expect_eq "POST /v1/cache/gc: one request, no retry line" "$(busy_lines) $(cat "$BLOG")" "0 POST /v1/cache/gc"

# ---- a queue-full daemon: 429 E0806, exit 3 after the retries; room freed: success ----------
make_slow_model "$TMP/slow"
"$CLI" --server "unix:$TMP/a.sock" compile --spec "$TMP/slow/spec.yaml" --weights "$TMP/slow/weights.npz" \
	--out "$TMP/slow.art" >/dev/null 2>"$TMP/compile.err"
check "slow model compiled" test -s "$TMP/slow.art/manifest.json"
SA=$(jget "$TMP/slow.art/manifest.json" id)
SI=$(sha256sum "$TMP/slow/input.npz" | cut -d' ' -f1)
dcurl a -o /dev/null -T "$TMP/slow/input.npz" "$U/v1/blobs/$SI"
submit() {
	dcurl a -o "$TMP/sub.json" -d "{\"artifact\":\"$SA\",\"input\":\"$SI\"}" "$U/v1/jobs"
	jget "$TMP/sub.json" id
}
RUN_A=$(submit)
check "queue full: the first job runs" wait_job a "$RUN_A" running
QB=$(submit)
expect_eq "queue full: the second waits" "$(jget "$TMP/sub.json" state)" queued
check_status "queue full: run exits 3 after its retries" 3 env EULERNPU_SERVER="unix:$TMP/a.sock" \
	"$CLI" --retry 2 run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" --out "$TMP/x.npz"
expect_eq "queue full: two retry lines, Retry-After 1" "$(grep '^server busy' "$TMP/last.err")" \
	"server busy (429), retrying in 1 s (1/2)
server busy (429), retrying in 1 s (2/2)"
expect_match "queue full: E0806" "$(grep -v '^server busy' "$TMP/last.err" | head -1)" '^error\[E0806\]'

# room freed during the retries: the queued job is cancelled once the
# client has said it retries; its next try gets in
EULERNPU_SERVER="unix:$TMP/a.sock" "$CLI" --retry 100 --retry-max-time 600 run --detach \
	--artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" >"$TMP/room.out" 2>"$TMP/room.err" &
RP=$!
for _ in $(seq 600); do grep -q '^server busy' "$TMP/room.err" && break; sleep 0.1; done
expect_match "room freed: the client was retrying" "$(head -1 "$TMP/room.err")" '^server busy \(429\), retrying in 1 s \(1/100\)$'
dcurl a -X DELETE -o /dev/null "$U/v1/jobs/$QB"
wait "$RP"; rc=$?
expect_eq "room freed: the retry succeeds (exit 0)" "$rc" 0
ROOM=$(cat "$TMP/room.out")
expect_match "room freed: the job id printed" "$ROOM" '^[0-9a-f]{16,}$'
expect_match "room freed: the job is on the server" "$(jstate a "$ROOM")" "^(queued|running)$"
dcurl a -X DELETE -o /dev/null "$U/v1/jobs/$ROOM"
dcurl a -X DELETE -o /dev/null "$U/v1/jobs/$RUN_A"

# ---- version against a dead server ----------------------------------------------------------
check_status "version, dead socket: exit 3" 3 "$CLI" --server "unix:$TMP/none.sock" version
expect_match "version, dead socket: the client's version first" "$(head -1 "$TMP/last.out")" '^eulernpu [0-9]'
expect_match "version, dead socket: E0808" "$(head -1 "$TMP/last.err")" '^error\[E0808\]'
check_status "version, dead TCP port: exit 3" 3 "$CLI" --server "http://127.0.0.1:1" version
check_status "version --json, dead server: exit 3" 3 env EULERNPU_SERVER="unix:$TMP/none.sock" "$CLI" version --json
expect_eq "version --json, dead server: server null" "$(jget "$TMP/last.out" server)" null
check "version, live server: exit 0" "$CLI" --server "unix:$TMP/a.sock" version
expect_match "version, live server: both versions" "$(sed -n 2p "$TMP/last.out")" '^eulernpud [0-9]'

# ---- Ctrl-C on run ----------------------------------------------------------------------------
# run_bg NAME: `eulernpu run` of the slow model in the background (pid in RP);
# returns once its job runs (id in JID): the client hears Ctrl-C from its submit on
run_bg() {
	EULERNPU_SERVER="unix:$TMP/a.sock" "$CLI" run --artifact "$TMP/slow.art" --input "$TMP/slow/input.npz" \
		--out "$TMP/$1.npz" >"$TMP/$1.out" 2>"$TMP/$1.err" &
	RP=$!
	JID=
	for _ in $(seq 600); do
		dcurl a -o "$TMP/ls.json" "$U/v1/jobs?state=running"
		JID=$("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"]; print(j[0]["id"] if j else "")' "$TMP/ls.json")
		[ -n "$JID" ] && break
		sleep 0.1
	done
}
wait_job a "$RUN_A" cancelled >/dev/null
wait_job a "$ROOM" cancelled >/dev/null
run_bg int1
check "Ctrl-C: the job is running" test -n "$JID"
kill -INT "$RP"
wait "$RP"; rc=$?
expect_eq "Ctrl-C: exit 130" "$rc" 130
expect_match "Ctrl-C: names the job, cancelled" "$(cat "$TMP/int1.err")" "^job $JID: cancelled"
dcurl a -o /dev/null "$U/v1/jobs/$JID?wait=60"
expect_eq "Ctrl-C: cancelled on the server" "$(jstate a "$JID")" cancelled
check "Ctrl-C: no result written" test ! -e "$TMP/int1.npz"

run_bg int2
kill -INT "$RP"
for _ in $(seq 100); do grep -q 'interrupted; cancelling' "$TMP/int2.err" && break; sleep 0.05; done
kill -INT "$RP"
wait "$RP"; rc=$?
expect_eq "double Ctrl-C: exit 130" "$rc" 130
expect_match "double Ctrl-C: left running, how to follow it" "$(cat "$TMP/int2.err")" \
	"^job $JID: left running; follow it with \`eulernpu jobs wait $JID\`$"
expect_eq "double Ctrl-C: the job goes on" "$(jstate a "$JID")" running
dcurl a -X DELETE -o /dev/null "$U/v1/jobs/$JID"

finish
