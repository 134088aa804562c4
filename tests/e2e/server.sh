#!/usr/bin/env bash
# server.sh: eulernpud end to end, driven with curl over a temporary Unix
# socket and over TCP (127.0.0.1, port 0 + --port-file): health, backends,
# blobs, compile (multipart, action cache), artifacts, jobs, compare, errors,
# import between two daemons, determinism across worker counts, restart.
. "$(dirname "$0")/lib.sh"

MLP=$EX/tiny_mlp
U=http://localhost

# jget FILE KEY.PATH: a JSON value (strings bare, others as JSON)
sha() { sha256sum "$1" | cut -d' ' -f1; }
# st NAME OUT [curl args...]: HTTP status of a request to daemon NAME, body to OUT
st() { local n=$1 o=$2; shift 2; dcurl "$n" -o "$o" -w '%{http_code}' "$@"; }

# ---- flags -------------------------------------------------------------------
"$BIN/eulernpud" --help >"$TMP/help.out" 2>"$TMP/help.err"; rc=$?
expect_eq "--help exits 0" "$rc" 0
expect_match "--help documents --idle-exit on stdout" "$(cat "$TMP/help.out")" "--idle-exit SECONDS"
"$BIN/eulernpud" --workers zero >"$TMP/bad.out" 2>"$TMP/bad.err"; rc=$?
expect_eq "bad flag exits 2" "$rc" 2
expect_eq "bad flag: three lines on stderr" "$(wc -l <"$TMP/bad.err")" 3
expect_match "bad flag: E0100" "$(head -1 "$TMP/bad.err")" "^error\[E0100\]"
expect_eq "bad flag: nothing on stdout" "$(wc -c <"$TMP/bad.out")" 0

# ---- daemon A: Unix socket ------------------------------------------------------
start_daemon a --workers 1 --max-upload 200000 --pid-file "$TMP/a.pid" || { finish; exit 1; }
expect_eq "socket is mode 0600" "$(stat -c %a "$TMP/a.sock")" 600
expect_eq "pid file holds the pid" "$(cat "$TMP/a.pid")" "$(daemon_pid a)"

expect_eq "health 200" "$(st a "$TMP/h.json" $U/v1/health)" 200
expect_eq "health status ok" "$(jget "$TMP/h.json" status)" ok
expect_eq "health workers" "$(jget "$TMP/h.json" workers)" 1
expect_match "health lists cpu_ref" "$(jget "$TMP/h.json" backends)" '"cpu_ref"'

expect_eq "backends 200" "$(st a "$TMP/b.json" $U/v1/backends)" 200
expect_eq "backends: 4 backends" "$(jget "$TMP/b.json" backends)" '["cpu_ref", "npu_sim", "zynq_ps", "fpga_board"]'
expect_eq "backends: matmul on cpu_ref" "$(jget "$TMP/b.json" ops.0.backends.cpu_ref)" true

# ---- blobs --------------------------------------------------------------------------
printf 'hello' >"$TMP/hello.txt"
H=$(sha "$TMP/hello.txt")
Z=0000000000000000000000000000000000000000000000000000000000000000
st a "$TMP/m.json" -H 'Content-Type: application/json' -d "{\"digests\":[\"$H\",\"$Z\"]}" $U/v1/blobs/missing >/dev/null
expect_eq "blobs/missing lists both" "$(jget "$TMP/m.json" missing)" "[\"$H\", \"$Z\"]"
expect_eq "HEAD missing blob 404" "$(dcurl a -I -o /dev/null -w '%{http_code}' $U/v1/blobs/$H)" 404
expect_eq "PUT blob 201" "$(st a "$TMP/p.json" -T "$TMP/hello.txt" $U/v1/blobs/$H)" 201
expect_eq "PUT blob again 200" "$(st a "$TMP/p.json" -T "$TMP/hello.txt" $U/v1/blobs/$H)" 200
expect_eq "GET blob bytes" "$(dcurl a $U/v1/blobs/$H)" hello
expect_match "HEAD blob has Content-Length 5" "$(dcurl a -I $U/v1/blobs/$H | tr -d '\r')" "^Content-Length: 5$"
st a "$TMP/m.json" -d "{\"digests\":[\"$H\",\"$Z\"]}" $U/v1/blobs/missing >/dev/null
expect_eq "blobs/missing after upload" "$(jget "$TMP/m.json" missing)" "[\"$Z\"]"
expect_eq "blobs/missing bad digest 400" "$(st a "$TMP/e.json" -d '{"digests":["xyz"]}' $U/v1/blobs/missing)" 400
expect_eq "PUT wrong digest 422" "$(st a "$TMP/e.json" -T "$TMP/hello.txt" $U/v1/blobs/$Z)" 422
expect_eq "PUT wrong digest: E0805" "$(jget "$TMP/e.json" error.code)" E0805
expect_eq "PUT non-digest path 400" "$(st a "$TMP/e.json" -T "$TMP/hello.txt" $U/v1/blobs/abc)" 400
head -c 300000 /dev/zero >"$TMP/big.bin"
expect_eq "PUT over --max-upload 413" "$(st a "$TMP/e.json" -T "$TMP/big.bin" $U/v1/blobs/$(sha "$TMP/big.bin"))" 413
expect_eq "PUT over --max-upload: E0802" "$(jget "$TMP/e.json" error.code)" E0802
expect_eq "PUT chunked over --max-upload 413" \
	"$(st a "$TMP/e.json" -H 'Transfer-Encoding: chunked' -T - $U/v1/blobs/$(sha "$TMP/big.bin") <"$TMP/big.bin")" 413

# ---- validate + compile --------------------------------------------------------------------
expect_eq "validate raw YAML 200" "$(st a "$TMP/v.json" --data-binary @"$MLP/spec.yaml" "$U/v1/validate?name=spec.yaml")" 200
expect_eq "validate: 5 operators" "$(jget "$TMP/v.json" operators)" 5
sed 's/shape: \[8, 16\]/shape: [8, 17]/' "$MLP/spec.yaml" >"$TMP/bad.yaml"
expect_eq "validate error 422" "$(st a "$TMP/e.json" -F spec=@"$TMP/bad.yaml" $U/v1/validate)" 422
expect_match "validate error: code and file:line" "$(jget "$TMP/e.json" error.code) $(jget "$TMP/e.json" error.where)" "^E02[0-9][0-9] bad.yaml:[0-9]+"

expect_eq "compile (multipart) 200" \
	"$(st a "$TMP/c1.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" $U/v1/compile)" 200
ID=$(jget "$TMP/c1.json" artifact)
expect_match "compile gives an artifact id" "$ID" '^[0-9a-f]{64}$'
expect_eq "first compile: cached false" "$(jget "$TMP/c1.json" cached)" false
st a "$TMP/c2.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" $U/v1/compile >/dev/null
expect_eq "second compile: cached true" "$(jget "$TMP/c2.json" cached)" true
expect_eq "second compile: same id" "$(jget "$TMP/c2.json" artifact)" "$ID"
expect_eq "compile: operators" "$(jget "$TMP/c2.json" operators)" 5
SPEC_D=$(sha "$MLP/spec.yaml"); W_D=$(sha "$MLP/weights.npz")
st a "$TMP/c3.json" -d "{\"spec\":\"$SPEC_D\",\"weights\":\"$W_D\"}" $U/v1/compile >/dev/null
expect_eq "compile by digests (JSON): cached, same id" "$(jget "$TMP/c3.json" cached) $(jget "$TMP/c3.json" artifact)" "true $ID"
expect_eq "compile with an unknown blob 409" "$(st a "$TMP/e.json" -d "{\"spec\":\"$Z\",\"weights\":\"$W_D\"}" $U/v1/compile)" 409
expect_eq "compile with an unknown blob: missing lists it" "$(jget "$TMP/e.json" missing)" "[\"$Z\"]"

# ---- artifacts ---------------------------------------------------------------------------------
expect_eq "GET artifact manifest 200" "$(st a "$TMP/manifest.json" $U/v1/artifacts/$ID)" 200
expect_eq "manifest digest as compile said" "$(sha "$TMP/manifest.json")" \
	"$(jexpr "$TMP/c1.json" '[f["sha256"] for f in d["files"] if f["path"] == "manifest.json"][0]')"
expect_eq "GET artifact file 200" "$(st a "$TMP/graph.json" $U/v1/artifacts/$ID/files/graph.json)" 200
expect_eq "artifact file digest matches manifest" "$(sha "$TMP/graph.json")" \
	"$(jexpr "$TMP/manifest.json" '[f["sha256"] for f in d["files"] if f["path"] == "graph.json"][0]')"
expect_eq "unlisted artifact file 404" "$(st a "$TMP/e.json" $U/v1/artifacts/$ID/files/nope.json)" 404
expect_eq "path traversal 404" "$(st a "$TMP/e.json" --path-as-is $U/v1/artifacts/$ID/files/../../ac)" 404

# ---- jobs -----------------------------------------------------------------------------------------
expect_eq "run (multipart, ?wait) 200" \
	"$(st a "$TMP/j1.json" -F artifact=$ID -F input=@"$MLP/input.npz" "$U/v1/jobs?wait=30")" 200
J1=$(jget "$TMP/j1.json" id)
expect_eq "job succeeded" "$(jget "$TMP/j1.json" state)" succeeded
expect_eq "job outputs" "$(jget "$TMP/j1.json" outputs)" '[{"name": "logits", "shape": [1, 4]}]'
expect_eq "GET result 200" "$(st a "$TMP/r1.npz" $U/v1/jobs/$J1/result)" 200
expect_eq "result digest as the job says" "$(sha "$TMP/r1.npz")" "$(jget "$TMP/j1.json" result)"
st a "$TMP/j2.json" -F artifact=$ID -F input=@"$MLP/input.npz" "$U/v1/jobs" >/dev/null
J2=$(jget "$TMP/j2.json" id)
expect_eq "GET job ?wait 200" "$(st a "$TMP/j2b.json" "$U/v1/jobs/$J2?wait=30")" 200
st a "$TMP/r2.npz" $U/v1/jobs/$J2/result >/dev/null
check "second run: same result bytes" cmp "$TMP/r1.npz" "$TMP/r2.npz"
expect_eq "report 200" "$(st a "$TMP/rep.json" $U/v1/jobs/$J1/report)" 200
expect_eq "report: the run's report.json" "$(jget "$TMP/rep.json" format) $(jget "$TMP/rep.json" backend)" "eulernpu-report cpu_ref"
expect_eq "report: the bytes the job's digest names" "$(sha "$TMP/rep.json")" "$(jget "$TMP/j1.json" report)"
expect_eq "report: names the artifact" "$(jget "$TMP/rep.json" artifact)" "$ID"
expect_eq "a cpu_ref job has no npu summary" "$(jexpr "$TMP/j1.json" '"npu" in d')" false
expect_eq "unknown job 404" "$(st a "$TMP/e.json" $U/v1/jobs/0123456789abcdef)" 404
expect_eq "unknown artifact 404" \
	"$(st a "$TMP/e.json" -F artifact=$Z -F input=@"$MLP/input.npz" "$U/v1/jobs")" 404
expect_eq "unknown artifact: E0800" "$(jget "$TMP/e.json" error.code)" E0800
st a "$TMP/jbad.json" -F artifact=$ID -F input=@"$TMP/hello.txt" "$U/v1/jobs?wait=30" >/dev/null
expect_eq "job on a bad input fails" "$(jget "$TMP/jbad.json" state)" failed
expect_match "failed job carries an error code" "$(jget "$TMP/jbad.json" error.code)" '^E0[0-9]{3}$'
expect_eq "result of a failed job 404" "$(st a "$TMP/e.json" $U/v1/jobs/$(jget "$TMP/jbad.json" id)/result)" 404
expect_eq "report of a failed job 404" "$(st a "$TMP/e.json" $U/v1/jobs/$(jget "$TMP/jbad.json" id)/report)" 404
expect_eq "a failed job names no report" "$(jget "$TMP/jbad.json" report)" null
expect_eq "report of an unknown job 404" "$(st a "$TMP/e.json" $U/v1/jobs/0123456789abcdef/report)" 404

# ---- npu_sim: target files, the job's npu summary, its report ---------------------------
printf 'array: [8, 8]\ndataflow: ws\n' >"$TMP/t8.yaml"
expect_eq "compile npu_sim with a target part 200" \
	"$(st a "$TMP/n1.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" -F backend=npu_sim -F target=@"$TMP/t8.yaml" $U/v1/compile)" 200
NID=$(jget "$TMP/n1.json" artifact)
expect_eq "npu_sim artifact: backend" "$(jget "$TMP/n1.json" backend)" npu_sim
check "npu_sim artifact differs from cpu_ref's" test "$NID" != "$ID"
st a "$TMP/n2.json" -d "{\"spec\":\"$(sha "$MLP/spec.yaml")\",\"weights\":\"$(sha "$MLP/weights.npz")\",\"backend\":\"npu_sim\",\"target\":\"$(sha "$TMP/t8.yaml")\"}" $U/v1/compile >/dev/null
expect_eq "the same target by digest: cached, same id" "$(jget "$TMP/n2.json" cached) $(jget "$TMP/n2.json" artifact)" "true $NID"
st a "$TMP/n3.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" -F backend=npu_sim $U/v1/compile >/dev/null
check "the spec's own target: another artifact" test "$(jget "$TMP/n3.json" artifact)" != "$NID"
Z2=1111111111111111111111111111111111111111111111111111111111111111
expect_eq "compile with an unknown target blob 409" \
	"$(st a "$TMP/e.json" -d "{\"spec\":\"$(sha "$MLP/spec.yaml")\",\"weights\":\"$(sha "$MLP/weights.npz")\",\"target\":\"$Z2\"}" $U/v1/compile)" 409
expect_eq "unknown target blob: missing lists it" "$(jget "$TMP/e.json" missing)" "[\"$Z2\"]"
expect_eq "cpu_ref with target options 422" \
	"$(st a "$TMP/e.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" -F backend=cpu_ref -F target=@"$TMP/t8.yaml" $U/v1/compile)" 422
expect_match "cpu_ref with target options: E0213 at t8.yaml" "$(jget "$TMP/e.json" error.code) $(jget "$TMP/e.json" error.where)" '^E0213 t8\.yaml'
expect_eq "validate with a target part 200" \
	"$(st a "$TMP/nv.json" -F spec=@"$MLP/spec.yaml" -F backend=npu_sim -F target=@"$TMP/t8.yaml" $U/v1/validate)" 200
expect_eq "validate with a target: backend" "$(jget "$TMP/nv.json" backend)" npu_sim
expect_eq "npu_sim job 200" "$(st a "$TMP/nj.json" -F artifact=$NID -F input=@"$MLP/input.npz" "$U/v1/jobs?wait=30")" 200
expect_eq "npu_sim job succeeded" "$(jget "$TMP/nj.json" state)" succeeded
expect_match "npu_sim job: npu.cycles" "$(jget "$TMP/nj.json" npu.cycles)" '^[1-9][0-9]*$'
expect_eq "npu_sim job: npu.clock_mhz defaults to 1000" "$(jget "$TMP/nj.json" npu.clock_mhz)" 1000.0
st a "$TMP/nr.npz" "$U/v1/jobs/$(jget "$TMP/nj.json" id)/result" >/dev/null
check "npu_sim result: the same bytes as cpu_ref" cmp "$TMP/nr.npz" "$TMP/r1.npz"
expect_eq "npu_sim report 200" "$(st a "$TMP/nrep.json" "$U/v1/jobs/$(jget "$TMP/nj.json" id)/report")" 200
expect_eq "npu_sim report: the digest the job names" "$(sha "$TMP/nrep.json")" "$(jget "$TMP/nj.json" report)"
expect_eq "npu_sim report: totals.cycles as the job says" "$(jget "$TMP/nrep.json" npu.totals.cycles)" "$(jget "$TMP/nj.json" npu.cycles)"
expect_eq "npu_sim report: the 8x8 ws target" "$(jget "$TMP/nrep.json" npu.target.array) $(jget "$TMP/nrep.json" npu.target.dataflow)" "[8, 8] ws"

# ---- compare ----------------------------------------------------------------------------------------
expect_eq "compare 200" "$(st a "$TMP/cmp.json" -F got=@"$TMP/r1.npz" -F expected=@"$TMP/r2.npz" $U/v1/compare)" 200
expect_eq "compare ok" "$(jget "$TMP/cmp.json" ok) $(jget "$TMP/cmp.json" tensors)" "true 1"
"$PY" -c '
import numpy as np, sys
d = dict(np.load(sys.argv[1])); k = list(d)[0]; d[k] = d[k] + np.float32(0.5)
np.savez(sys.argv[2], **d)' "$TMP/r1.npz" "$TMP/off.npz"
st a "$TMP/cmp2.json" -F got=@"$TMP/off.npz" -F expected=@"$TMP/r1.npz" -F tol=1e-3 $U/v1/compare >/dev/null
expect_eq "compare beyond tolerance: ok false, E0600" "$(jget "$TMP/cmp2.json" ok) $(jget "$TMP/cmp2.json" error.code)" "false E0600"
expect_eq "compare with mismatched keys 422" \
	"$(st a "$TMP/e.json" -F got=@"$MLP/input.npz" -F expected=@"$TMP/r1.npz" $U/v1/compare)" 422

# ---- request errors ------------------------------------------------------------------------------------
expect_eq "unknown route 404" "$(st a "$TMP/e.json" $U/v1/nope)" 404
expect_eq "unknown route: E0800" "$(jget "$TMP/e.json" error.code)" E0800
expect_eq "wrong method 405" "$(st a "$TMP/e.json" -X DELETE $U/v1/health)" 405
expect_match "405 has Allow" "$(dcurl a -D - -o /dev/null -X POST $U/v1/health | tr -d '\r')" "^Allow: GET"
expect_eq "bad JSON 400" "$(st a "$TMP/e.json" -H 'Content-Type: application/json' -d '{"spec":' $U/v1/compile)" 400
expect_eq "bad JSON: E0803" "$(jget "$TMP/e.json" error.code)" E0803
expect_eq "missing field 400 naming it" "$(st a "$TMP/e.json" -d '{}' $U/v1/compile) $(jget "$TMP/e.json" error.where)" "400 spec"
expect_eq "bad ?wait 400" "$(st a "$TMP/e.json" "$U/v1/jobs/$J1?wait=soon")" 400

# ---- daemon T: TCP on port 0 -----------------------------------------------------------------------------
"$BIN/eulernpud" --listen 127.0.0.1:0 --port-file "$TMP/t.port" --cache "$TMP/t.cache" \
	--log "$TMP/t.log" --workers 4 --threads 2 </dev/null >/dev/null 2>&1 &
TPID=$!; EXTRA_PIDS+=("$TPID")
for _ in $(seq 100); do [ -s "$TMP/t.port" ] && break; sleep 0.05; done
PORT=$(cat "$TMP/t.port" 2>/dev/null)
expect_match "port file written" "$PORT" '^[0-9]+$'
T=http://127.0.0.1:$PORT
expect_eq "TCP health 200" "$(curl -s -o /dev/null -w '%{http_code}' $T/v1/health)" 200
curl -s -o "$TMP/tc.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" $T/v1/compile
expect_eq "TCP compile: same artifact id" "$(jget "$TMP/tc.json" artifact)" "$ID"
curl -s -o "$TMP/tj.json" -F artifact=$ID -F input=@"$MLP/input.npz" "$T/v1/jobs?wait=30"
expect_eq "determinism: --workers 4 --threads 2 gives the same result" "$(jget "$TMP/tj.json" result)" "$(sha "$TMP/r1.npz")"
kill -TERM "$TPID"; wait "$TPID" 2>/dev/null; rc=$?
expect_eq "TCP daemon: SIGTERM exits 0" "$rc" 0

# ---- queue full ------------------------------------------------------------------------------------------------
start_daemon q --max-queue 0 || { finish; exit 1; }
st q /dev/null -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" $U/v1/compile >/dev/null
expect_eq "queue full 429" "$(st q "$TMP/e.json" -F artifact=$ID -F input=@"$MLP/input.npz" $U/v1/jobs)" 429
expect_eq "queue full: E0806" "$(jget "$TMP/e.json" error.code)" E0806
expect_match "429 has Retry-After" "$(dcurl q -D - -o /dev/null -F artifact=$ID -F input=@"$MLP/input.npz" $U/v1/jobs | tr -d '\r')" "^Retry-After: [0-9]+"
stop_daemon q

# ---- import A -> B ------------------------------------------------------------------------------------------
start_daemon b --workers 2 || { finish; exit 1; }
expect_eq "import before the blobs 409" "$(st b "$TMP/e.json" -X PUT -H 'Content-Type: application/json' --data-binary @"$TMP/manifest.json" $U/v1/artifacts/$ID)" 409
expect_eq "import 409: E0804" "$(jget "$TMP/e.json" error.code)" E0804
mkdir -p "$TMP/dl"
for p in $(jget "$TMP/manifest.json" 'files.*.path'); do
	f="$TMP/dl/$(echo "$p" | tr / _)"
	dcurl a -o "$f" "$U/v1/artifacts/$ID/files/$p"
	dcurl b -o /dev/null -T "$f" "$U/v1/blobs/$(sha "$f")"
done
expect_eq "import 201" "$(st b "$TMP/imp.json" -X PUT --data-binary @"$TMP/manifest.json" $U/v1/artifacts/$ID)" 201
expect_eq "import again 200" "$(st b "$TMP/imp.json" -X PUT --data-binary @"$TMP/manifest.json" $U/v1/artifacts/$ID)" 200
expect_eq "import under a wrong id 422" "$(st b "$TMP/e.json" -X PUT --data-binary @"$TMP/manifest.json" $U/v1/artifacts/$Z)" 422
st b "$TMP/bj.json" -F artifact=$ID -F input=@"$MLP/input.npz" "$U/v1/jobs?wait=30" >/dev/null
st b "$TMP/rb.npz" "$U/v1/jobs/$(jget "$TMP/bj.json" id)/result" >/dev/null
check "run on B: same result bytes as A" cmp "$TMP/r1.npz" "$TMP/rb.npz"
expect_eq "B's action cache stays empty" "$(find "$TMP/b.cache/ac" -type f | wc -l)" 0

# ---- restart keeps the cache; stale socket; clean stop ------------------------------------------------------------
stop_daemon a
expect_eq "SIGTERM removes the socket" "$(test -e "$TMP/a.sock" && echo present || echo gone)" gone
expect_eq "SIGTERM removes the pid file" "$(test -e "$TMP/a.pid" && echo present || echo gone)" gone
start_daemon a --workers 1 || { finish; exit 1; }
st a "$TMP/c4.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" $U/v1/compile >/dev/null
expect_eq "after restart: cached true, same id" "$(jget "$TMP/c4.json" cached) $(jget "$TMP/c4.json" artifact)" "true $ID"
{ kill -KILL "$(daemon_pid a)"; wait "$(daemon_pid a)"; } 2>/dev/null
expect_eq "a killed daemon leaves its socket" "$(test -S "$TMP/a.sock" && echo present)" present
stop_daemon a
start_daemon a --workers 1 && ok "a stale socket is replaced" || notok "a stale socket is replaced"
"$BIN/eulernpud" --socket "$TMP/a.sock" --cache "$TMP/x.cache" --log "$TMP/x.log" </dev/null >/dev/null 2>&1; rc=$?
expect_eq "a live socket is not taken over" "$rc" 1
expect_eq "and still answers" "$(st a /dev/null $U/v1/health)" 200

# ---- idle exit ---------------------------------------------------------------------------------------------------
"$BIN/eulernpud" --socket "$TMP/i.sock" --cache "$TMP/i.cache" --log "$TMP/i.log" --idle-exit 1 </dev/null >/dev/null 2>&1 &
IPID=$!; EXTRA_PIDS+=("$IPID")
for _ in $(seq 100); do kill -0 "$IPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$IPID" 2>/dev/null && notok "--idle-exit 1 exits by itself" || ok "--idle-exit 1 exits by itself"
wait "$IPID"; expect_eq "idle exit status 0" "$?" 0

finish
