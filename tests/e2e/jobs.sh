#!/usr/bin/env bash
# jobs.sh: the job queue of eulernpud end to end: queue full (429 +
# Retry-After), priorities (queue positions, then start order), cancel of a
# queued and of a running job, timeouts in the queue and while running,
# list filters, the server-sent event stream, retention (--job-ttl,
# --job-history), and the client's `jobs ls|show|wait|cancel` and
# `run --detach|--json|--priority`. A job held by the daemon's test gate
# (EULERNPUD_HOLD, lib.sh's hold and server/fault.h: a job stays running while the
# file exists) keeps the single worker busy; removing the file lets it end.
# Nothing here assumes how long anything takes: states are polled with
# generous bounds and every assertion is about order or state.
. "$(dirname "$0")/lib.sh"

U=http://localhost
MLP=$EX/tiny_mlp

sha() { sha256sum "$1" | cut -d' ' -f1; }
enpu() { local d=$1; shift; EULERNPU_SERVER=unix:$TMP/$d.sock timeout 120 "$BIN/eulernpu" "$@"; }
# submit DAEMON ART INPUT [extra JSON fields]: the new job's id
submit() {
	dcurl "$1" -o "$TMP/sub.json" -d "{\"artifact\":\"$2\",\"input\":\"$3\"${4:+,$4}}" "$U/v1/jobs"
	jget "$TMP/sub.json" id
}
# final DAEMON ID OUT: long-poll until the job ends (bounded), its JSON in OUT
final() {
	for _ in $(seq 10); do
		dcurl "$1" -o "$3" "$U/v1/jobs/$2?wait=30"
		case "$(jget "$3" state)" in queued|running|"") ;; *) return 0 ;; esac
	done
	return 1
}
# compile_in DAEMON SPEC WEIGHTS OUTDIR [--backend B]: the artifact id
compile_in() {
	local d=$1 s=$2 w=$3 o=$4; shift 4
	enpu "$d" compile --spec "$s" --weights "$w" --out "$o" "$@" >/dev/null 2>"$TMP/compile.err" || return 1
	jget "$o/manifest.json" id
}
# upload DAEMON FILE: PUT the blob, print its digest
upload() {
	local h; h=$(sha "$2")
	dcurl "$1" -o /dev/null -T "$2" "$U/v1/blobs/$h"
	echo "$h"
}

# ---- the slow model, and the gate that holds jobs running ---------------------------------
make_slow_model "$TMP/slow"
check "slow model generated" test -s "$TMP/slow/spec.yaml"
export EULERNPUD_HOLD=$HOLD
hold

# ---- queue full: 429 + Retry-After -------------------------------------------------------------
start_daemon f --workers 1 --max-queue 1 || { finish; exit 1; }
SA=$(compile_in f "$TMP/slow/spec.yaml" "$TMP/slow/weights.npz" "$TMP/slow.f")
SI=$(upload f "$TMP/slow/input.npz")
check "slow model compiled" test -n "$SA"
A=$(submit f "$SA" "$SI")
check "queue full: the first job runs" wait_job f "$A" running
B=$(submit f "$SA" "$SI")
expect_eq "queue full: the second waits" "$(jget "$TMP/sub.json" state) $(jget "$TMP/sub.json" position)" "queued 1"
st=$(dcurl f -D "$TMP/h429" -o "$TMP/e429.json" -w '%{http_code}' -d "{\"artifact\":\"$SA\",\"input\":\"$SI\"}" "$U/v1/jobs")
expect_eq "queue full: 429" "$st" 429
expect_eq "queue full: E0806" "$(jget "$TMP/e429.json" error.code)" E0806
expect_match "queue full: Retry-After" "$(tr -d '\r' <"$TMP/h429")" '^Retry-After: [0-9]+$'

# ---- cancel a queued job, then a finished one (409) ----------------------------------------------
st=$(dcurl f -X DELETE -o "$TMP/c1.json" -w '%{http_code}' "$U/v1/jobs/$B")
expect_eq "cancel queued: 200, cancelled at once" "$st $(jget "$TMP/c1.json" state)" "200 cancelled"
expect_eq "cancel queued: never started" "$(jget "$TMP/c1.json" started)" null
expect_eq "cancel queued: failure cancelled" "$(jget "$TMP/c1.json" failure)" cancelled
st=$(dcurl f -X DELETE -o "$TMP/c2.json" -w '%{http_code}' "$U/v1/jobs/$B")
expect_eq "cancel a finished job: 409" "$st" 409
expect_match "cancel a finished job: says so" "$(jget "$TMP/c2.json" error.message)" "already finished \(cancelled\)"
expect_eq "cancel unknown job: 404" "$(dcurl f -X DELETE -o /dev/null -w '%{http_code}' "$U/v1/jobs/0123456789abcdef")" 404

# ---- cancel a running job: it stops between ops --------------------------------------------------
check_status "jobs cancel (running): exit 0" 0 enpu f jobs cancel "$A"
expect_match "jobs cancel (running): stops at its next op" "$(cat "$TMP/last.out")" "^$A (cancelling|cancelled)"
check "cancel running: the job ends" final f "$A" "$TMP/ca.json"
expect_eq "cancel running: state cancelled" "$(jget "$TMP/ca.json" state)" cancelled
expect_eq "cancel running: it had started" "$(jexpr "$TMP/ca.json" 'd["started"] is not None')" true
expect_match "cancel running: stopped before an op" "$(jget "$TMP/ca.json" error.message)" "cancelled while running .*before op 'mm[0-9]+'"
check_status "jobs wait on a cancelled job: exit 1" 1 enpu f jobs wait "$A"
expect_match "jobs wait on a cancelled job: its error" "$(head -1 "$TMP/last.err")" '^error\[E0807\]'
check_status "jobs cancel of a finished job: exit 2" 2 enpu f jobs cancel "$A"
stop_daemon f

# ---- timeouts: while running (--job-timeout) and in the queue (a job's "timeout") ---------------------
start_daemon t --workers 1 --job-timeout 1 || { finish; exit 1; }
TA=$(compile_in t "$TMP/slow/spec.yaml" "$TMP/slow/weights.npz" "$TMP/slow.t")
TI=$(upload t "$TMP/slow/input.npz")
J=$(submit t "$TA" "$TI")
expect_eq "job timeout: the job says its timeout" "$(jget "$TMP/sub.json" timeout)" 1
check "timeout while running: the job ends" final t "$J" "$TMP/t1.json"
expect_eq "timeout while running: timed_out" "$(jget "$TMP/t1.json" state)" timed_out
expect_eq "timeout while running: it had started" "$(jexpr "$TMP/t1.json" 'd["started"] is not None')" true
expect_eq "timeout while running: E0813, failure timeout" \
	"$(jget "$TMP/t1.json" error.code) $(jget "$TMP/t1.json" failure)" "E0813 timeout"
check_status "jobs wait on a timed-out job: exit 1" 1 enpu t jobs wait "$J"
expect_match "jobs wait on a timed-out job: E0813" "$(head -1 "$TMP/last.err")" '^error\[E0813\]'
stop_daemon t

start_daemon q --workers 1 || { finish; exit 1; }
QA=$(compile_in q "$TMP/slow/spec.yaml" "$TMP/slow/weights.npz" "$TMP/slow.q")
QI=$(upload q "$TMP/slow/input.npz")
O1=$(submit q "$QA" "$QI")
check "timeout in queue: a slow job runs" wait_job q "$O1" running
O2=$(submit q "$QA" "$QI")
O3=$(submit q "$QA" "$QI")
# behind three slow runs, a job that may wait 1 s times out in the queue
QJ=$(submit q "$QA" "$QI" '"timeout":1,"priority":"low"')
expect_eq "timeout in queue: capped timeout shown" "$(jget "$TMP/sub.json" timeout)" 1
check "timeout in queue: the job ends" final q "$QJ" "$TMP/t2.json"
expect_eq "timeout in queue: timed_out" "$(jget "$TMP/t2.json" state)" timed_out
expect_eq "timeout in queue: never started" "$(jget "$TMP/t2.json" started)" null
expect_match "timeout in queue: says it waited" "$(jget "$TMP/t2.json" error.message)" "waiting in the queue"
expect_eq "a job's timeout is capped by --job-timeout" \
	"$(submit q "$QA" "$QI" '"timeout":99999' >/dev/null; jget "$TMP/sub.json" timeout)" 600
expect_eq "a bad priority: 400" "$(dcurl q -o /dev/null -w '%{http_code}' -d "{\"artifact\":\"$QA\",\"input\":\"$QI\",\"priority\":\"urgent\"}" "$U/v1/jobs")" 400
for j in $(dcurl q "$U/v1/jobs?state=queued,running" | jget - 'jobs.*.id'); do
	dcurl q -X DELETE -o /dev/null "$U/v1/jobs/$j"
done
check "timeout in queue: the rest cancelled" final q "$O1" "$TMP/o1.json"
stop_daemon q

# ---- daemon p: events, priorities, lists, the client -------------------------------------------------
start_daemon p --workers 1 || { finish; exit 1; }
PA=$(compile_in p "$TMP/slow/spec.yaml" "$TMP/slow/weights.npz" "$TMP/slow.p")
PI=$(upload p "$TMP/slow/input.npz")
MA=$(compile_in p "$MLP/spec.yaml" "$MLP/weights.npz" "$TMP/mlp.p")
MI=$(upload p "$MLP/input.npz")
check "tiny_mlp compiled" test -n "$MA"

# SSE: a tiny job queued behind a slow one: queued -> running -> succeeded
S1=$(submit p "$PA" "$PI")
check "events: a slow job runs" wait_job p "$S1" running
S2=$(submit p "$MA" "$MI")
expect_eq "events: the tiny job is queued" "$(jget "$TMP/sub.json" state)" queued
# The stream is live: a reader cut off while the job still waits (held) has
# its first event already.
curl -sN --max-time 1 --unix-socket "$TMP/p.sock" -o "$TMP/sse.part" "$U/v1/jobs/$S2/events"; rc=$?
expect_eq "events: the stream stays open while the job waits" "$rc" 28
expect_match "events: streamed before the job ends" "$(cat "$TMP/sse.part")" '"state": ?"queued"'
release
curl -sN --max-time 120 --unix-socket "$TMP/p.sock" -D "$TMP/sse.h" -o "$TMP/sse.out" "$U/v1/jobs/$S2/events"
expect_match "events: text/event-stream" "$(tr -d '\r' <"$TMP/sse.h")" '^Content-Type: text/event-stream'
expect_eq "events: queued, running, succeeded in order" \
	"$(grep '^data: ' "$TMP/sse.out" | sed 's/^data: //' | paste -sd, | sed 's/.*/[&]/' | jget - '*.state')" \
	"queued running succeeded"
expect_eq "events: one 'event: state' line each" "$(grep -c '^event: state$' "$TMP/sse.out")" 3
check "events: the slow job succeeded" final p "$S1" "$TMP/s1.json"
expect_eq "events: slow job state" "$(jget "$TMP/s1.json" state)" succeeded
curl -sN --max-time 30 --unix-socket "$TMP/p.sock" -o "$TMP/sse2.out" "$U/v1/jobs/$S2/events"
expect_eq "events of a finished job: its final state alone" \
	"$(grep -c '^data: ' "$TMP/sse2.out") $(grep '^data: ' "$TMP/sse2.out" | sed 's/^data: //' | jget - state)" \
	"1 succeeded"
expect_eq "events of an unknown job: 404" "$(dcurl p -o /dev/null -w '%{http_code}' "$U/v1/jobs/0123456789abcdef/events")" 404

# priorities: tiny jobs queued behind a slow one; positions follow priority, then FIFO
hold
P0=$(submit p "$PA" "$PI")
check "priorities: a slow job runs" wait_job p "$P0" running
L1=$(submit p "$MA" "$MI" '"priority":"low"')
N1=$(submit p "$MA" "$MI")
H1=$(submit p "$MA" "$MI" '"priority":"high"')
L2=$(submit p "$MA" "$MI" '"priority":"low"')
H2=$(submit p "$MA" "$MI" '"priority":"high"')
dcurl p -o "$TMP/ql.json" "$U/v1/jobs?state=queued"
pos_of() { jexpr "$TMP/ql.json" "[j['position'] for j in d['jobs'] if j['id'] == '$1'][0]"; }
expect_eq "priorities: positions high, high, normal, low, low" \
	"$(pos_of "$H1") $(pos_of "$H2") $(pos_of "$N1") $(pos_of "$L1") $(pos_of "$L2")" "1 2 3 4 5"
expect_eq "priorities: the list shows each job's priority" \
	"$(jget "$TMP/ql.json" jobs.0.priority) $(jget "$TMP/ql.json" jobs.1.priority)" "high low"
expect_eq "priorities: ETA known (averages of past runs) and growing with the position" \
	"$(jexpr "$TMP/ql.json" '(lambda e: len(e) == 5 and all(isinstance(x, (int, float)) and x > 0 for x in e) and e == sorted(e))(
		[j["eta"] for j in sorted(d["jobs"], key=lambda j: j["position"])])')" true
expect_eq "running job: no position" "$(jstate p "$P0" position)" null
check "jobs ls: a table" enpu p jobs ls --state queued,running
expect_match "jobs ls: header" "$(head -1 "$TMP/last.out")" '^ID +STATE +BACKEND +PRIORITY +POS/ETA +CREATED +SECONDS$'
expect_match "jobs ls: the queued high job, position 1" "$(grep "^$H1 " "$TMP/last.out")" "^$H1 +queued +cpu_ref +high +#1 "
expect_eq "jobs ls: six rows" "$(tail -n +2 "$TMP/last.out" | wc -l)" 6
dcurl p -X DELETE -o /dev/null "$U/v1/jobs/$P0"
release
for j in "$H1" "$H2" "$N1" "$L1" "$L2"; do final p "$j" "$TMP/pr-$j.json"; done
check "cancel running: the slow job ends" final p "$P0" "$TMP/p0.json"
expect_eq "cancel running (2): cancelled" "$(jget "$TMP/p0.json" state)" cancelled
expect_eq "priorities: all five succeeded" \
	"$(for j in "$H1" "$H2" "$N1" "$L1" "$L2"; do jget "$TMP/pr-$j.json" state; done | sort -u)" succeeded
expect_eq "priorities: each started after the one before it finished (high, high, normal, low, low)" \
	"$(jexpr "$TMP/pr-$H1.json" "$TMP/pr-$H2.json" "$TMP/pr-$N1.json" "$TMP/pr-$L1.json" "$TMP/pr-$L2.json" \
		'all(a["finished"] <= b["started"] for a, b in zip(ds, ds[1:]))')" true

# list filters
NA=$(compile_in p "$MLP/spec.yaml" "$MLP/weights.npz" "$TMP/mlp.npu" --backend npu_sim)
NJ=$(submit p "$NA" "$MI")
check "npu_sim job done" final p "$NJ" "$TMP/nj.json"
dcurl p -o "$TMP/l1.json" "$U/v1/jobs?backend=npu_sim"
expect_eq "list ?backend=npu_sim: that job alone" "$(jget "$TMP/l1.json" 'jobs.*.id')" "$NJ"
dcurl p -o "$TMP/l2.json" "$U/v1/jobs?state=cancelled"
expect_eq "list ?state=cancelled: the cancelled one" "$(jget "$TMP/l2.json" 'jobs.*.id')" "$P0"
dcurl p -o "$TMP/l3.json" "$U/v1/jobs?limit=2"
expect_eq "list ?limit=2: the two newest, newest first" "$(jget "$TMP/l3.json" 'jobs.*.id')" "$NJ $H2"
dcurl p -o "$TMP/l4.json" "$U/v1/jobs?state=succeeded,cancelled&backend=cpu_ref"
expect_eq "list: two states and a backend" "$(jexpr "$TMP/l4.json" '"%d %s %s" % (len(d["jobs"]), sorted(set(j["state"] for j in d["jobs"])), set(j["backend"] for j in d["jobs"]))')" \
	"8 ['cancelled', 'succeeded'] {'cpu_ref'}"
expect_eq "list ?state=bogus: 400" "$(dcurl p -o "$TMP/e.json" -w '%{http_code}' "$U/v1/jobs?state=bogus")" 400
expect_match "list ?state=bogus: names the states" "$(jget "$TMP/e.json" error.message)" "'bogus' is not a job state"
expect_eq "list ?limit=0: 400" "$(dcurl p -o /dev/null -w '%{http_code}' "$U/v1/jobs?limit=0")" 400
check "jobs ls --state queued: none" enpu p jobs ls --state queued
expect_eq "jobs ls --state queued: says so" "$(cat "$TMP/last.out")" "no jobs"
check "jobs ls --json: one document" sh -c "EULERNPU_SERVER=unix:$TMP/p.sock '$BIN/eulernpu' jobs ls --json --limit 3 | '$PY' -c 'import json,sys; assert len(json.load(sys.stdin)[\"jobs\"]) == 3'"
check "jobs show" enpu p jobs show "$NJ"
expect_match "jobs show: state" "$(grep '^state ' "$TMP/last.out")" '^state +succeeded$'
check_status "jobs show: unknown id exits 2" 2 enpu p jobs show 0123456789abcdef
check_status "jobs: unknown subcommand exits 2" 2 enpu p jobs frob

# jobs wait, run --detach, run --json, run --priority
check_status "jobs wait on a succeeded job: exit 0" 0 enpu p jobs wait "$NJ"
D=$(enpu p run --artifact "$TMP/mlp.p" --input "$MLP/input.npz" --detach --priority high 2>"$TMP/d.err"); rc=$?
expect_eq "run --detach: exit 0" "$rc" 0
expect_match "run --detach: the job id alone" "$D" '^[0-9a-f]{16}$'
check_status "run --detach, then jobs wait: exit 0" 0 enpu p jobs wait "$D" --timeout 60
expect_eq "run --detach: the job ran at high priority" "$(jstate p "$D" priority)" high
check "run --json" enpu p run --artifact "$TMP/mlp.p" --input "$MLP/input.npz" --out "$TMP/r.npz" --json
expect_eq "run --json: one document, the succeeded job" \
	"$(jget "$TMP/last.out" state priority)" "succeeded normal"
check "run --json: the result written" test -s "$TMP/r.npz"
check_status "run --priority urgent: exit 2" 2 enpu p run --artifact "$TMP/mlp.p" --input "$MLP/input.npz" --out "$TMP/r.npz" --priority urgent
check_status "run --detach with --out: exit 2" 2 enpu p run --artifact "$TMP/mlp.p" --input "$MLP/input.npz" --out "$TMP/r.npz" --detach
stop_daemon p

# ---- retention: --job-ttl and --job-history; the blobs stay -------------------------------------------
start_daemon r --workers 1 --job-ttl 2 || { finish; exit 1; }
RA=$(compile_in r "$MLP/spec.yaml" "$MLP/weights.npz" "$TMP/mlp.r")
RI=$(upload r "$MLP/input.npz")
dcurl r -o "$TMP/rj.json" -d "{\"artifact\":\"$RA\",\"input\":\"$RI\"}" "$U/v1/jobs?wait=60"
RJ=$(jget "$TMP/rj.json" id)
RES=$(jget "$TMP/rj.json" result)
expect_match "--job-ttl: the job succeeded with a result" "$(jget "$TMP/rj.json" state) $RES" '^succeeded [0-9a-f]{64}$'
gone() { for _ in $(seq 300); do [ "$(dcurl "$1" -o /dev/null -w '%{http_code}' "$U/v1/jobs/$2")" = 404 ] && return 0; sleep 0.1; done; return 1; }
check "--job-ttl 2: the finished job is forgotten" gone r "$RJ"
expect_eq "--job-ttl: its result blob stays" "$(dcurl r -o /dev/null -w '%{http_code}' "$U/v1/blobs/$RES")" 200
stop_daemon r
start_daemon h --workers 1 --job-history 2 || { finish; exit 1; }
HA=$(compile_in h "$MLP/spec.yaml" "$MLP/weights.npz" "$TMP/mlp.h")
HI=$(upload h "$MLP/input.npz")
H_1=$(submit h "$HA" "$HI"); final h "$H_1" "$TMP/h1.json"
H_2=$(submit h "$HA" "$HI"); final h "$H_2" "$TMP/h2.json"
H_3=$(submit h "$HA" "$HI"); final h "$H_3" "$TMP/h3.json"
check "--job-history 2: the oldest is forgotten" gone h "$H_1"
expect_eq "--job-history 2: the two newest stay" \
	"$(jstate h "$H_2") $(jstate h "$H_3")" "succeeded succeeded"
stop_daemon h

finish
