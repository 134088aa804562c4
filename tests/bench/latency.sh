#!/usr/bin/env bash
# latency.sh: wall time of the pipeline verbs through a daemon on a Unix
# socket, averaged over N runs (default 50). A benchmark, not a test.
# Usage: tests/bench/latency.sh [bin-dir] [N]
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-bin}; N=${2:-50}
T=$(mktemp -d)
"$BIN/eulernpud" --socket "$T/s" --cache "$T/c" --log "$T/log" </dev/null >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do curl -sf --unix-socket "$T/s" http://localhost/v1/health >/dev/null && break; sleep 0.05; done
export EULERNPU_SERVER=unix:$T/s
avg() {   # avg LABEL CMD...: mean wall time in ms over N runs
	local label=$1; shift
	local s e
	s=$(date +%s%N)
	for _ in $(seq "$N"); do "$@" >/dev/null; done
	e=$(date +%s%N)
	printf '%-40s %8.2f ms\n' "$label" "$(echo "($e - $s) / $N / 1000000" | bc -l)"
}
for ex in tiny_mlp tiny_cnn; do
	EX=examples/$ex
	"$BIN/eulernpu" compile --spec $EX/spec.yaml --weights $EX/weights.npz --out "$T/$ex" >/dev/null
	ID=$(/usr/bin/python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['id'])" "$T/$ex/manifest.json")
	avg "$ex: eulernpu validate" "$BIN/eulernpu" validate $EX/spec.yaml
	avg "$ex: eulernpu compile (cache hit)" sh -c "rm -rf '$T/o' && '$BIN/eulernpu' compile --spec $EX/spec.yaml --weights $EX/weights.npz --out '$T/o'"
	avg "$ex: eulernpu run" "$BIN/eulernpu" run --artifact "$T/$ex" --input $EX/input.npz --out "$T/r.npz"
	# the server's share: request to answer, as curl measures it (no process start-up)
	for _ in $(seq "$N"); do
		curl -sf -o /dev/null -w '%{time_total}\n' --unix-socket "$T/s" -F artifact="$ID" \
			-F input=@$EX/input.npz 'http://localhost/v1/jobs?wait=30'
	done | sort -n | awk -v l="$ex: POST /v1/jobs?wait, server side" \
		'{ v[NR] = $1 } END { printf "%-40s %8.2f ms (p50), %.2f ms (p90)\n", l, v[int(NR/2)+1]*1000, v[int(NR*0.9)]*1000 }'
done
echo "(each eulernpu process also pays ~12 ms of libcurl's library start-up on Debian)"
