#!/usr/bin/env bash
# faults.sh: crashes and full disks. The daemon is killed with SIGKILL at
# named fault points (EULERNPUD_FAULT, server/fault.h) inside an upload, a
# compile, a cache eviction and a result write, then restarted on the same
# cache: nothing partial is served, the cache's figures match its disk, gc
# --verify finds no damage, and the interrupted request, repeated, succeeds
# with byte-equal results. A board agent that accepts a job and hangs ends
# the job timed_out within --job-timeout. A cache on a full 4 MiB tmpfs
# answers 507 E0810, keeps serving reads, and recovers without a restart.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp
C=$EX/tiny_cnn
U=http://localhost
SMALL=$TMP/full.cache          # the tmpfs of the disk-full part
sha() { sha256sum "$1" | cut -c1-64; }
enpu() { local n=$1; shift; EULERNPU_SERVER=unix:$TMP/$n.sock timeout 60 "$CLI" "$@"; }
# jget FILE KEY... : the values at the dotted paths, space-separated
# code NAME [curl args] PATH: the HTTP status only (body in $TMP/body)
code() { local n=$1; shift; dcurl "$n" -o "$TMP/body" -w '%{http_code}' "$@"; }

faults_cleanup() {
	local p
	for p in "${T_PIDS[@]}" "${EXTRA_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	mountpoint -q "$SMALL" 2>/dev/null && umount -l "$SMALL"
	cleanup
}
trap faults_cleanup EXIT

# What is on a cache's disk, and whether any of it would be served while
# not complete: every cas/ file hashes to its name, every artifacts/<id>
# holds each listed file with its size and digest, every ac/ entry names an
# artifact that is there. Prints "problem: ..." lines, then one line of
# figures "blobs=N blob_bytes=B artifacts=A ac_entries=E tmp=T".
cat >"$TMP/disk.py" <<'PYEOF'
import hashlib, json, os, re, sys
root = sys.argv[1]
hexre = re.compile(r'^[0-9a-f]{64}$')
def digest(p):
    h = hashlib.sha256()
    with open(p, 'rb') as f:
        for b in iter(lambda: f.read(1 << 16), b''):
            h.update(b)
    return h.hexdigest()
blobs = nbytes = 0
for fan in sorted(os.listdir(root + '/cas')):
    d = root + '/cas/' + fan
    for name in sorted(os.listdir(d)):
        p = d + '/' + name
        if not hexre.match(name) or name[:2] != fan:
            print('problem: stray file in cas/:', fan + '/' + name)
        elif digest(p) != name:
            print('problem: partial or wrong blob', name, os.path.getsize(p), 'bytes')
        else:
            blobs += 1
            nbytes += os.path.getsize(p)
# artifacts/ and ac/ fan out like cas/: <2 hex>/<id>
def fanned(top):
    for fan in sorted(os.listdir(top)):
        if not os.path.isdir(top + '/' + fan) or len(fan) != 2:
            print('problem: stray entry in', top.rsplit('/', 1)[1] + '/:', fan)
            continue
        for name in sorted(os.listdir(top + '/' + fan)):
            if not hexre.match(name) or name[:2] != fan:
                print('problem: stray entry in', top.rsplit('/', 1)[1] + '/:', fan + '/' + name)
                continue
            yield name, top + '/' + fan + '/' + name
arts = []
for name, d in fanned(root + '/artifacts'):
    arts.append(name)
    try:
        m = json.load(open(d + '/manifest.json'))
    except Exception as e:
        print('problem: artifact', name[:12], 'manifest unreadable:', e)
        continue
    files = m['files']
    if isinstance(files, dict):
        files = [dict(path=k, **(v if isinstance(v, dict) else {'sha256': v})) for k, v in files.items()]
    for f in files:
        p = d + '/' + f['path']
        if not os.path.isfile(p):
            print('problem: artifact', name[:12], 'lacks', f['path'])
        elif ('bytes' in f and os.path.getsize(p) != f['bytes']) or digest(p) != f['sha256']:
            print('problem: artifact', name[:12], 'partial file', f['path'])
ac = 0
for name, p in fanned(root + '/ac'):
    t = open(p).read()
    if not re.match(r'^[0-9a-f]{64}\n$', t):
        print('problem: partial ac entry', name)
    elif t[:64] not in arts:
        print('problem: ac entry', name[:12], 'names an absent artifact', t[:12])
    else:
        ac += 1
tmp = sorted(os.listdir(root + '/tmp'))
for t in tmp:
    print('tmp:', t, os.path.getsize(root + '/tmp/' + t) if os.path.isfile(root + '/tmp/' + t) else 'dir')
print('blobs=%d blob_bytes=%d artifacts=%d ac_entries=%d tmp=%d' % (blobs, nbytes, len(arts), ac, len(tmp)))
PYEOF
disk() { "$PY" "$TMP/disk.py" "$TMP/$1.cache" >"$TMP/$1.disk" 2>&1; }
problems() { grep '^problem' "$TMP/$1.disk" | head -5; }
figures() { tail -1 "$TMP/$1.disk"; }
# The same figures as GET /v1/cache gives them (tmp is not counted there).
served() {
	dcurl "$1" "$U/v1/cache" |
		jexpr - '"blobs=%d blob_bytes=%d artifacts=%d ac_entries=%d" % (d["blobs"], d["blob_bytes"], d["artifacts"], d["ac_entries"])'
}

# start_fault NAME FAULT [eulernpud args]: a daemon armed at FAULT; it
# writes $TMP/NAME.marker when a thread reaches it.
start_fault() {
	local name=$1 f=$2; shift 2
	rm -f "$TMP/$name.marker"
	export EULERNPUD_FAULT=$f EULERNPUD_FAULT_FILE=$TMP/$name.marker
	start_daemon "$name" "$@"; local rc=$?
	unset EULERNPUD_FAULT EULERNPUD_FAULT_FILE
	return $rc
}
# wait_marker NAME: up to 20 s for the fault point; the marker holds the pid.
wait_marker() {
	for _ in $(seq 200); do
		[ -s "$TMP/$1.marker" ] && [ "$(cat "$TMP/$1.marker")" = "$(daemon_pid "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
# crash NAME [REQUEST_PID]: SIGKILL the daemon (and the request in flight).
crash() {
	local p
	p=$(daemon_pid "$1")
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	unset "T_PIDS[$1]"
	if [ -n "${2:-}" ]; then
		kill -KILL "$2" 2>/dev/null
		wait "$2" 2>/dev/null
	fi
	EXTRA_PIDS=()
}
# after_restart NAME: the checks every scenario makes once restarted.
after_restart() {
	local n=$1
	disk "$n"
	expect_eq "$n: restarted: nothing on disk that would be served incomplete" "$(problems "$n")" ""
	expect_match "$n: restarted: tmp/ emptied" "$(figures "$n")" ' tmp=0$'
	expect_eq "$n: restarted: GET /v1/cache = the disk" "$(served "$n")" "$(figures "$n" | sed 's/ tmp=.*//')"
	check "$n: restarted: cache gc --verify" enpu "$n" cache gc --verify --json
	expect_eq "$n: gc --verify: no integrity failure, nothing dropped" \
		"$(jget "$TMP/last.out" integrity_failures artifacts_dropped ac_dropped)" "0 0 0"
}

# ---- the reference: compile and run on a daemon nobody kills ------------------------------
start_daemon ref || { finish; exit 1; }
check "ref: compile tiny_mlp" enpu ref compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp"
check "ref: run tiny_mlp" enpu ref run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/ref.npz"
check "ref: equal to the golden" enpu ref compare --got "$TMP/ref.npz" --expected "$M/golden.npz" --exact
# two more inputs, for the disk-full part
"$PY" - "$TMP" <<'PYEOF'
import sys, numpy as np
for i in (2, 3):
    np.savez(f"{sys.argv[1]}/in{i}.npz", x=np.arange(8, dtype="<f4").reshape(1, 8) * i)
PYEOF
for i in 2 3; do
	check "ref: run input $i" enpu ref run --artifact "$TMP/mlp" --input "$TMP/in$i.npz" --out "$TMP/ref$i.npz"
done
ID=$(jget "$TMP/mlp/manifest.json" id)
R=$(sha "$TMP/ref.npz")
stop_daemon ref

# ---- kill -9 during an upload -------------------------------------------------------------
head -c $((2 << 20)) /dev/urandom >"$TMP/big"
D=$(sha "$TMP/big")
start_fault up upload || { finish; exit 1; }
curl -s --max-time 60 --unix-socket "$TMP/up.sock" -o /dev/null -X PUT --data-binary @"$TMP/big" \
	"$U/v1/blobs/$D" & req=$!
EXTRA_PIDS+=("$req")
check "upload: the fault point is reached" wait_marker up
expect_eq "upload: paused: GET of the blob 404" "$(code up "$U/v1/blobs/$D")" 404
expect_eq "upload: paused: HEAD of the blob 404" "$(code up -I "$U/v1/blobs/$D")" 404
crash up "$req"
disk up
expect_eq "upload: killed: nothing served incomplete" "$(problems up)" ""
expect_match "upload: killed: no blob stored" "$(figures up)" '^blobs=0 '
sz=$(sed -n 's/^tmp: .*\.up \([0-9]*\)$/\1/p' "$TMP/up.disk")
check "upload: killed: part of the body in tmp/ (${sz:-none} of $((2 << 20)) bytes)" \
	test -n "$sz" -a "${sz:-0}" -gt 0 -a "${sz:-0}" -lt $((2 << 20))
start_daemon up || { finish; exit 1; }
expect_eq "upload: restarted: GET 404" "$(code up "$U/v1/blobs/$D")" 404
expect_eq "upload: restarted: HEAD 404" "$(code up -I "$U/v1/blobs/$D")" 404
after_restart up
expect_eq "upload: repeated: 201" "$(code up -X PUT --data-binary @"$TMP/big" "$U/v1/blobs/$D")" 201
expect_eq "upload: then GET: the bytes" "$(dcurl up "$U/v1/blobs/$D" | sha256sum | cut -c1-64)" "$D"
expect_match "upload: HEAD: 200 with its length" \
	"$(dcurl up -I "$U/v1/blobs/$D" | tr -d '\r' | grep -iE '^(HTTP|content-length)' | tr '\n' ' ')" \
	"^HTTP/1.1 200 OK [Cc]ontent-[Ll]ength: $((2 << 20)) $"
stop_daemon up

# ---- kill -9 during a compile ------------------------------------------------------------
start_fault co compile || { finish; exit 1; }
enpu co compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/co.art" \
	>"$TMP/co.req" 2>&1 & req=$!
EXTRA_PIDS+=("$req")
check "compile: the fault point is reached" wait_marker co
expect_eq "compile: paused: the artifact 404" "$(code co "$U/v1/artifacts/$ID")" 404
expect_eq "compile: paused: no artifact, no action-cache entry" \
	"$(served co | sed 's/.* artifacts=/artifacts=/')" "artifacts=0 ac_entries=0"
crash co "$req"
disk co
expect_eq "compile: killed: nothing served incomplete" "$(problems co)" ""
expect_match "compile: killed: no artifact, no entry; the build in tmp/" "$(figures co)" \
	' artifacts=0 ac_entries=0 tmp=[1-9]'
start_daemon co || { finish; exit 1; }
expect_eq "compile: restarted: the artifact 404" "$(code co "$U/v1/artifacts/$ID")" 404
expect_eq "compile: restarted: its file 404" "$(code co "$U/v1/artifacts/$ID/files/graph.json")" 404
after_restart co
check "compile: repeated" enpu co compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/co.art"
expect_eq "compile: the same artifact id" "$(jget "$TMP/co.art/manifest.json" id)" "$ID"
check "compile: the same files" diff -r "$TMP/mlp" "$TMP/co.art"
check "compile: the run is byte-equal to the golden" enpu co run --artifact "$TMP/co.art" \
	--input "$M/input.npz" --out "$TMP/co.npz"
check "compile: compare --exact" enpu co compare --got "$TMP/co.npz" --expected "$M/golden.npz" --exact
disk co
expect_eq "compile: after the repeat: the disk is whole" "$(problems co)" ""
stop_daemon co

# ---- kill -9 during a result write ----------------------------------------------------------
start_fault re result || { finish; exit 1; }
check "result: compile (no fault there)" enpu re compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/re.art"
enpu re run --artifact "$TMP/re.art" --input "$M/input.npz" --out "$TMP/re.npz" >"$TMP/re.req" 2>&1 & req=$!
EXTRA_PIDS+=("$req")
check "result: the fault point is reached" wait_marker re
dcurl re -o "$TMP/re.jobs" "$U/v1/jobs"
read -r J jst <<<"$(jget "$TMP/re.jobs" jobs.0.id jobs.0.state)"
expect_eq "result: paused: the job is running" "$jst" running
expect_match "result: paused: GET its result is no 200" "$(code re "$U/v1/jobs/$J/result")" '^(404|409)$'
expect_eq "result: paused: the result blob 404" "$(code re "$U/v1/blobs/$R")" 404
crash re "$req"
check "result: killed: no result file written by the client" test ! -e "$TMP/re.npz"
disk re
expect_eq "result: killed: nothing served incomplete" "$(problems re)" ""
check "result: killed: the result was only in memory (no .npz in tmp/)" sh -c "! grep -q '^tmp: .*\\.npz ' '$TMP/re.disk'"
check "result: killed: not in cas/" test ! -e "$TMP/re.cache/cas/${R:0:2}/$R"
start_daemon re || { finish; exit 1; }
expect_eq "result: restarted: the job is unknown (404)" "$(code re "$U/v1/jobs/$J/result")" 404
expect_eq "result: restarted: E0800" "$(jget "$TMP/body" error.code)" E0800
expect_eq "result: restarted: the result blob 404" "$(code re "$U/v1/blobs/$R")" 404
after_restart re
check "result: repeated" enpu re run --artifact "$TMP/re.art" --input "$M/input.npz" --out "$TMP/re.npz"
check "result: compare --exact with the golden" enpu re compare --got "$TMP/re.npz" --expected "$M/golden.npz" --exact
check "result: byte-equal to the reference run" cmp "$TMP/re.npz" "$TMP/ref.npz"
expect_eq "result: now GET of the result blob: the bytes" "$(dcurl re "$U/v1/blobs/$R" | sha256sum | cut -c1-64)" "$R"
stop_daemon re

# ---- kill -9 during a cache eviction --------------------------------------------------------
# tiny_mlp compiled and run, then a 64 KiB blob past --cache-max makes room.
head -c 65536 /dev/urandom >"$TMP/b64k"
B=$(sha "$TMP/b64k")
start_fault ev evict --cache-max 70000 || { finish; exit 1; }
check "evict: compile" enpu ev compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/ev.art"
check "evict: run" enpu ev run --artifact "$TMP/ev.art" --input "$M/input.npz" --out "$TMP/ev.npz"
disk ev
before=$(figures ev)
curl -s --max-time 60 --unix-socket "$TMP/ev.sock" -o /dev/null -X PUT --data-binary @"$TMP/b64k" \
	"$U/v1/blobs/$B" & req=$!
EXTRA_PIDS+=("$req")
check "evict: the fault point is reached" wait_marker ev
expect_eq "evict: paused: GET /v1/cache = the disk" "$(served ev)" "$(disk ev; figures ev | sed 's/ tmp=.*//')"
crash ev "$req"
disk ev
expect_eq "evict: killed: nothing served incomplete" "$(problems ev)" ""
expect_eq "evict: killed: the new blob stored, one old one gone" \
	"$(figures ev | cut -d' ' -f1) $(test -e "$TMP/ev.cache/cas/${B:0:2}/$B" && echo new)" "${before%% *} new"
start_daemon ev --cache-max 70000 || { finish; exit 1; }
check "evict: restarted: the start-up pass ends (evicting false)" settled ev
held=$(served ev | sed 's/^blobs=[0-9]* blob_bytes=\([0-9]*\).*/\1/')
check "evict: restarted: within --cache-max ($held bytes) once it has" test "$held" -le 70000
after_restart ev
expect_match "evict: repeated: 200 or 201" "$(code ev -X PUT --data-binary @"$TMP/b64k" "$U/v1/blobs/$B")" '^20[01]$'
expect_eq "evict: then GET: the bytes" "$(dcurl ev "$U/v1/blobs/$B" | sha256sum | cut -c1-64)" "$B"
check "evict: the run, repeated" enpu ev run --artifact "$TMP/ev.art" --input "$M/input.npz" --out "$TMP/ev2.npz"
check "evict: compare --exact with the golden" enpu ev compare --got "$TMP/ev2.npz" --expected "$M/golden.npz" --exact
disk ev
expect_eq "evict: after the repeat: the disk is whole" "$(problems ev)" ""
expect_eq "evict: after the repeat: GET /v1/cache = the disk" "$(served ev)" "$(figures ev | sed 's/ tmp=.*//')"
stop_daemon ev

# ---- the start-up pass in the background: health answers while it runs ----------------------
# The same cache restarted with half the bound: the pass that brings it under runs after the
# daemon listens; paused at its first eviction, the daemon answers, and says it is evicting
# (a store past the bound would wait for the pass, as any store waits for an eviction).
start_fault ev evict --cache-max 4000 || { finish; exit 1; }
check "start-up pass: the fault point is reached (the daemon answers already)" wait_marker ev
expect_eq "start-up pass: paused: health 200" "$(code ev "$U/v1/health")" 200
expect_eq "start-up pass: paused: GET /v1/cache says evicting" \
	"$(dcurl ev "$U/v1/cache" | jget - evicting)" true
expect_eq "start-up pass: paused: GET /v1/cache = the disk" "$(served ev)" "$(disk ev; figures ev | sed 's/ tmp=.*//')"
expect_eq "start-up pass: paused: the listing is answered" "$(code ev "$U/v1/cache/entries?limit=5")" 200
expect_eq "start-up pass: paused: /metrics is answered" "$(code ev "$U/metrics")" 200
crash ev
start_daemon ev --cache-max 4000 || { finish; exit 1; }
check "start-up pass: restarted: it ends (evicting false)" settled ev
held=$(served ev | sed 's/^blobs=[0-9]* blob_bytes=\([0-9]*\).*/\1/')
check "start-up pass: restarted: within the smaller bound ($held bytes)" test "$held" -le 4000
after_restart ev
stop_daemon ev

# ---- kill -9 while a flat cache (the layout before fan-out directories) is migrated ----------
# ref's cache with ac/ and artifacts/ flattened, and two more action-cache entries: the
# daemon moves them at start-up, before it listens; killed after the first move, the next
# start moves the rest.
cp -a "$TMP/ref.cache" "$TMP/mg.cache" && rm -f "$TMP/mg.cache/lock"
for top in ac artifacts; do
	for e in "$TMP/mg.cache/$top"/??/*; do mv "$e" "$TMP/mg.cache/$top/"; done
	rmdir "$TMP/mg.cache/$top"/?? 2>/dev/null
done
K0=$(basename "$(ls "$TMP/mg.cache/ac"/* | head -1)")
for k in 1 2; do cp "$TMP/mg.cache/ac/$K0" "$TMP/mg.cache/ac/$(printf "$k%.0s" $(seq 64))"; done
flat() { find "$TMP/mg.cache/ac" "$TMP/mg.cache/artifacts" -mindepth 1 -maxdepth 1 -name '????????*' | wc -l; }
expect_eq "migrate: a flat cache of 3 entries and 1 artifact" "$(flat)" 4
rm -f "$TMP/mg.marker"
EULERNPUD_FAULT=migrate EULERNPUD_FAULT_FILE=$TMP/mg.marker "$BIN/eulernpud" --socket "$TMP/mg.sock" \
	--cache "$TMP/mg.cache" --log "$TMP/mg.log" </dev/null >/dev/null 2>>"$TMP/mg.stderr" &
T_PIDS[mg]=$!
check "migrate: the fault point is reached" wait_marker mg
crash mg
left=$(flat)
check "migrate: killed: one entry moved, the rest still flat ($left)" test "$left" -ge 1 -a "$left" -lt 4
start_daemon mg || { finish; exit 1; }
expect_eq "migrate: restarted: nothing flat left" "$(flat)" 0
check "migrate: the log says what moved" grep -q "into fan-out directories" "$TMP/mg.log"
after_restart mg
expect_eq "migrate: the 3 entries and the artifact are served" "$(served mg | sed 's/.* artifacts=/artifacts=/')" \
	"artifacts=1 ac_entries=3"
h0=$(dcurl mg "$U/v1/cache" | jget - ac_hits)
check "migrate: compile" enpu mg compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mg.art"
expect_eq "migrate: the compile is a hit of the migrated action cache" "$(dcurl mg "$U/v1/cache" | jget - ac_hits)" "$((h0 + 1))"
check "migrate: the same files" diff -r "$TMP/mlp" "$TMP/mg.art"
check "migrate: run by id" enpu mg run --artifact "$ID" --input "$M/input.npz" --out "$TMP/mg.npz"
check "migrate: byte-equal to the reference run" cmp "$TMP/mg.npz" "$TMP/ref.npz"
stop_daemon mg

# ---- kill -9 while an artifact is removed (cache rm) ---------------------------------------
start_fault dr drop || { finish; exit 1; }
check "drop: compile" enpu dr compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/dr.art"
enpu dr cache rm "$ID" >"$TMP/dr.req" 2>&1 & req=$!
EXTRA_PIDS+=("$req")
check "drop: the fault point is reached" wait_marker dr
expect_eq "drop: paused: the artifact is out of artifacts/ in one step (404)" \
	"$(code dr "$U/v1/artifacts/$ID/files/graph.json")" 404
crash dr "$req"
disk dr
expect_eq "drop: killed: nothing served incomplete" "$(problems dr)" ""
check "drop: killed: no partial directory under artifacts/" test ! -e "$TMP/dr.cache/artifacts/${ID:0:2}/$ID"
start_daemon dr || { finish; exit 1; }
expect_eq "drop: restarted: the artifact 404" "$(code dr "$U/v1/artifacts/$ID")" 404
after_restart dr
check "drop: compile, repeated" enpu dr compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/dr2.art"
expect_eq "drop: the same artifact id" "$(jget "$TMP/dr2.art/manifest.json" id)" "$ID"
check "drop: the run" enpu dr run --artifact "$TMP/dr2.art" --input "$M/input.npz" --out "$TMP/dr.npz"
check "drop: compare --exact with the golden" enpu dr compare --got "$TMP/dr.npz" --expected "$M/golden.npz" --exact
stop_daemon dr

# ---- a board agent that accepts a job and hangs ----------------------------------------------
# The board answers its health checks and GET of the job ("running") but the
# job never ends: only the lab's --job-timeout can end it.
printf 'tok-%s\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/tok"
chmod 600 "$TMP/tok"
start_fault bd board-run --role board --token-file "$TMP/tok" --workers 2 || { finish; exit 1; }
start_daemon lab --board "bd=unix:$TMP/bd.sock" --board-token-file "$TMP/tok" --board-health-interval 1 \
	--board-timeout 2 --board-backoff-max 2 --job-timeout 4 || { finish; exit 1; }
check "board-run: compile zynq_ps" enpu lab compile --spec "$M/spec.yaml" --weights "$M/weights.npz" \
	--backend zynq_ps --out "$TMP/z.art"
t0=$(date +%s.%N)
check_status "board-run: the run fails (exit 1)" 1 enpu lab run --artifact "$TMP/z.art" --input "$M/input.npz" \
	--out "$TMP/z1.npz" --timeout 30
t1=$(date +%s.%N)
expect_match "board-run: E0813, three lines" "$(head -1 "$TMP/last.err") $(wc -l <"$TMP/last.err")" \
	'^error\[E0813\]: job timed out 3$'
check "board-run: the board had accepted it and hung" wait_marker bd
check "board-run: ended within --job-timeout 4 s + 6 s ($("$PY" -c "print('%.1f' % ($t1 - $t0))") s)" \
	"$PY" -c "import sys; sys.exit(not ($t1 - $t0 < 10))"
dcurl lab -o "$TMP/tj.json" "$U/v1/jobs?state=timed_out"
expect_eq "board-run: the job: timed_out, failure timeout, E0813" \
	"$(jget "$TMP/tj.json" jobs.0.state jobs.0.failure jobs.0.error.code)" \
	"timed_out timeout E0813"
expect_eq "board-run: the lab keeps serving: health 200" "$(code lab "$U/v1/health")" 200
check "board-run: a second job on the same board succeeds" enpu lab run --artifact "$TMP/z.art" \
	--input "$M/input.npz" --out "$TMP/z2.npz"
check "board-run: byte-equal to the golden" enpu lab compare --got "$TMP/z2.npz" --expected "$M/golden.npz" --exact
stop_daemon lab
crash bd

# ---- a full disk: a cache on a 4 MiB tmpfs ---------------------------------------------------
head -c 100000 /dev/urandom >"$TMP/b100k"
B=$(sha "$TMP/b100k")
S=$(sha "$C/spec.yaml"); W=$(sha "$C/weights.npz"); I2=$(sha "$TMP/in2.npz")
mkdir -p "$SMALL"
# (never without the tmpfs: dd would fill the disk under it; its count stops at 8 MiB anyway)
if mount -t tmpfs -o size=4m,mode=0700 tmpfs "$SMALL"; then
	ok "disk full: a 4 MiB tmpfs as the cache"
	start_daemon full || { finish; exit 1; }
	check "full: compile tiny_mlp" enpu full compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/f.art"
	check "full: run tiny_mlp" enpu full run --artifact "$TMP/f.art" --input "$M/input.npz" --out "$TMP/f.npz"
	check "full: equal to the golden" enpu full compare --got "$TMP/f.npz" --expected "$M/golden.npz" --exact
	dcurl full -o "$TMP/fj.json" "$U/v1/jobs"
	FJ=$(jget "$TMP/fj.json" jobs.0.id)
	# what the full disk is asked for later, already here: tiny_cnn's spec and weights, a second input
	for f in "$C/spec.yaml" "$C/weights.npz" "$TMP/in2.npz"; do
		dcurl full -o /dev/null -X PUT --data-binary @"$f" "$U/v1/blobs/$(sha "$f")"
	done
	dd if=/dev/zero of="$SMALL/filler" bs=64k count=128 >/dev/null 2>&1
	expect_eq "full: the disk is full" "$(df --output=avail -B1 "$SMALL" | tail -1 | tr -d ' ')" 0
	st=()
	s=$(code full -X PUT --data-binary @"$TMP/b100k" "$U/v1/blobs/$B"); st+=("$s")
	expect_eq "full: PUT a blob: 507 E0810" "$s $(jget "$TMP/body" error.code)" "507 E0810"
	expect_match "full: ... with title, detail and fix" \
		"$(jget "$TMP/body" error.title error.message error.fix)" \
		'^server storage full or failing .*No space left on device.* free disk space'
	s=$(code full -H 'Content-Type: application/json' -d "{\"spec\":\"$S\",\"weights\":\"$W\"}" "$U/v1/compile"); st+=("$s")
	expect_eq "full: POST /v1/compile: 507 E0810" "$s $(jget "$TMP/body" error.code)" "507 E0810"
	s=$(code full -F "spec=@$C/spec.yaml" -F "weights=@$TMP/b100k" "$U/v1/compile"); st+=("$s")
	expect_eq "full: a multipart compile whose upload fails: 507 E0810" "$s $(jget "$TMP/body" error.code)" "507 E0810"
	s=$(code full -d "{\"artifact\":\"$ID\",\"input\":\"$I2\"}" "$U/v1/jobs?wait=30"); st+=("$s")
	expect_eq "full: a run whose result cannot be written: failed with E0810" \
		"$s $(jget "$TMP/body" state error.code)" "200 failed E0810"
	check_status "full: eulernpu compile: exit 3" 3 enpu full compile --spec "$C/spec.yaml" --weights "$C/weights.npz" --out "$TMP/fc.art"
	expect_match "full: compile: error[E0810], three lines, See:" \
		"$(head -1 "$TMP/last.err") $(wc -l <"$TMP/last.err") $(tail -1 "$TMP/last.err")" \
		'^error\[E0810\]: server storage full or failing 3 .*See: eulernpu explain E0810$'
	check_status "full: eulernpu run, new input (upload): exit 3" 3 enpu full run --artifact "$TMP/f.art" \
		--input "$TMP/in3.npz" --out "$TMP/f3.npz"
	expect_match "full: run: error[E0810], three lines" "$(head -1 "$TMP/last.err") $(wc -l <"$TMP/last.err")" \
		'^error\[E0810\]: server storage full or failing 3$'
	check_status "full: eulernpu run, input there (result write): exit 3" 3 enpu full run --artifact "$TMP/f.art" \
		--input "$TMP/in2.npz" --out "$TMP/f2.npz"
	expect_match "full: run: error[E0810]" "$(head -1 "$TMP/last.err") $(wc -l <"$TMP/last.err")" \
		'^error\[E0810\]: server storage full or failing 3$'
	check "full: no result file left by the failed runs" test ! -e "$TMP/f2.npz" -a ! -e "$TMP/f3.npz"
	# reads go on
	s=$(code full "$U/v1/health"); st+=("$s")
	expect_eq "full: GET /v1/health 200" "$s" 200
	s=$(code full "$U/v1/blobs/$R"); st+=("$s")
	expect_eq "full: GET an existing blob: 200, its bytes" "$s $(sha "$TMP/body")" "200 $R"
	s=$(code full "$U/v1/jobs/$FJ/result"); st+=("$s")
	expect_eq "full: GET an earlier job's result: 200, its bytes" "$s $(sha "$TMP/body")" "200 $R"
	s=$(code full "$U/v1/artifacts/$ID/files/graph.json"); st+=("$s")
	expect_eq "full: GET an artifact file: 200, its bytes" "$s $(sha "$TMP/body")" "200 $(sha "$TMP/mlp/graph.json")"
	expect_eq "full: never a 5xx but 507 (statuses: ${st[*]})" "$(printf '%s\n' "${st[@]}" | grep '^5' | grep -vc '^507$')" 0
	disk full
	expect_eq "full: nothing partial on disk" "$(problems full)" ""
	expect_match "full: nothing left in tmp/" "$(figures full)" ' tmp=0$'
	check "full: the new blob was not stored" test ! -e "$SMALL/cas/${B:0:2}/$B"
	# space returns: the same requests succeed, no restart
	rm -f "$SMALL/filler"
	expect_eq "space back: PUT the blob: 201" "$(code full -X PUT --data-binary @"$TMP/b100k" "$U/v1/blobs/$B")" 201
	expect_eq "space back: GET it: its bytes" "$(dcurl full "$U/v1/blobs/$B" | sha256sum | cut -c1-64)" "$B"
	check "space back: compile tiny_cnn" enpu full compile --spec "$C/spec.yaml" --weights "$C/weights.npz" --out "$TMP/fc.art"
	check "space back: run tiny_cnn" enpu full run --artifact "$TMP/fc.art" --input "$C/input.npz" --out "$TMP/fc.npz"
	check "space back: tiny_cnn equal to the golden" enpu full compare --got "$TMP/fc.npz" --expected "$C/golden.npz" --exact
	for i in 2 3; do
		check "space back: run input $i" enpu full run --artifact "$TMP/f.art" --input "$TMP/in$i.npz" --out "$TMP/f$i.npz"
		check "space back: input $i byte-equal to the reference" cmp "$TMP/f$i.npz" "$TMP/ref$i.npz"
	done
	disk full
	expect_eq "space back: the disk is whole" "$(problems full)" ""
	expect_eq "space back: GET /v1/cache = the disk" "$(served full)" "$(figures full | sed 's/ tmp=.*//')"
	stop_daemon full
	check "umount the tmpfs" umount "$SMALL"
else
	notok "disk full: cannot mount a tmpfs (root needed): the disk-full part did not run"
fi

# (the daemons stopped with SIGTERM: under ASan, their exit reports land here)
expect_eq "no sanitizer report from a daemon" \
	"$(grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP"/*.stderr 2>/dev/null)" ""

finish
