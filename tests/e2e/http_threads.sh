#!/usr/bin/env bash
# http_threads.sh: eulernpud's HTTP threads are event loops, each serving
# many connections (--http-threads); whatever may wait (a long poll, an
# event stream between events, a job waited for in the queue) waits on a
# handler thread (server/http/http.c), so the loop keeps answering. With
# --http-threads 1 every connection shares one loop: three long polls, an
# event stream and a queued waited-for job wait at once while health and
# a job's state still answer. A job held by the daemon's test gate
# (EULERNPUD_HOLD, lib.sh's hold) keeps the one worker busy; nothing here
# assumes how long anything takes, and the waits end when the gate opens.
. "$(dirname "$0")/lib.sh"

U=http://localhost
MLP=$EX/tiny_mlp
enpu() { local d=$1; shift; EULERNPU_SERVER=unix:$TMP/$d.sock timeout 120 "$BIN/eulernpu" "$@"; }
export EULERNPUD_HOLD=$HOLD
hold
start_daemon l --workers 1 --http-threads 1 || { finish; exit 1; }
enpu l compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --out "$TMP/mlp" >/dev/null
LA=$(jget "$TMP/mlp/manifest.json" id)
LI=$(sha256sum "$MLP/input.npz" | cut -d' ' -f1)
dcurl l -o /dev/null -T "$MLP/input.npz" "$U/v1/blobs/$LI"
dcurl l -o "$TMP/sub.json" -d "{\"artifact\":\"$LA\",\"input\":\"$LI\"}" "$U/v1/jobs"
LJ=$(jget "$TMP/sub.json" id)
check "--http-threads 1: a job held running" wait_job l "$LJ" running
LW=()
# ?wait=15: were a wait on the loop, each would stall it that long
for i in 1 2 3; do dcurl l -o "$TMP/lp$i.json" "$U/v1/jobs/$LJ?wait=15" & LW+=($!); done
dcurl l -N -o "$TMP/l.sse" "$U/v1/jobs/$LJ/events" & LW+=($!)
dcurl l -o "$TMP/lq.json" -d "{\"artifact\":\"$LA\",\"input\":\"$LI\"}" "$U/v1/jobs?wait=15" & LW+=($!)
active() { curl -s --max-time 5 --unix-socket "$TMP/l.sock" "$U/metrics" |
	sed -n 's/^eulernpu_http_active \([0-9]*\)$/\1/p'; }
five_wait() { for _ in $(seq 100); do [ "$(active)" -ge 6 ] 2>/dev/null && return 0; sleep 0.1; done; return 1; }
check "--http-threads 1: five requests wait at once" five_wait
check "--http-threads 1: health answers while they wait" \
	curl -sf --max-time 5 --unix-socket "$TMP/l.sock" -o /dev/null "$U/v1/health"
curl -s --max-time 5 --unix-socket "$TMP/l.sock" -o "$TMP/ls.json" "$U/v1/jobs/$LJ"
expect_eq "--http-threads 1: so does the job's state" "$(jget "$TMP/ls.json" state)" running
release
for p in "${LW[@]}"; do wait "$p"; done
expect_eq "--http-threads 1: the long polls end with the job" \
	"$(jget "$TMP/lp1.json" state) $(jget "$TMP/lp2.json" state) $(jget "$TMP/lp3.json" state)" \
	"succeeded succeeded succeeded"
expect_match "--http-threads 1: the event stream ends at the final state" \
	"$(grep '^data:' "$TMP/l.sse" | tail -1)" '"state":"succeeded"'
expect_eq "--http-threads 1: the waited-for job ran after it" "$(jget "$TMP/lq.json" state)" succeeded
stop_daemon l
finish
