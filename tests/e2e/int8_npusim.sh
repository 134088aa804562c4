#!/usr/bin/env bash
# int8_npusim.sh: npu_sim lowers spec v3's quantised ops (docs/npu-sim.md,
# "int8"). A small int8 model (quantize_linear, qlinear_conv with a bias,
# conv_integer, dequantize_linear, qlinear_matmul, matmul_integer) compiles
# and runs on npu_sim with cpu_ref's bytes (compare --exact), on the
# default target and on a ws target with 2 kernel threads; report.json and
# `eulernpu report` show the quantised ops with their cycles (SCALE-Sim's
# formula on the op's M, N, K) and their DRAM bytes in each tensor's own
# element size (int8 1, int32 4, float32 4: the numbers are worked out here
# from the shapes); scalesim_compat needs no word_bytes for them; a
# target's `ops:` list can leave one out (E0210).
. "$(dirname "$0")/lib.sh"
enpu() { timeout 120 "$BIN/eulernpu" "$@"; }
start_daemon n2 --threads 2 || { finish; exit 1; }

cat >"$TMP/q.yaml" <<'YAML'
eulernpu: 3
name: int8_npu
inputs:
  - {name: x, dtype: float32, shape: [1, 4, 10, 10]}
  - {name: a, dtype: int8, shape: [6, 32]}
outputs: [y, acc, mq, mi]
weights:
  - {name: xs, dtype: float32, shape: []}
  - {name: xz, dtype: int8, shape: []}
  - {name: w, dtype: int8, shape: [8, 4, 3, 3]}
  - {name: ws, dtype: float32, shape: [8]}
  - {name: wz, dtype: int8, shape: [8]}
  - {name: ys, dtype: float32, shape: []}
  - {name: yz, dtype: int8, shape: []}
  - {name: bias, dtype: int32, shape: [8]}
  - {name: as, dtype: float32, shape: []}
  - {name: az, dtype: int8, shape: []}
  - {name: b, dtype: int8, shape: [32, 10]}
  - {name: bs, dtype: float32, shape: []}
  - {name: bz, dtype: int8, shape: []}
  - {name: ms, dtype: float32, shape: []}
  - {name: mz, dtype: int8, shape: []}
components:
  - name: conv
    ops:
      - {name: q, op: quantize_linear, in: [x, xs, xz], out: xq}
      - {name: c, op: qlinear_conv, in: [xq, xs, xz, w, ws, wz, ys, yz, bias], out: yq}
      - {name: d, op: dequantize_linear, in: [yq, ys, yz], out: y}
      - {name: ci, op: conv_integer, in: [xq, w, xz, wz], out: acc}
  - name: fc
    ops:
      - {name: m, op: qlinear_matmul, in: [a, as, az, b, bs, bz, ms, mz], out: mq}
      - {name: mm, op: matmul_integer, in: [a, b, az, bz], out: mi}
YAML
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
d = sys.argv[1]
r = np.random.default_rng(1717)
f32 = np.float32
np.savez(d + "/w.npz", xs=f32(0.05), xz=np.int8(3),
         w=r.integers(-128, 128, (8, 4, 3, 3)).astype(np.int8),
         ws=(r.random(8) * 0.01 + 0.001).astype(f32), wz=r.integers(-5, 6, 8).astype(np.int8),
         ys=f32(0.3), yz=np.int8(-7), bias=r.integers(-3000, 3000, 8).astype(np.int32),
         **{"as": f32(0.02)}, az=np.int8(-1), b=r.integers(-128, 128, (32, 10)).astype(np.int8),
         bs=f32(0.01), bz=np.int8(2), ms=f32(0.9), mz=np.int8(4))
np.savez(d + "/in.npz", x=(r.standard_normal((1, 4, 10, 10)) * 4).astype(f32),
         a=r.integers(-128, 128, (6, 32)).astype(np.int8))
PYEOF
check "inputs made" test -s "$TMP/in.npz"

# ---- the same bytes as cpu_ref, at any thread count and dataflow --------------
check "compiles on cpu_ref" enpu compile --spec "$TMP/q.yaml" --weights "$TMP/w.npz" --out "$TMP/ref"
check "runs on cpu_ref" enpu run --artifact "$TMP/ref" --input "$TMP/in.npz" --out "$TMP/ref.npz"
out=$(enpu compile --spec "$TMP/q.yaml" --weights "$TMP/w.npz" --backend npu_sim --out "$TMP/npu"); rc=$?
expect_match "compiles on npu_sim" "$out $rc" '^Compile  OK: 6 ops lowered · plan written 0$'
out=$(enpu run --artifact "$TMP/npu" --input "$TMP/in.npz" --out "$TMP/npu.npz" --report "$TMP/npu.json"); rc=$?
expect_eq "runs on npu_sim" "$rc" 0
expect_match "run prints the npu_sim summary" "$(sed -n 2p <<<"$out")" '^npu_sim    : [0-9]+ cycles · '
out=$(enpu compare --got "$TMP/npu.npz" --expected "$TMP/ref.npz" --exact); rc=$?
expect_eq "npu_sim equals cpu_ref bit for bit" "$out $rc" "Compare  OK: 4 tensors · bytes equal 0"
printf 'array: [8, 4]\ndataflow: ws\nsram_kib: {ifmap: 1, filter: 1, ofmap: 1}\n' >"$TMP/ws.yaml"
check "compiles on a small ws array (the 2-thread daemon)" env EULERNPU_SERVER="unix:$TMP/n2.sock" \
	"$BIN/eulernpu" compile --spec "$TMP/q.yaml" --weights "$TMP/w.npz" --backend npu_sim \
	--target "$TMP/ws.yaml" --out "$TMP/ws"
check "runs with 2 kernel threads" env EULERNPU_SERVER="unix:$TMP/n2.sock" \
	"$BIN/eulernpu" run --artifact "$TMP/ws" --input "$TMP/in.npz" --out "$TMP/ws.npz" \
	--report "$TMP/ws.json"
check "ws, 2 threads: cpu_ref's bytes" enpu compare --got "$TMP/ws.npz" --expected "$TMP/ref.npz" --exact

# ---- the report: lowering, cycles, bytes per operand -------------------------
# Everything fits the default target's 64 KiB SRAMs: each operand is read
# once, in its tensor's element size; bias, scales and zero points are read
# with the filter. Cycles: SCALE-Sim's os formula on 16x16.
check "report: the quantised ops' costs, worked out from the shapes" "$PY" - "$TMP/npu.json" <<'PYEOF'
import sys, json
ops = {o["name"]: o for o in json.load(open(sys.argv[1]))["npu"]["ops"]}
def cdiv(a, b): return -(-a // b)
def os_cycles(M, N, K, R=16, C=16): return cdiv(M, R) * cdiv(N, C) * (K + R + C - 2)
want = {  # name: (lowering, M, N, K, dram ifmap read, filter read, ofmap write)
    "c": ("gemm", 64, 8, 36, 400, 288 + 8 * 4 + (1 + 8 + 1) * 4 + (1 + 8 + 1), 512),
    "ci": ("gemm", 64, 8, 36, 400, 288 + 1 + 8, 512 * 4),
    "m": ("gemm", 6, 10, 32, 192, 320 + 3 * 4 + 3, 60),
    "mm": ("gemm", 6, 10, 32, 192, 320 + 2, 60 * 4),
}
for n, (low, M, N, K, di, df, do) in want.items():
    o = ops[n]
    assert o["lowering"] == low, (n, o["lowering"])
    g = o["gemm"]
    assert (g["M"], g["N"], g["K"]) == (M, N, K), (n, g)
    assert o["compute_cycles"] == os_cycles(M, N, K), (n, o["compute_cycles"])
    got = (o["dram"]["ifmap"]["read_bytes"], o["dram"]["filter"]["read_bytes"],
           o["dram"]["ofmap"]["write_bytes"])
    assert got == (di, df, do), (n, got, (di, df, do))
# quantize_linear: 3 passes over 400 outputs on 16 lanes, reads f32 + scale + zp, writes int8
q, d = ops["q"], ops["d"]
assert q["lowering"] == "vector" and q["passes"] == 3 and q["compute_cycles"] == 25 * 3, q
assert q["dram"]["ifmap"]["read_bytes"] == 1600 + 4 + 1 and q["dram"]["ofmap"]["write_bytes"] == 400, q
assert d["passes"] == 2 and d["compute_cycles"] == 32 * 2, d
assert d["dram"]["ifmap"]["read_bytes"] == 512 + 4 + 1 and d["dram"]["ofmap"]["write_bytes"] == 2048, d
PYEOF
out=$(enpu report "$TMP/npu.json"); rc=$?
expect_eq "report FILE exits 0" "$rc" 0
expect_match "report: qlinear_conv's row, gemm, its shape and cycles" "$out" \
	"
c +gemm +64×8×36 +4 +264 +0 "
expect_match "report: quantize_linear's row" "$out" "
q +vector +400 elem +- +75 +0 "

# ---- scalesim_compat: no word_bytes needed; -1 per GEMM ---------------------
printf 'scalesim_compat: true\n' >"$TMP/compat.yaml"
check "compiles in scalesim_compat without word_bytes" enpu compile --spec "$TMP/q.yaml" \
	--weights "$TMP/w.npz" --backend npu_sim --target "$TMP/compat.yaml" --out "$TMP/compat"
check "runs in scalesim_compat" enpu run --artifact "$TMP/compat" --input "$TMP/in.npz" \
	--out "$TMP/compat.npz" --report "$TMP/compat.json"
check "compat: cpu_ref's bytes" enpu compare --got "$TMP/compat.npz" --expected "$TMP/ref.npz" --exact
check "compat: each int8 GEMM one cycle less, int8 words of 1 byte, no bias" "$PY" - "$TMP/npu.json" "$TMP/compat.json" <<'PYEOF'
import sys, json
a = {o["name"]: o for o in json.load(open(sys.argv[1]))["npu"]["ops"]}
b = {o["name"]: o for o in json.load(open(sys.argv[2]))["npu"]["ops"]}
for n in ("c", "m"):
    assert b[n]["compute_cycles"] == a[n]["compute_cycles"] - 1, n
    # SCALE-Sim's ofmap writes: the int8 outputs once, 1 byte each
    assert b[n]["dram"]["ofmap"]["write_bytes"] == a[n]["gemm"]["M"] * a[n]["gemm"]["N"], n
assert b["c"]["dram"]["filter"]["read_bytes"] == 288, b["c"]["dram"]
PYEOF

# ---- a target's ops: list leaves a quantised op out -------------------------
printf 'ops: [quantize_linear, dequantize_linear, conv_integer, qlinear_matmul, matmul_integer]\n' >"$TMP/noq.yaml"
check_status "ops: without qlinear_conv: compile exits 2" 2 enpu compile --spec "$TMP/q.yaml" \
	--weights "$TMP/w.npz" --backend npu_sim --target "$TMP/noq.yaml" --out "$TMP/noq"
expect_eq "E0210" "$(sed -n 1p "$TMP/last.err")" "error[E0210]: backend lowering missing for op"
expect_match "names op c" "$(sed -n 2p "$TMP/last.err")" "'c'"
finish
