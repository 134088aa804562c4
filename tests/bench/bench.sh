#!/usr/bin/env bash
# bench.sh: `make bench`. Each row of issue 14's table, ours against a named
# anchor, measured in this one run, interleaved round by round (or
# repetition by repetition inside kbench) so that the machine's load falls
# on both alike. Prints a Markdown table: what, ours, anchor, ratio (the
# anchor's time over ours: above 1 we are faster; for req/s rows ours over
# the anchor's). A benchmark, never a test: nothing here asserts a speed.
#
#   BENCH_SIZE=full (default) | tiny   tiny: small sizes and few rounds
#                                      (make test runs it to prove it works)
#   BENCH_ROUNDS=N                     rounds of the interleaved rows
#   ENPU_BIN=DIR                       our binaries (default bin)
#   BENCH_ONLY="kernels models npusim http compile plan"
#                                      the groups of rows to run (all)
#
# Anchors: OpenBLAS 0.3 (Debian's libopenblas-dev) sgemm; im2col +
# OpenBLAS for the conv; PyTorch (python3-torch, 1 thread, the same
# model and weights as `eulernpu import` gets); cpu_ref for npu_sim; nginx
# serving a 200-byte file, both under wrk (16 connections); one server for
# two behind nginx (examples/lab-balancer/, the same jobs); cp and openssl
# dgst -sha256 for the compiles, and the local compile (its upload
# included) for a remote cache hit (nginx WebDAV); the lower bound for the
# memory plan.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${ENPU_BIN:-bin}
case "$BIN" in /*) ;; *) BIN=$ROOT/$BIN ;; esac
KB=${KBENCH:-$ROOT/build/bench/kbench}
PY=/usr/bin/python3
SIZE=${BENCH_SIZE:-full}
if [ "$SIZE" = tiny ]; then
	ROUNDS=${BENCH_ROUNDS:-1} REPS=3 GEMM_N="64 128" MODELS="transformer" HTTP_S=1
	BIG_MIB=8 SIM_HW=14
else
	ROUNDS=${BENCH_ROUNDS:-5} REPS=9 GEMM_N="256 512 1024" MODELS="resnet18 resnet50 densenet121"
	HTTP_S=5 BIG_MIB=512 SIM_HW=56
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/enpu-bench.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export OPENBLAS_NUM_THREADS=1
ROWS=()
want() { [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]; }
row() { ROWS+=("| $1 | $2 | $3 | $4 |"); echo "  $1: ours $2, anchor $3, ratio $4" >&2; }
med() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
die() { echo "bench: $*" >&2; exit 1; }
[ -x "$KB" ] || die "no $KB: run make bench (it builds it)"
[ -x "$BIN/eulernpud" ] || die "no $BIN/eulernpud"

# ---- kernels: matmul and conv against OpenBLAS (kbench interleaves) --------
if want kernels; then
for th in 1 2; do
	for n in $GEMM_N; do
		l=$("$KB" gemm "$n" "$th" "$REPS") || die "kbench gemm failed"
		o=$(sed 's/.* ours \([0-9.]*\) GFLOP.*/\1/' <<<"$l")
		a=$(sed 's/.* openblas \([0-9.]*\) GFLOP.*/\1/' <<<"$l")
		row "matmul ${n}³, $th thread(s), GFLOP/s" "$o" "OpenBLAS sgemm $a" "$(ratio "$o" "$a")"
	done
	l=$("$KB" conv "$th" "$REPS") || die "kbench conv failed"
	o=$(sed 's/.* ours \([0-9.]*\) GFLOP.*/\1/' <<<"$l")
	a=$(sed 's/.*openblas \([0-9.]*\) GFLOP.*/\1/' <<<"$l")
	row "conv 3×3 64→64 56×56, $th thread(s), GFLOP/s" "$o" "im2col + OpenBLAS $a" "$(ratio "$o" "$a")"
done

fi
# ---- a daemon for the compiles of the rows below ----------------------------
start_daemon() {   # NAME [flags]: Unix socket $T/NAME.sock
	local n=$1; shift
	"$BIN/eulernpud" --socket "$T/$n.sock" --cache "$T/$n.cache" --log "$T/$n.log" "$@" \
		</dev/null >/dev/null 2>>"$T/$n.stderr" &
	PIDS+=($!)
	eval "PID_$n=$!"
	for _ in $(seq 200); do
		curl -sf --max-time 2 --unix-socket "$T/$n.sock" http://localhost/v1/health >/dev/null && return 0
		sleep 0.05
	done
	die "daemon $n did not start: $(tail -3 "$T/$n.stderr" "$T/$n.log" 2>/dev/null)"
}
start_daemon c
enpu() { EULERNPU_SERVER=unix:$T/c.sock "$BIN/eulernpu" "$@"; }

# ---- whole models against PyTorch (1 thread) ----------------------------------
if want models; then
"$PY" examples/resnet18_onnx/export.py "$T/m" $MODELS >/dev/null 2>"$T/export.err" ||
	die "export.py failed: $(tail -3 "$T/export.err")"
for m in $MODELS; do
	enpu import "$T/m/$m/model.onnx" --out "$T/$m.spec" >/dev/null &&
		enpu compile --spec "$T/$m.spec/spec.yaml" --weights "$T/$m.spec/weights.npz" \
			--out "$T/$m.art" >/dev/null || die "import/compile of $m failed"
done
for r in $(seq "$ROUNDS"); do
	for m in $MODELS; do
		"$KB" run 1 "$REPS" "$T/$m.art" "$T/m/$m/input.npz" |
			sed -n 's/.* median \([0-9.]*\) ms/\1/p' >>"$T/$m.ours"
	done
	"$PY" tests/bench/torch_time.py "$REPS" $MODELS >"$T/torch.$r" || die "torch_time.py failed"
	for m in $MODELS; do sed -n "s/^$m median //p" "$T/torch.$r" >>"$T/$m.torch"; done
done
TV=$("$PY" -c 'import torch; print(torch.__version__.split("+")[0])')
for m in $MODELS; do
	o=$(med <"$T/$m.ours") a=$(med <"$T/$m.torch")
	row "$m, 1 thread, ms" "$o" "PyTorch $TV $a" "$(ratio "$a" "$o")"
done

fi
# ---- npu_sim against cpu_ref: conv 32 -> 64 -> 64 ------------------------------
if want npusim; then
"$PY" - "$T/sim" "$SIM_HW" <<'PYEOF'
import os, sys, numpy as np
d, hw = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
open(d + "/spec.yaml", "w").write("""eulernpu: 1
name: sim_conv
backend: cpu_ref
inputs:
  - {name: x, dtype: float32, shape: [1, 32, %d, %d]}
outputs: [y]
weights:
  - {name: w1, dtype: float32, shape: [64, 32, 3, 3]}
  - {name: w2, dtype: float32, shape: [64, 64, 3, 3]}
components:
  - name: body
    ops:
      - {name: c1, op: conv2d, in: [x, w1], out: h, attrs: {pads: [1, 1, 1, 1]}}
      - {name: r1, op: relu, in: [h], out: hr}
      - {name: c2, op: conv2d, in: [hr, w2], out: y, attrs: {pads: [1, 1, 1, 1]}}
""" % (hw, hw))
g = np.random.default_rng(0)
np.savez(d + "/weights.npz", w1=(g.standard_normal((64, 32, 3, 3)) / 17).astype(np.float32),
         w2=(g.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32))
np.savez(d + "/input.npz", x=g.standard_normal((1, 32, hw, hw)).astype(np.float32))
PYEOF
for b in cpu_ref npu_sim; do
	enpu compile --spec "$T/sim/spec.yaml" --weights "$T/sim/weights.npz" --backend "$b" \
		--out "$T/sim.$b" >/dev/null || die "compile of the npu_sim row failed"
done
"$KB" run 1 $((REPS * ROUNDS)) "$T/sim.npu_sim" "$T/sim/input.npz" "$T/sim.cpu_ref" "$T/sim/input.npz" >"$T/sim.out" ||
	die "kbench run failed"
o=$(sed -n 's/^run .*sim.npu_sim .* median \([0-9.]*\) ms/\1/p' "$T/sim.out")
a=$(sed -n 's/^run .*sim.cpu_ref .* median \([0-9.]*\) ms/\1/p' "$T/sim.out")
row "npu_sim run, conv 32→64→64 on ${SIM_HW}×${SIM_HW}, ms" "$o" "cpu_ref $a" "$(ratio "$a" "$o")"

fi
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# ---- HTTP: tiny_mlp jobs and health against nginx's static file (wrk) ----------
if want http; then
start_daemon h --listen 127.0.0.1:0 --port-file "$T/h.port"
HP=$(cat "$T/h.port")
HU=http://127.0.0.1:$HP
M=examples/tiny_mlp
EULERNPU_SERVER=$HU "$BIN/eulernpu" compile --spec $M/spec.yaml --weights $M/weights.npz --out "$T/mlp" >/dev/null ||
	die "tiny_mlp compile failed"
ART=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/mlp/manifest.json")
IN=$(sha256sum $M/input.npz | cut -d' ' -f1)
curl -sf -o /dev/null -T $M/input.npz "$HU/v1/blobs/$IN" || die "input upload failed"
cat >"$T/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '{"artifact":"$ART","input":"$IN"}'
wrk.headers["Content-Type"] = "application/json"
EOF
# the same run as a KServe/Triton client asks for it: OIP v2 JSON infer
EULERNPU_SERVER=$HU "$BIN/eulernpu" deploy "$T/mlp" --name mlp >/dev/null || die "tiny_mlp deploy failed"
OIP_BODY=$("$PY" -c 'import json, sys, numpy as np
x = np.load(sys.argv[1])["x"]
print(json.dumps({"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32",
                              "data": [float("%.9g" % v) for v in x.ravel()]}]}))' $M/input.npz)
cat >"$T/oip.lua" <<EOF
wrk.method = "POST"
wrk.body = '$OIP_BODY'
wrk.headers["Content-Type"] = "application/json"
EOF
NP=$(free_port)
mkdir -p "$T/www" "$T/nginx"
chmod 755 "$T" "$T/www"   # nginx's workers run as another user
head -c 200 /dev/zero | tr '\0' 'x' >"$T/www/f"
cat >"$T/nginx.conf" <<EOF
worker_processes 2;
error_log $T/nginx/error.log;
pid $T/nginx/nginx.pid;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $T/nginx/body;
	proxy_temp_path $T/nginx/proxy;
	fastcgi_temp_path $T/nginx/fastcgi;
	uwsgi_temp_path $T/nginx/uwsgi;
	scgi_temp_path $T/nginx/scgi;
	server { listen 127.0.0.1:$NP; root $T/www; }
}
EOF
nginx -c "$T/nginx.conf" -p "$T/nginx" -g 'daemon off;' </dev/null >/dev/null 2>"$T/nginx.err" &
PIDS+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$NP/f" && break; sleep 0.05; done
curl -sf -o /dev/null "http://127.0.0.1:$NP/f" || die "nginx did not start: $(cat "$T/nginx.err")"
# two lab servers behind the example's nginx (examples/lab-balancer/),
# each with the artifact and the input: wrk sends no session header, so
# its jobs go round robin
for n in n1 n2; do
	start_daemon "$n" --role server --node-id "$n" --listen 127.0.0.1:0 --port-file "$T/$n.port"
done
LP=$(free_port)
LB=http://127.0.0.1:$LP
mkdir -p "$T/lb"
chmod 755 "$T/lb"
sed -e "s/@LISTEN@/127.0.0.1:$LP/" -e "s/@N1@/127.0.0.1:$(cat "$T/n1.port")/" \
	-e "s/@N2@/127.0.0.1:$(cat "$T/n2.port")/" examples/lab-balancer/nginx.conf >"$T/lb/nginx.conf"
nginx -c "$T/lb/nginx.conf" -p "$T/lb/" -e "$T/lb/error.log" -g 'daemon off;' </dev/null >/dev/null 2>"$T/lb.err" &
PIDS+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "$LB/v1/health" && break; sleep 0.05; done
for n in n1 n2; do
	EULERNPU_SERVER=$LB/node/$n "$BIN/eulernpu" run --artifact "$T/mlp" --input $M/input.npz \
		--out "$T/lb.$n.npz" >/dev/null || die "tiny_mlp run on $n through the balancer failed: $(cat "$T/lb.err")"
done
rps() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p'; }
# wrk's median latency in microseconds
p50() { awk '/^ *50%/ {v = $2; u = 1; if (v ~ /ms$/) u = 1000; else if (v ~ /[0-9]s$/) u = 1000000; sub(/[a-z]+$/, "", v); printf "%.0f\n", v * u}'; }
for r in $(seq "$ROUNDS"); do
	wrk -t2 -c16 -d"${HTTP_S}s" -s "$T/post.lua" "$HU/v1/jobs?wait=60" | rps >>"$T/jobs.ours"
	wrk -t2 -c16 -d"${HTTP_S}s" -s "$T/post.lua" "$LB/v1/jobs?wait=60" >"$T/wrk.lb"
	! grep -q 'Non-2xx' "$T/wrk.lb" || die "jobs through the balancer failed: $(grep Non-2xx "$T/wrk.lb")"
	rps <"$T/wrk.lb" >>"$T/jobs.lb"
	wrk -t2 -c16 -d"${HTTP_S}s" -s "$T/oip.lua" "$HU/v2/models/mlp/infer" | rps >>"$T/oip.ours"
	wrk -t1 -c1 -d"${HTTP_S}s" --latency -s "$T/post.lua" "$HU/v1/jobs?wait=60" | p50 >>"$T/jobs.p50"
	wrk -t1 -c1 -d"${HTTP_S}s" --latency -s "$T/oip.lua" "$HU/v2/models/mlp/infer" | p50 >>"$T/oip.p50"
	wrk -t2 -c16 -d"${HTTP_S}s" "$HU/v1/health" | rps >>"$T/health.ours"
	wrk -t2 -c16 -d"${HTTP_S}s" "http://127.0.0.1:$NP/f" | rps >>"$T/nginx.rps"
done
N=$(med <"$T/nginx.rps")
o=$(med <"$T/jobs.ours"); row "tiny_mlp POST /v1/jobs?wait, 16 connections, req/s" "$o" "nginx 200-byte file $N" "$(ratio "$o" "$N")"
o=$(med <"$T/health.ours"); row "GET /v1/health, 16 connections, req/s" "$o" "nginx 200-byte file $N" "$(ratio "$o" "$N")"
J=$(med <"$T/jobs.ours"); o=$(med <"$T/oip.ours")
row "tiny_mlp OIP v2 JSON infer, 16 connections, req/s" "$o" "POST /v1/jobs?wait $J" "$(ratio "$o" "$J")"
J=$(med <"$T/jobs.ours"); o=$(med <"$T/jobs.lb")
row "tiny_mlp POST /v1/jobs?wait through nginx to 2 lab servers, 16 connections, req/s" "$o" "one server $J" "$(ratio "$o" "$J")"
J=$(med <"$T/jobs.p50"); o=$(med <"$T/oip.p50")
row "tiny_mlp OIP v2 JSON infer, 1 connection, p50 µs" "$o" "POST /v1/jobs?wait $J" "$(ratio "$J" "$o")"

fi
# ---- compiles of big weights: a miss against cp, a hit against openssl dgst ----
if want compile; then
"$PY" - "$T/big" "$BIG_MIB" <<'PYEOF'
import os, sys, numpy as np
d, mib = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
n = mib * 1024 * 1024 // 4 // 4096
open(d + "/spec.yaml", "w").write("""eulernpu: 1
name: big_weights
backend: cpu_ref
inputs:
  - {name: x, dtype: float32, shape: [1, %d]}
outputs: [y]
weights:
  - {name: w, dtype: float32, shape: [%d, 4096]}
components:
  - name: only
    ops:
      - {name: mm, op: matmul, in: [x, w], out: y}
""" % (n, n))
w = np.lib.format.open_memmap(d + "/w.npy", mode="w+", dtype=np.float32, shape=(n, 4096))
for i in range(0, n, 4096):
    w[i:i + 4096] = np.random.default_rng(i).standard_normal((min(4096, n - i), 4096), dtype=np.float32)
w.flush()
del w
import zipfile
with zipfile.ZipFile(d + "/weights.npz", "w", zipfile.ZIP_STORED, allowZip64=True) as z:
    z.write(d + "/w.npy", "w.npy")
os.remove(d + "/w.npy")
PYEOF
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
# each timed step from a clean page cache: sync first, so that no step
# pays for the writeback of the one before (cp right after a compile took
# 1.0-1.3 s behind its backlog, 0.15 s without). Then four times the
# weights' size of memory touched and freed: a virtual machine may hand
# memory freed a while ago back to its host (Linux's free page reporting,
# virtio_balloon), and the step that takes it again pays the host's page
# faults: cp of 512 MiB took 0.14 s or 1.3 s by that alone. Each step
# starts with memory just freed, as on a machine without a balloon.
warm_pages() { "$PY" -c "b = bytes(1) * ($BIG_MIB * 4 << 20)"; }
secs() { local t0 t1; sync; warm_pages; t0=$(date +%s.%N); "$@" >/dev/null 2>>"$T/big.err" || die "$* failed: $(tail -2 "$T/big.err")"; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'; }
# The client hashes a file once and keeps its digest by inode, size and
# times (client/digests.c; files unchanged for two seconds), and vouches
# for it to its own daemon, which then need not hash its copy: the miss
# rows are of weights the client has hashed before (a spec changed, a
# fresh cache, another daemon), then of weights it never saw (an empty
# record: it hashes them once, the daemon takes its word), then with the
# record off (EULERNPU_DIGEST_CACHE=off: the client and the daemon both
# hash them).
export XDG_CACHE_HOME=$T/xdg
for _ in $(seq 100); do
	[ $(( $(date +%s) - $(stat -c %Z "$T/big/weights.npz") )) -gt 2 ] && break
	sleep 0.1
done
start_daemon warm --max-upload $(( (BIG_MIB + 64) * 1024 * 1024 ))
EULERNPU_SERVER=unix:$T/warm.sock "$BIN/eulernpu" compile --spec "$T/big/spec.yaml" \
	--weights "$T/big/weights.npz" --out "$T/big.warm" >/dev/null 2>>"$T/big.err" ||
	die "the first compile of the big weights failed: $(tail -2 "$T/big.err")"
kill "$PID_warm"; wait "$PID_warm" 2>/dev/null
rm -rf "$T/warm.cache" "$T/big.warm"
for r in $(seq "$ROUNDS"); do
	start_daemon "b$r" --max-upload $(( (BIG_MIB + 64) * 1024 * 1024 ))
	eval "bp=\$PID_b$r"
	idle=$(rss_kib "$bp")
	bc_() { EULERNPU_SERVER=unix:$T/b$r.sock "$BIN/eulernpu" compile --spec "$T/big/spec.yaml" --weights "$T/big/weights.npz" --out "$1"; }
	secs bc_ "$T/big.miss$r" >>"$T/miss.ours"
	echo $(( ($(hwm_kib "$bp") - idle) / 1024 )) >>"$T/miss.rss"
	secs cp "$T/big/weights.npz" "$T/big.copy" >>"$T/miss.cp"
	rm -f "$T/big.copy"
	# the miss answers once its upload is on the disk: so is this copy
	secs sh -c 'cp "$1" "$2" && sync "$2"' cp_sync "$T/big/weights.npz" "$T/big.copy" >>"$T/miss.cps"
	rm -f "$T/big.copy"
	secs bc_ "$T/big.hit$r" >>"$T/hit.ours"
	secs openssl dgst -sha256 "$T/big/weights.npz" >>"$T/hit.dgst"
	kill "$bp"; wait "$bp" 2>/dev/null
	rm -rf "$T/b$r.cache" "$T/big.miss$r" "$T/big.hit$r"
	for k in new off; do   # a fresh daemon each: a miss again
		start_daemon "$k$r" --max-upload $(( (BIG_MIB + 64) * 1024 * 1024 ))
		secs env XDG_CACHE_HOME="$T/xdg.$k$r" EULERNPU_DIGEST_CACHE=$([ $k = off ] && echo off || echo on) \
			EULERNPU_SERVER=unix:$T/$k$r.sock "$BIN/eulernpu" compile --spec "$T/big/spec.yaml" \
			--weights "$T/big/weights.npz" --out "$T/big.$k$r" >>"$T/$k.ours"
		eval "kill \$PID_$k$r; wait \$PID_$k$r 2>/dev/null"
		rm -rf "$T/$k$r.cache" "$T/big.$k$r"
	done
done
o=$(med <"$T/miss.ours") a=$(med <"$T/miss.cp")
row "compile, cache miss, $BIG_MIB MiB weights, s (daemon peak RSS +$(med <"$T/miss.rss") MiB over idle)" "$o" "cp $a" "$(ratio "$a" "$o")"
a=$(med <"$T/miss.cps")
row "compile, cache miss, $BIG_MIB MiB weights, s, against a copy made durable as the miss's upload is" "$o" "cp + sync FILE $a" "$(ratio "$a" "$o")"
a=$(med <"$T/miss.cp")
o=$(med <"$T/new.ours")
row "compile, cache miss, $BIG_MIB MiB weights the client never hashed (it hashes them once), s" "$o" "cp $a" "$(ratio "$a" "$o")"
o=$(med <"$T/off.ours")
row "compile, cache miss, $BIG_MIB MiB weights, the client's digest record off (both sides hash them), s" "$o" "cp $a" "$(ratio "$a" "$o")"
o=$(med <"$T/hit.ours") a=$(med <"$T/hit.dgst")
row "compile, cache hit, $BIG_MIB MiB weights, s" "$o" "openssl dgst -sha256 $a" "$(ratio "$a" "$o")"

# a remote cache hit (a runner with an empty cache, the artifact from
# nginx WebDAV on loopback) against the local compile that filled it (a
# lab server with an empty cache: the client's upload included), round by
# round; each daemon starts empty, the remote is emptied before A
RP=$(free_port)
RR=$T/remote
mkdir -p "$RR" "$T/rnginx"
chmod 755 "$T" "$T/rnginx"
chmod 777 "$RR"   # nginx's workers (another user when root) write here
cat >"$T/rnginx.conf" <<EOF
worker_processes 1;
error_log $T/rnginx/error.log;
pid $T/rnginx/nginx.pid;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $T/rnginx/body;
	proxy_temp_path $T/rnginx/proxy;
	fastcgi_temp_path $T/rnginx/fastcgi;
	uwsgi_temp_path $T/rnginx/uwsgi;
	scgi_temp_path $T/rnginx/scgi;
	server {
		listen 127.0.0.1:$RP;
		root $RR;
		dav_methods PUT DELETE;
		create_full_put_path on;
		dav_access user:rw group:rw all:r;
		client_max_body_size 0;
	}
}
EOF
nginx -c "$T/rnginx.conf" -p "$T/rnginx" -g 'daemon off;' </dev/null >/dev/null 2>"$T/rnginx.err" &
PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$RP/" && break; sleep 0.05; done
curl -s -o /dev/null "http://127.0.0.1:$RP/" || die "nginx (WebDAV) did not start: $(cat "$T/rnginx.err")"
openssl genpkey -algorithm ed25519 -out "$T/rsign.key" 2>/dev/null && chmod 600 "$T/rsign.key" &&
	openssl pkey -in "$T/rsign.key" -pubout -out "$T/rsign.pub" 2>/dev/null || die "openssl genpkey failed"
rmetric() { curl -sf --unix-socket "$T/$1.sock" http://localhost/metrics | awk -v k="$2" '$1 == k { print $2 }'; }
rc_() { EULERNPU_SERVER=unix:$T/$1.sock "$BIN/eulernpu" compile --spec "$T/big/spec.yaml" --weights "$T/big/weights.npz" --out "$2"; }
for r in $(seq "$ROUNDS"); do
	rm -rf "${RR:?}"/*
	start_daemon "ra$r" --max-upload $(( (BIG_MIB + 64) * 1024 * 1024 )) \
		--remote-cache "http://127.0.0.1:$RP" --remote-cache-mode readwrite \
		--remote-cache-sign-key "$T/rsign.key"
	secs rc_ "ra$r" "$T/big.ra$r" >>"$T/rlocal.ours"
	for _ in $(seq 1200); do
		[ "$(rmetric "ra$r" 'eulernpu_remote_cache_uploads_total{result="done"}')" = 1 ] && break
		sleep 0.1
	done
	[ "$(rmetric "ra$r" 'eulernpu_remote_cache_uploads_total{result="done"}')" = 1 ] ||
		die "round $r: the upload to the remote did not finish: $(tail -3 "$T/ra$r.log")"
	eval "kill \$PID_ra$r; wait \$PID_ra$r 2>/dev/null"
	start_daemon "rb$r" --remote-cache "http://127.0.0.1:$RP" --remote-cache-trust "$T/rsign.pub"
	secs rc_ "rb$r" "$T/big.rb$r" >>"$T/rhit.ours"
	[ "$(rmetric "rb$r" 'eulernpu_remote_cache_lookups_total{result="hit"}')" = 1 ] ||
		die "round $r: no remote hit: $(tail -3 "$T/rb$r.log")"
	eval "kill \$PID_rb$r; wait \$PID_rb$r 2>/dev/null"
	rm -rf "$T/ra$r.cache" "$T/rb$r.cache" "$T/big.ra$r" "$T/big.rb$r"
done
rm -rf "${RR:?}"/*
o=$(med <"$T/rhit.ours") a=$(med <"$T/rlocal.ours")
row "compile, remote cache hit (nginx WebDAV on loopback, empty local cache), $BIG_MIB MiB weights, s" "$o" "local compile and upload $a" "$(ratio "$a" "$o")"

fi
# ---- the memory plan against its lower bound -----------------------------------
if want plan; then
# the planner's arena (plan.json) over the bound it records, for the models
# compiled above and the examples (1.00: the bound is reached)
for a in "$T"/*.art "$T/sim.cpu_ref" "$T/mlp"; do
	[ -f "$a/plan.json" ] || continue
	read -r arena lower strat < <("$PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))
print(p["arena_bytes"], p.get("lower_bound", 0), p.get("strategy", "?"))' "$a/plan.json")
	row "memory plan, $(basename "$a" .art), bytes ($strat)" "$arena" "lower bound $lower" "$(ratio "$lower" "$arena")"
done

fi
echo "| what | ours | anchor | ratio |"
echo "| --- | --- | --- | --- |"
printf '%s\n' "${ROWS[@]}"
echo "bench: $SIZE, $ROUNDS round(s), $(nproc) cores, isa $("$KB" gemm 16 1 1 | sed 's/.*isa \([a-z0-9]*\).*/\1/')"
