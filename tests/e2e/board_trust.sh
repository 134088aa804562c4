#!/usr/bin/env bash
# board_trust.sh: a lab server does not take a board's word for its
# result. One board agent sits behind tests/e2e/tools/board_proxy.py on
# loopback: passed through as it is, a zynq_ps run of tiny_mlp is
# byte-equal with cpu_ref (so the proxy is faithful); with the proxy
# flipping the last byte of every result, report and blob the board
# serves, the lab refuses
# the result (E0812 naming the board, a board failure after the retry),
# the client exits non-zero and writes nothing. Every wait is bounded.
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

# start_proxy NAME [--corrupt-downloads]: a proxy in front of b1, its port in $TMP/NAME.port
start_proxy() {
	local name=$1; shift
	"$PY" "$ROOT/tests/e2e/tools/board_proxy.py" --to "$(cat "$TMP/b1.port")" \
		--port-file "$TMP/$name.port" "$@" </dev/null >/dev/null 2>>"$TMP/$name.stderr" &
	EXTRA_PIDS+=($!)
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

# wait_up LAB: the lab sees b1 up (bounded: 10 s)
wait_up() {
	for _ in $(seq 100); do
		EULERNPU_SERVER=unix:$TMP/$1.sock enpu boards 2>/dev/null | grep -Eq '^b1 +up ' && return 0
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
expect_match "the error is E0812" "$(head -1 "$TMP/liar.err")" '^error\[E0812\]'
expect_match "it names the board and the mismatch" "$(cat "$TMP/liar.err")" \
	"board 'b1'.*do not match the job's digest"
expect_eq "no result file is written" "$(test -e "$TMP/liar.npz" && echo written)" ""
dcurl liar_lab -o "$TMP/jobs.json" "http://localhost/v1/jobs"
expect_eq "the job is failed, as a board failure, after 2 tries" \
	"$(jexpr "$TMP/jobs.json" '[(j["state"], j.get("failure"), j.get("attempts")) for j in d["jobs"]]')" \
	'[["failed", "board", 2]]'
finish
