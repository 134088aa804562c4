#!/usr/bin/env bash
# boards.sh: a lab server in front of two board agents, all on loopback:
# board agents on 127.0.0.1 port 0 (--port-file) with a bearer token, lab
# servers on Unix sockets. Through the client: zynq_ps and fpga_board runs
# of tiny_mlp and tiny_cnn byte-equal with cpu_ref; `eulernpu boards`; the
# token; a hung board (SIGSTOP) and the job finishing on the other; both
# boards gone (503 E0811 at once, each board's state and last error); no
# board at all (503 E0811 at once); a restarted board rejoining; a queued
# job saying why it waits for a board, cancelled; a second run uploading
# nothing; a model error passed through intact. Every wait is bounded.
. "$(dirname "$0")/lib.sh"

U=http://localhost
export EULERNPU_SERVER=unix:$TMP/lab.sock
enpu() { timeout 60 "$BIN/eulernpu" "$@"; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
now() { date +%s.%N; }

printf 'tok-%s\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/tok"
echo wrong-token >"$TMP/badtok"
chmod 600 "$TMP/tok" "$TMP/badtok"   # token files must be private

bcurl() { local n=$1; shift; curl -s --max-time 10 "$@" "http://127.0.0.1:$(bport "$n")$P"; }
health() { curl -s --max-time 5 "http://127.0.0.1:$(bport "$1")/v1/health" -o "$2"; }

# wait_state LAB BOARD STATE: poll `eulernpu boards` up to 10 s.
wait_state() {
	local lab=$1 b=$2 want=$3
	for _ in $(seq 100); do
		if EULERNPU_SERVER=unix:$TMP/$lab.sock enpu boards 2>/dev/null |
		   awk -v b="$b" -v s="$want" '$1 == b && $2 == s { f = 1 } END { exit !f }'; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# ---- flags -----------------------------------------------------------------------
"$BIN/eulernpud" --help >"$TMP/help.out" 2>&1
expect_match "--help documents --board" "$(cat "$TMP/help.out")" "--board NAME=URL"
expect_match "--help documents --cache-max" "$(cat "$TMP/help.out")" "--cache-max BYTES"
check_status "--pl other: usage error" 2 "$BIN/eulernpud" --role board --pl real
expect_match "--pl other: names the known PL" "$(cat "$TMP/last.err")" "known: emulated"
check_status "--role other: usage error" 2 "$BIN/eulernpud" --role laptop
check_status "--board without URL: usage error" 2 "$BIN/eulernpud" --board b1
check_status "--board with a bad URL: usage error" 2 "$BIN/eulernpud" --board b1=ftp://x:1
check_status "--board twice the same name: usage error" 2 "$BIN/eulernpud" \
	--board b1=http://127.0.0.1:1 --board b1=http://127.0.0.1:2
check_status "a board agent fronts no boards" 2 "$BIN/eulernpud" --role board --board b=http://127.0.0.1:1

# ---- two board agents and a lab server ----------------------------------------------
start_board b1 || { finish; exit 1; }
start_board b2 || { finish; exit 1; }
P1=$(bport b1); P2=$(bport b2)
health b1 "$TMP/h1.json"
expect_eq "board health: role" "$(jget "$TMP/h1.json" role)" board
expect_eq "board health: the PL, plainly" "$(jget "$TMP/h1.json" pl)" \
	"emulated (reference kernels, modelled PL cycles; no bitstream)"
expect_match "board health: serves zynq_ps and fpga_board" "$(jget "$TMP/h1.json" backends)" \
	'"zynq_ps", "fpga_board"'
expect_eq "board health: counters" "$(jget "$TMP/h1.json" blobs_received) $(jget "$TMP/h1.json" artifacts_cached)" "0 0"

# the token: every route but GET /v1/health
P=/v1/blobs/missing
expect_eq "no token: 401" "$(bcurl b1 -o "$TMP/e.json" -w '%{http_code}' -d '{"digests":[]}')" 401
expect_eq "no token: E0814" "$(jget "$TMP/e.json" error.code)" E0814
expect_eq "wrong token: 401" "$(bcurl b1 -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong-token' -d '{"digests":[]}')" 401
expect_eq "right token: 200" "$(bcurl b1 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$TMP/tok")" -d '{"digests":[]}')" 200
P=/v1/health
expect_eq "health needs no token" "$(bcurl b1 -o /dev/null -w '%{http_code}')" 200

LABARGS=(--board-token-file "$TMP/tok" --board-health-interval 1 --board-timeout 2
	 --board-backoff-max 2 --job-timeout 5)
start_daemon lab --role server --board "b1=http://127.0.0.1:$P1" --board "b2=http://127.0.0.1:$P2" \
	"${LABARGS[@]}" || { finish; exit 1; }
check "b1 comes up" wait_state lab b1 up
check "b2 comes up" wait_state lab b2 up
enpu boards >"$TMP/boards.out" 2>&1
expect_match "boards: a header" "$(head -1 "$TMP/boards.out")" "^NAME +STATE +BUSY +QUEUE +JOB +BACKENDS +CACHED +LAST ERROR"
expect_match "boards: b1 up, idle" "$(grep '^b1 ' "$TMP/boards.out")" "^b1 +up +idle +0 +- +zynq_ps,fpga_board"
expect_match "boards: b2 up, idle" "$(grep '^b2 ' "$TMP/boards.out")" "^b2 +up +idle +0 +- +zynq_ps,fpga_board"
dcurl lab -o "$TMP/boards.json" $U/v1/boards
expect_eq "GET /v1/boards: the PL" "$(jget "$TMP/boards.json" boards.0.pl)" \
	"emulated (reference kernels, modelled PL cycles; no bitstream)"
dcurl lab -o "$TMP/lh.json" $U/v1/health
expect_eq "lab health: role server" "$(jget "$TMP/lh.json" role)" server

# ---- runs: byte-equal with cpu_ref ------------------------------------------------------
for m in tiny_mlp tiny_cnn; do
	X=$EX/$m
	check "$m: compile cpu_ref" enpu compile --spec "$X/spec.yaml" --weights "$X/weights.npz" --out "$TMP/$m.cpu"
	check "$m: run cpu_ref" enpu run --artifact "$TMP/$m.cpu" --input "$X/input.npz" --out "$TMP/$m.cpu.npz"
	for bk in zynq_ps fpga_board; do
		check "$m: compile $bk" enpu compile --spec "$X/spec.yaml" --weights "$X/weights.npz" \
			--backend "$bk" --out "$TMP/$m.$bk"
		check "$m: run $bk through the lab server" enpu run --artifact "$TMP/$m.$bk" \
			--input "$X/input.npz" --out "$TMP/$m.$bk.npz"
		out=$(enpu compare --got "$TMP/$m.$bk.npz" --expected "$TMP/$m.cpu.npz" --exact); rc=$?
		expect_eq "$m: $bk --exact equal to cpu_ref" "$out $rc" "Compare  OK: 1 tensor · bytes equal 0"
	done
done
ZID=$(jget "$TMP/tiny_mlp.zynq_ps/manifest.json" id)
IN=$(sha "$EX/tiny_mlp/input.npz")
st=$(dcurl lab -o "$TMP/j.json" -w '%{http_code}' -d "{\"artifact\":\"$ZID\",\"input\":\"$IN\"}" "$U/v1/jobs?wait=20")
expect_eq "job JSON: 200, succeeded" "$st $(jget "$TMP/j.json" state)" "200 succeeded"
expect_match "job JSON: the board that ran it" "$(jget "$TMP/j.json" board)" '^b[12]$'
expect_eq "job JSON: one attempt" "$(jget "$TMP/j.json" attempts)" 1
J=$(jget "$TMP/j.json" id)
dcurl lab -o "$TMP/j.npz" $U/v1/jobs/$J/result
expect_eq "the lab's result digest is the board's" "$(sha "$TMP/j.npz")" "$(jget "$TMP/j.json" result)"
expect_eq "report fetched into the lab's CAS" "$(dcurl lab -o "$TMP/j.rep" -w '%{http_code}' $U/v1/jobs/$J/report) $(sha "$TMP/j.rep")" \
	"200 $(jget "$TMP/j.json" report)"

# ---- the second run of an artifact uploads nothing ----------------------------------------
# (a lab server with b1 alone, so that both runs land on the same board)
start_daemon lab1 --board "b1=http://127.0.0.1:$P1" "${LABARGS[@]}" || { finish; exit 1; }
check "lab1 sees b1" wait_state lab1 b1 up
check "lab1: first run" env EULERNPU_SERVER=unix:$TMP/lab1.sock timeout 60 "$BIN/eulernpu" run \
	--artifact "$TMP/tiny_cnn.fpga_board" --input "$EX/tiny_cnn/input.npz" --out "$TMP/r1.npz"
health b1 "$TMP/h1a.json"
check "lab1: second run" env EULERNPU_SERVER=unix:$TMP/lab1.sock timeout 60 "$BIN/eulernpu" run \
	--artifact "$TMP/tiny_cnn.fpga_board" --input "$EX/tiny_cnn/input.npz" --out "$TMP/r2.npz"
health b1 "$TMP/h1b.json"
expect_eq "second run: 0 blobs uploaded to the board" \
	"$(( $(jget "$TMP/h1b.json" blobs_received) - $(jget "$TMP/h1a.json" blobs_received) ))" 0
expect_eq "second run: 0 bytes uploaded to the board" \
	"$(( $(jget "$TMP/h1b.json" blobs_bytes_received) - $(jget "$TMP/h1a.json" blobs_bytes_received) ))" 0
check "both runs: the same bytes" cmp "$TMP/r1.npz" "$TMP/r2.npz"
check "the board caches artifacts" test "$(jget "$TMP/h1b.json" artifacts_cached)" -ge 1

# ---- a board with a bounded cache (--cache-max): evicts, and re-uploads later --------------
start_board b3 0 --cache-max 20000 || { finish; exit 1; }
start_daemon lab3 --board "b3=http://127.0.0.1:$(bport b3)" "${LABARGS[@]}" || { finish; exit 1; }
check "lab3 sees b3" wait_state lab3 b3 up
run3() { env EULERNPU_SERVER=unix:$TMP/lab3.sock timeout 60 "$BIN/eulernpu" run "$@"; }
check "bounded cache: tiny_cnn fpga_board" run3 --artifact "$TMP/tiny_cnn.fpga_board" \
	--input "$EX/tiny_cnn/input.npz" --out "$TMP/c1.npz"
check "bounded cache: tiny_mlp zynq_ps" run3 --artifact "$TMP/tiny_mlp.zynq_ps" \
	--input "$EX/tiny_mlp/input.npz" --out "$TMP/c2.npz"
check "bounded cache: the board evicted" grep -q "cache: evicted [1-9]" "$TMP/b3.log"
health b3 "$TMP/h3a.json"
check "bounded cache: tiny_cnn again" run3 --artifact "$TMP/tiny_cnn.fpga_board" \
	--input "$EX/tiny_cnn/input.npz" --out "$TMP/c3.npz"
health b3 "$TMP/h3b.json"
check "bounded cache: evicted blobs were uploaded again" \
	test "$(jget "$TMP/h3b.json" blobs_received)" -gt "$(jget "$TMP/h3a.json" blobs_received)"
check "bounded cache: same bytes" cmp "$TMP/c1.npz" "$TMP/c3.npz"
check "bounded cache: equal to cpu_ref" cmp "$TMP/c2.npz" "$TMP/tiny_mlp.cpu.npz"
stop_daemon lab3
kill_board b3

# ---- a model error from the board, intact ------------------------------------------------
"$PY" -c 'import numpy as np, sys; np.savez(sys.argv[1], x=np.zeros((1, 7), np.float32))' "$TMP/bad.npz"
check_status "wrong-shaped input: exit 2" 2 enpu run --artifact "$TMP/tiny_mlp.zynq_ps" --input "$TMP/bad.npz" --out "$TMP/bad.out.npz"
expect_match "wrong-shaped input: the board's E0501" "$(head -1 "$TMP/last.err")" '^error\[E0501\]'
expect_eq "wrong-shaped input: three lines" "$(wc -l <"$TMP/last.err")" 3
expect_match "wrong-shaped input: names the user's file" "$(sed -n 2p "$TMP/last.err")" "bad.npz"
st=$(dcurl lab -o "$TMP/jm.json" -w '%{http_code}' -d "{\"artifact\":\"$ZID\",\"input\":\"$(sha "$TMP/bad.npz")\",\"input_name\":\"bad.npz\"}" "$U/v1/jobs?wait=20")
expect_eq "model error: failure model, one attempt" "$(jget "$TMP/jm.json" failure) $(jget "$TMP/jm.json" attempts)" "model 1"
expect_eq "model error: E0501 in the job" "$(jget "$TMP/jm.json" error.code)" E0501
expect_eq "a model error leaves the boards up" "$(enpu boards | awk '$2 == "up"' | wc -l)" 2

# ---- a wrong board token: the board is down, with the auth error -------------------------
start_daemon labx --board "b2=http://127.0.0.1:$P2" --board-token-file "$TMP/badtok" \
	--board-health-interval 1 --board-timeout 2 || { finish; exit 1; }
sleep 0.5
EULERNPU_SERVER=unix:$TMP/labx.sock enpu boards >"$TMP/bx.out" 2>&1
expect_match "wrong token: b2 down with E0814" "$(grep '^b2 ' "$TMP/bx.out")" "^b2 +down .*E0814"
stop_daemon labx

# ---- no board at all: 503 E0811 at submission ----------------------------------------------
start_daemon lab0 || { finish; exit 1; }
t0=$(now)
check_status "no board: the client exits 3" 3 env EULERNPU_SERVER=unix:$TMP/lab0.sock timeout 60 \
	"$BIN/eulernpu" --retry 0 run --artifact "$TMP/tiny_mlp.zynq_ps" --input "$EX/tiny_mlp/input.npz" --out "$TMP/n.npz"
expect_match "no board: E0811" "$(head -1 "$TMP/last.err")" '^error\[E0811\]'
check "no board: refused at once (< 5 s)" "$PY" -c "import sys; sys.exit(not ($(now) - $t0 < 5))"
expect_eq "no board: POST /v1/jobs 503" \
	"$(dcurl lab0 -o "$TMP/e.json" -w '%{http_code}' -d "{\"artifact\":\"$ZID\",\"input\":\"$IN\"}" "$U/v1/jobs")" 503
expect_eq "no board: E0811 in the body" "$(jget "$TMP/e.json" error.code)" E0811
expect_eq "no board: nothing queued" "$(dcurl lab0 $U/v1/health | jget - queue_depth)" 0
expect_eq "no board: boards says so" "$(EULERNPU_SERVER=unix:$TMP/lab0.sock enpu boards)" \
	"no boards: this server fronts none (eulernpud --board NAME=URL)"
check "no board: cpu_ref still runs" env EULERNPU_SERVER=unix:$TMP/lab0.sock timeout 60 \
	"$BIN/eulernpu" run --artifact "$TMP/tiny_mlp.cpu" --input "$EX/tiny_mlp/input.npz" --out "$TMP/n.npz"

# ---- a hung board: the job completes on the other one ----------------------------------------
kill -STOP "$(daemon_pid b1)"
t0=$(now)
st=$(dcurl lab -o "$TMP/jf.json" -w '%{http_code}' -d "{\"artifact\":\"$ZID\",\"input\":\"$IN\"}" "$U/v1/jobs?wait=30")
t1=$(now)
expect_eq "b1 hung: the job succeeds" "$st $(jget "$TMP/jf.json" state)" "200 succeeded"
expect_eq "b1 hung: it ran on b2" "$(jget "$TMP/jf.json" board)" b2
echo "# failover: job done in $("$PY" -c "print('%.2f' % ($t1 - $t0))") s, attempts $(jget "$TMP/jf.json" attempts) (board timeout 2 s)"
kill_board b1
check "b1 killed: boards shows it down" wait_state lab b1 down
expect_match "b1 down: its last error" "$(enpu boards | grep '^b1 ')" "^b1 +down .*b1"
check "b2 still runs jobs" enpu run --artifact "$TMP/tiny_cnn.zynq_ps" --input "$EX/tiny_cnn/input.npz" --out "$TMP/k.npz"

# ---- both boards gone: 503 E0811 at once, naming each board's state -----------------------------
kill_board b2
check "b2 killed: boards shows it down" wait_state lab b2 down
t0=$(now)
check_status "no board up: the run fails at once (exit 3, retry later)" 3 enpu --retry 0 run \
	--artifact "$TMP/tiny_mlp.fpga_board" --input "$EX/tiny_mlp/input.npz" --out "$TMP/x.npz" --timeout 30
t1=$(now)
expect_match "no board up: E0811" "$(head -1 "$TMP/last.err")" '^error\[E0811\]'
expect_match "no board up: each board's state and last error" "$(sed -n 2p "$TMP/last.err")" \
	"b1 down since .*: .*; b2 down since .*: "
check "no board up: refused, not queued (within 3 s)" "$PY" -c "import sys; sys.exit(not ($t1 - $t0 < 3))"
check_status "no board up: with the client's retries, still exit 3" 3 enpu --retry 2 run \
	--artifact "$TMP/tiny_mlp.fpga_board" --input "$EX/tiny_mlp/input.npz" --out "$TMP/x.npz" --timeout 30
expect_eq "no board up: the 503 retried twice, then E0811" \
	"$(grep -c '^server busy (503)' "$TMP/last.err") $(grep -v '^server busy' "$TMP/last.err" | head -1 | cut -c1-13)" \
	"2 error[E0811]:"

# ---- a restarted board rejoins ------------------------------------------------------------------
restart_at=$(date -u +%Y-%m-%dT%H:%M:%S)
start_board b2 "$P2" || { finish; exit 1; }
check "b2 restarted on its port: back up within 10 s" wait_state lab b2 up
dcurl lab -o "$TMP/bs.json" "$U/v1/boards"
check "b2 up: since its restart (GET /v1/boards' since)" "$PY" -c \
	"import json, sys; b = {x['name']: x for x in json.load(open(sys.argv[1]))['boards']}; sys.exit(not (b['b2']['since'] >= sys.argv[2] and b['b1']['since'] and b['b1']['since'] < sys.argv[2]))" \
	"$TMP/bs.json" "$restart_at"
check "b2 restarted: runs jobs again" enpu run --artifact "$TMP/tiny_mlp.fpga_board" \
	--input "$EX/tiny_mlp/input.npz" --out "$TMP/y.npz"
check "b2 restarted: same bytes" cmp "$TMP/y.npz" "$TMP/tiny_mlp.fpga_board.npz"

# ---- cancel: DELETE a board job that waits for a board --------------------------------------------
# b2 hangs right after the lab took the job: the try times out (a fault),
# and the job waits for a board, saying so
kill -STOP "$(daemon_pid b2)"
st=$(dcurl lab -o "$TMP/jc.json" -w '%{http_code}' -d "{\"artifact\":\"$ZID\",\"input\":\"$IN\"}" "$U/v1/jobs")
JC=$(jget "$TMP/jc.json" id)
expect_eq "accepted while b2 still looked up" "$st" 202
w=
for _ in $(seq 100); do      # bounded: 10 s
	dcurl lab -o "$TMP/jw.json" "$U/v1/jobs/$JC"
	w=$(jexpr "$TMP/jw.json" 'd.get("waiting") or ""')
	[ -n "$w" ] && break
	sleep 0.1
done
expect_match "the queued job says why it waits" "$w" '^waiting for a board: b1 down since .*; b2 down since '
dcurl lab -X DELETE -o "$TMP/jd.json" $U/v1/jobs/$JC
expect_eq "DELETE: cancelled" "$(jget "$TMP/jd.json" state) $(jget "$TMP/jd.json" failure)" "cancelled cancelled"
kill -CONT "$(daemon_pid b2)"
check "b2 resumed: up again" wait_state lab b2 up

finish
