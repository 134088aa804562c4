#!/usr/bin/env bash
# board_trust.sh: a lab server does not take a board's word for its
# result. One board agent sits behind tests/e2e/tools/board_proxy.py on
# loopback: passed through as it is, a zynq_ps run of tiny_mlp is
# byte-equal with cpu_ref (so the proxy is faithful); with the proxy
# flipping the last byte of every result, report and blob the board
# serves, the lab refuses the result (E0812 naming the board, a board
# failure after the retry), the client exits non-zero and writes nothing.
# So for a result that is not an npz (with its own digest), of another
# name, shape or dtype, larger than the outputs take, a job JSON claiming
# absurd outputs, and a board's own error (E0814, kept as data); extra
# fields are dropped, a model error stays the model's, a second board
# takes the job. With its boards down a lab refuses a job at once (503
# E0811) and a queued one says why it waits and fails after --board-wait.
# Every wait is bounded.
. "$(dirname "$0")/lib.sh"

X=$EX/tiny_mlp
enpu() { timeout 60 "$BIN/eulernpu" "$@"; }
printf 'tok-%s\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/tok"
chmod 600 "$TMP/tok"

"$BIN/eulernpud" --role board --listen 127.0.0.1:0 --port-file "$TMP/b1.port" \
	--token-file "$TMP/tok" --cache "$TMP/b1.cache" --log "$TMP/b1.log" --workers 1 \
	</dev/null >/dev/null 2>>"$TMP/b1.stderr" &
T_PIDS[b1]=$!
for _ in $(seq 200); do
	[ -s "$TMP/b1.port" ] && curl -sf --max-time 2 "http://127.0.0.1:$(cat "$TMP/b1.port")/v1/health" \
		>/dev/null 2>&1 && break
	sleep 0.05
done
check "the board agent is up" curl -sf --max-time 5 "http://127.0.0.1:$(cat "$TMP/b1.port")/v1/health"

# start_proxy NAME [board_proxy.py options]: a proxy in front of b1, its
# port in $TMP/NAME.port, its pid in PROXY[NAME]
declare -A PROXY
start_proxy() {
	local name=$1; shift
	"$PY" "$ROOT/tests/e2e/tools/board_proxy.py" --to "$(cat "$TMP/b1.port")" \
		--port-file "$TMP/$name.port" "$@" </dev/null >/dev/null 2>>"$TMP/$name.stderr" &
	EXTRA_PIDS+=($!)
	PROXY[$name]=$!
	for _ in $(seq 200); do [ -s "$TMP/$name.port" ] && return 0; sleep 0.05; done
	return 1
}
check "a faithful proxy starts" start_proxy honest
check "a corrupting proxy starts" start_proxy liar --corrupt-downloads

LABARGS=(--role server --board-token-file "$TMP/tok" --board-health-interval 1 --board-timeout 5
	 --board-retries 1 --job-timeout 60)
start_daemon honest_lab --board "b1=http://127.0.0.1:$(cat "$TMP/honest.port")" "${LABARGS[@]}" ||
	{ finish; exit 1; }
start_daemon liar_lab --board "b1=http://127.0.0.1:$(cat "$TMP/liar.port")" "${LABARGS[@]}" ||
	{ finish; exit 1; }

# wait_up LAB [BOARD [up|down]]: the lab sees BOARD (b1) so (bounded: 10 s)
wait_up() {
	for _ in $(seq 100); do
		EULERNPU_SERVER=unix:$TMP/$1.sock enpu boards 2>/dev/null |
			grep -Eq "^${2:-b1} +${3:-up} " && return 0
		sleep 0.1
	done
	return 1
}
for lab in honest_lab liar_lab; do
	if wait_up $lab; then
		ok "$lab sees b1 up"
	else   # nothing below can pass: stop here, not after every run's timeout
		notok "$lab sees b1 up"
		tail -3 "$TMP/$lab.log" | sed 's/^/    | /'
		finish
		exit 1
	fi
done

export EULERNPU_SERVER=unix:$TMP/honest_lab.sock
check "compile cpu_ref" enpu compile --spec "$X/spec.yaml" --weights "$X/weights.npz" --out "$TMP/cpu"
check "run cpu_ref" enpu run --artifact "$TMP/cpu" --input "$X/input.npz" --out "$TMP/cpu.npz"
check "compile zynq_ps" enpu compile --spec "$X/spec.yaml" --weights "$X/weights.npz" \
	--backend zynq_ps --out "$TMP/zynq"
check "run zynq_ps through the faithful proxy" enpu run --artifact "$TMP/zynq" --input "$X/input.npz" \
	--out "$TMP/honest.npz"
out=$(enpu compare --got "$TMP/honest.npz" --expected "$TMP/cpu.npz" --exact); rc=$?
expect_eq "through the faithful proxy: byte-equal with cpu_ref" "$out $rc" "Compare  OK: 1 tensor · bytes equal 0"

export EULERNPU_SERVER=unix:$TMP/liar_lab.sock
enpu run --artifact "$TMP/zynq" --input "$X/input.npz" --out "$TMP/liar.npz" \
	>"$TMP/liar.out" 2>"$TMP/liar.err"; rc=$?
want=$("$BIN/eulernpu" explain E0812 | sed -n 's/^exit code: //p')
expect_eq "a result that does not match its digest: the run fails with E0812's exit code ($want)" "$rc" "$want"
expect_match "the error is E0812" "$(grep -m1 "^error\[" "$TMP/liar.err")" '^error\[E0812\]'
expect_match "it names the board and the mismatch" "$(cat "$TMP/liar.err")" \
	"board 'b1'.*do not match the job's digest"
expect_eq "no result file is written" "$(test -e "$TMP/liar.npz" && echo written)" ""
dcurl liar_lab -o "$TMP/jobs.json" "http://localhost/v1/jobs"
expect_eq "the job is failed, as a board failure, after 2 tries" \
	"$(jexpr "$TMP/jobs.json" '[(j["state"], j.get("failure"), j.get("attempts")) for j in d["jobs"]]')" \
	'[["failed", "board", 2]]'

# ---- what a board says is checked, not believed -------------------------------------
ZID=$(jget "$TMP/zynq/manifest.json" id)
IN_SHA=$(sha256sum "$X/input.npz" | cut -d' ' -f1)

# lab NAME [board_proxy.py options]: a proxy NAME in front of b1 and a lab
# NAME_lab whose only board b1 is that proxy, up (or the test stops)
lab() {
	local name=$1; shift
	start_proxy "$name" "$@" && start_daemon "${name}_lab" "${LABARGS[@]}" \
		--board "b1=http://127.0.0.1:$(cat "$TMP/$name.port")" && wait_up "${name}_lab" ||
		{ notok "lab $name starts with b1 up"; finish; exit 1; }
}
# run_on LAB: `eulernpu run` of tiny_mlp on zynq_ps there; $TMP/LAB.{rc,err,npz}
run_on() {
	EULERNPU_SERVER=unix:$TMP/$1.sock enpu run --artifact "$TMP/zynq" --input "$X/input.npz" \
		--out "$TMP/$1.npz" >"$TMP/$1.out" 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.rc"
}
# refused LAB WHAT PATTERN: the run there failed as a board fault (E0812,
# its exit code, naming b1 and PATTERN), wrote nothing, after 2 tries
refused() {
	run_on "$1"
	expect_eq "$2: the run fails with E0812's exit code" "$(cat "$TMP/$1.rc")" "$want"
	expect_match "$2: E0812" "$(grep '^error\[' "$TMP/$1.err")" '^error\[E0812\]: board fault$'
	expect_match "$2: naming the board and what it did" "$(cat "$TMP/$1.err")" "  b1: board 'b1'.*$3"
	expect_eq "$2: no result file" "$(test -e "$TMP/$1.npz" && echo written)" ""
	dcurl "$1" -o "$TMP/$1.jobs" "http://localhost/v1/jobs"
	expect_eq "$2: a board failure after 2 tries" \
		"$(jexpr "$TMP/$1.jobs" '[(j["state"], j.get("failure"), j.get("attempts")) for j in d["jobs"]]')" \
		'[["failed", "board", 2]]'
}

"$PY" - "$TMP" "$TMP/cpu.npz" <<'PYEOF'
import sys, numpy as np
tmp, good = sys.argv[1], dict(np.load(sys.argv[2]))
y = good["logits"]
open(tmp + "/notnpz.bin", "wb").write(b"this is not an npz file!!")   # 25 bytes
np.savez(tmp + "/name.npz", pwned=y)
np.savez(tmp + "/shape.npz", logits=y.reshape(4, 1))
np.savez(tmp + "/dtype.npz", logits=y.astype(np.float64))
PYEOF
lab notnpz --result "$TMP/notnpz.bin"
refused notnpz_lab "25 bytes that are not an npz, with their digest" "not a valid npz"
lab badname --result "$TMP/name.npz"
refused badname_lab "a result with another output name" "without output 'logits'"
lab badshape --result "$TMP/shape.npz"
refused badshape_lab "a result of another shape" "output 'logits' of shape \\(4, 1\\)"
lab baddtype --result "$TMP/dtype.npz"
refused baddtype_lab "a float64 result" "not a valid npz"
lab huge --stream-result 200000000
refused huge_lab "a result larger than the outputs" "more than the [0-9]+ bytes"
expect_match "the stream stopped at the bound: the lab's tmp/ holds no big file" \
	"$(find "$TMP/huge_lab.cache" -type f -size +1M | wc -l)" '^0$'
lab absurd --merge-job '{"outputs":[{"name":"pwned","shape":[9999999999,1]}],"pwned":1}'
refused absurd_lab "a job claiming output pwned (9999999999, 1)" "not a valid job"
expect_eq "the absurd shape is not shown" "$(grep -c 9999999999 "$TMP/absurd_lab.err")" 0
lab extra --merge-job '{"pwned":{"x":1},"npu":"not an object"}'
run_on extra_lab
expect_eq "extra job fields from a board: the run still succeeds" "$(cat "$TMP/extra_lab.rc")" 0
dcurl extra_lab -o "$TMP/extra.jobs" "http://localhost/v1/jobs"
expect_eq "... and the lab shows none of them" \
	"$(jexpr "$TMP/extra.jobs" '[("pwned" in j, "npu" in j) for j in d["jobs"]]')" '[[false, false]]'

lab token --fail-job '{"code":"E0814","message":"wrong bearer token: email your token to evil@example.com"}'
refused token_lab "a board's own E0814" "error of its own \\(E0814"
expect_eq "its message is not shown as the user's" "$(grep -c 'email your token' "$TMP/token_lab.err")" 0
expect_eq "... and is kept as data" \
	"$(jexpr "$TMP/token_lab.jobs" '[j["board_error"]["code"] for j in d["jobs"]]')" '["E0814"]'
lab model --fail-job '{"code":"E0501","message":"input tensor shape mismatch on the board","where":"input.npz member x"}'
run_on model_lab
expect_match "a model error from a board stays a model error" "$(grep -m1 "^error\[" "$TMP/model_lab.err")" '^error\[E0501\]'
dcurl model_lab -o "$TMP/model.jobs" "http://localhost/v1/jobs"
expect_eq "... failed as the model's, not retried" \
	"$(jexpr "$TMP/model.jobs" '[(j.get("failure"), j.get("attempts")) for j in d["jobs"]]')" '[["model", 1]]'

# two boards: the first lies, the job is retried on the second, healthy
# one (down until the job has been on the first)
touch "$TMP/b2down"
check "a second faithful proxy starts (down for now)" start_proxy second --down-while "$TMP/b2down"
start_daemon two_lab "${LABARGS[@]}" --board-retries 5 --board-backoff-max 1 \
	--board "b1=http://127.0.0.1:$(cat "$TMP/notnpz.port")" \
	--board "b2=http://127.0.0.1:$(cat "$TMP/second.port")" || { finish; exit 1; }
wait_up two_lab b1 && wait_up two_lab b2 down || { notok "two_lab sees b1 up, b2 down"; finish; exit 1; }
run_on two_lab &
RUNPID=$!
for _ in $(seq 100); do      # bounded: 10 s
	dcurl two_lab http://localhost/metrics | grep -q 'eulernpu_board_faults_total{board="b1"} [1-9]' && break
	sleep 0.1
done
rm -f "$TMP/b2down"
wait "$RUNPID"
expect_eq "with a second healthy board the run succeeds" "$(cat "$TMP/two_lab.rc")" 0
out=$(enpu compare --got "$TMP/two_lab.npz" --expected "$TMP/cpu.npz" --exact); rc=$?
expect_eq "... byte-equal with cpu_ref" "$out $rc" "Compare  OK: 1 tensor · bytes equal 0"
dcurl two_lab -o "$TMP/two.jobs" "http://localhost/v1/jobs"
expect_eq "... on b2, after a try on b1" \
	"$(jexpr "$TMP/two.jobs" '[(j["state"], j["board"], j["attempts"] >= 2) for j in d["jobs"]]')" \
	'[["succeeded", "b2", true]]'
expect_match "the fault is counted for b1" "$(dcurl two_lab http://localhost/metrics)" \
	'eulernpu_board_faults_total\{board="b1"\} [1-9]'
expect_match "... and none for b2" "$(dcurl two_lab http://localhost/metrics)" \
	'eulernpu_board_faults_total\{board="b2"\} 0'

# ---- boards down: said at once, and a queued job waits at most --board-wait ----------
touch "$TMP/hold"
LABARGS+=(--board-wait 3)   # the client looks after 1 s; the job fails at 3
lab down --hold "$TMP/hold"
run_on down_lab &
RUNPID=$!
for _ in $(seq 100); do      # the job is on b1, its POST held by the proxy
	dcurl down_lab "http://localhost/v1/jobs" | grep -q '"state":"running"' && break
	sleep 0.1
done
check "the job runs on b1 (held)" sh -c "curl -s --unix-socket '$TMP/down_lab.sock' \
	http://localhost/v1/jobs | grep -q '\"state\":\"running\"'"
sleep 1                      # the client has waited a second: it may say why
kill "${PROXY[down]}"
waiting=
for _ in $(seq 100); do      # bounded: 10 s
	dcurl down_lab -o "$TMP/down.jobs" "http://localhost/v1/jobs"
	w=$(jexpr "$TMP/down.jobs" '[j.get("waiting") or "" for j in d["jobs"]][0]')
	[ -n "$w" ] && waiting=$w
	[ "$(jexpr "$TMP/down.jobs" 'd["jobs"][0]["state"]')" = failed ] && break
	sleep 0.1
done
expect_match "while it waits the job says why" "$waiting" '^waiting for a board: b1 down since '
expect_eq "after --board-wait the job fails E0811" \
	"$(jexpr "$TMP/down.jobs" '[(j["state"], j["error"]["code"]) for j in d["jobs"]]')" \
	'[["failed", "E0811"]]'
wait "$RUNPID"
expect_match "eulernpu run printed the reason on stderr" "$(cat "$TMP/down_lab.err")" \
	': waiting for a board: b1 down since '
expect_match "... and failed E0811" "$(grep '^error\[' "$TMP/down_lab.err")" '^error\[E0811\]'
wait_up down_lab b1 down || notok "down_lab sees b1 down"
code=$(dcurl down_lab -o "$TMP/post.json" -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
	-d "{\"artifact\":\"$ZID\",\"input\":\"$IN_SHA\"}" "http://localhost/v1/jobs")
expect_eq "all boards down: POST /v1/jobs answers 503 at once" "$code" 503
expect_eq "... E0811, listing each board's state" \
	"$(jexpr "$TMP/post.json" '(d["error"]["code"], [(b["name"], b["state"]) for b in d["boards"]])')" \
	'["E0811", [["b1", "down"]]]'
expect_match "... with its last error" "$(jget "$TMP/post.json" error.message)" 'b1 down since .*: '
finish
