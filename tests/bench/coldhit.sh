#!/usr/bin/env bash
# coldhit.sh: the server's time for a cache-hit compile and for a job
# submission (POST /v1/jobs, not waiting), on a daemon just started over a
# cache that already holds the artifact: the case where an older daemon had
# to load and verify the whole artifact (weights included) to answer. Two or
# more builds, interleaved round by round so that machine load falls on all
# alike; each round copies a cache that build made itself. A benchmark, not
# a test. Prints the median of each build, in ms, as curl measures it.
#
# Usage: tests/bench/coldhit.sh [-n ROUNDS] [-m tiny_mlp|big] [-w] BINDIR...
#   big: one matmul 2048 x 4096 (32 MiB of weights), made here with NumPy.
#   -w: the job's POST waits for the job to end (?wait=60), so its time
#       includes the artifact load wherever a build does it.
set -eu
cd "$(dirname "$0")/../.."
N=7 MODEL=tiny_mlp WAIT=0
while getopts n:m:w o; do
	case $o in n) N=$OPTARG ;; m) MODEL=$OPTARG ;; w) WAIT=60 ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n ROUNDS] [-m tiny_mlp|big] [-w] BINDIR..." >&2; exit 2; }
T=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$T"' EXIT

if [ "$MODEL" = big ]; then
	M=$T/model
	mkdir -p "$M"
	cat >"$M/spec.yaml" <<'EOF'
eulernpu: 1
name: big_matmul
backend: cpu_ref
inputs:
  - {name: x, dtype: float32, shape: [1, 2048]}
outputs: [y]
weights:
  - {name: w, dtype: float32, shape: [2048, 4096]}
components:
  - name: only
    ops:
      - {name: mm, op: matmul, in: [x, w], out: y}
EOF
	/usr/bin/python3 - "$M" <<'EOF'
import sys, numpy as np
r = np.random.default_rng(1)
np.savez(sys.argv[1] + "/weights.npz", w=(r.standard_normal((2048, 4096)) / 45).astype(np.float32))
np.savez(sys.argv[1] + "/input.npz", x=r.standard_normal((1, 2048)).astype(np.float32))
EOF
else
	M=examples/$MODEL
fi
sha() { sha256sum "$1" | cut -c1-64; }
DS=$(sha "$M/spec.yaml") DW=$(sha "$M/weights.npz") DI=$(sha "$M/input.npz")

start() {   # start BINDIR CACHE: a daemon on $T/s
	rm -f "$T/s"
	"$1/eulernpud" --socket "$T/s" --cache "$2" --log "$T/log" </dev/null >/dev/null 2>&1 &
	PID=$!
	for _ in $(seq 200); do
		curl -sf --unix-socket "$T/s" http://localhost/v1/health >/dev/null && return 0
		sleep 0.05
	done
	echo "daemon of $1 did not start" >&2; exit 1
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }
post() {    # post PATH JSON: curl's time_total in ms
	curl -sf -o "$T/ans" -w '%{time_total}' --unix-socket "$T/s" -H 'Content-Type: application/json' \
		-d "$2" "http://localhost$1" | awk '{ printf "%.2f", $1 * 1000 }'
}
compile_req="{\"spec\":\"$DS\",\"weights\":\"$DW\"}"

# each build fills its own cache once: blobs, then the compile (a miss)
i=0
for b in "$@"; do
	mkdir -m 700 "$T/cache$i"
	start "$b" "$T/cache$i"
	for f in "$M/spec.yaml" "$M/weights.npz" "$M/input.npz"; do
		curl -sf -o /dev/null --unix-socket "$T/s" -T "$f" "http://localhost/v1/blobs/$(sha "$f")"
	done
	post /v1/compile "$compile_req" >/dev/null
	ART[$i]=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["artifact"])' "$T/ans")
	stop
	i=$((i + 1))
done

for r in $(seq "$N"); do
	i=0
	for b in "$@"; do
		rm -rf "$T/run"
		cp -a "$T/cache$i" "$T/run"
		rm -f "$T/run/lock"
		start "$b" "$T/run"
		echo "$i compile $(post /v1/compile "$compile_req")" >>"$T/times"
		echo "$i job $(post "/v1/jobs?wait=$WAIT" "{\"artifact\":\"${ART[$i]}\",\"input\":\"$DI\"}")" >>"$T/times"
		stop
		i=$((i + 1))
	done
done

i=0
for b in "$@"; do
	for what in compile job; do
		awk -v i=$i -v w=$what '$1 == i && $2 == w { print $3 }' "$T/times" | sort -n |
			awk -v l="$b ($MODEL): $what$([ "$what" = job ] && [ "$WAIT" != 0 ] && echo ' to its end'), cache hit on a fresh daemon" \
			'{ v[NR] = $1 } END { printf "%-60s %8.2f ms (median of %d)\n", l, v[int((NR + 1) / 2)], NR }'
	done
	i=$((i + 1))
done
