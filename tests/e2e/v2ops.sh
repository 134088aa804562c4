#!/usr/bin/env bash
# v2ops.sh: spec v2 (`eulernpu: 2`) end to end. A chain of the v2 unary ops
# validates, compiles and runs on every backend with the same bytes as
# cpu_ref, which lies within 1e-5 of NumPy float64; the v2 op cases of
# tests/data/ops do the same one op at a time; a v1 spec using a v2 op gets
# the three-line error naming its line:col; `backends` lists the v2 ops.
. "$(dirname "$0")/lib.sh"
# zynq_ps and fpga_board run on a board agent the server fronts
printf 'tok-v2ops-%s\n' "$$" >"$TMP/tok"
chmod 600 "$TMP/tok"
start_daemon bd --role board --listen 127.0.0.1:0 --port-file "$TMP/bd.port" \
	--token-file "$TMP/tok" --workers 1 || { finish; exit 1; }
start_daemon v2 --board "b=http://127.0.0.1:$(cat "$TMP/bd.port")" \
	--board-token-file "$TMP/tok" --board-health-interval 1 || { finish; exit 1; }
export EULERNPU_SERVER=unix:$TMP/v2.sock
OPS=$ROOT/tests/data/ops
BACKENDS="cpu_ref npu_sim zynq_ps fpga_board"
for _ in $(seq 100); do
	[ "$(dcurl v2 http://localhost/v1/boards | jget - boards.0.state)" = up ] && break
	sleep 0.1
done

cat >"$TMP/chain.yaml" <<'YAML'
eulernpu: 2
name: v2_chain
inputs:
  - {name: x, dtype: float32, shape: [3, 4, 5]}
outputs: [y]
weights: []
components:
  - name: main
    ops:
      - {name: e, op: erf, in: [x], out: h1}
      - {name: a, op: abs, in: [h1], out: h2}
      - {name: s, op: sqrt, in: [h2], out: h3}
      - {name: n, op: neg, in: [h3], out: h4}
      - {name: x1, op: exp, in: [h4], out: h5}
      - {name: r, op: reciprocal, in: [h5], out: h6}
      - {name: l, op: log, in: [h6], out: y}
YAML
# the chain's NumPy float64 value on the erf case's input (no NaN/Inf out of it)
"$PY" - "$OPS/v2_erf/input.npz" "$TMP/chain_expected.npz" <<'PYEOF'
import math, sys
import numpy as np
x = np.load(sys.argv[1])["x"].astype(np.float64)
x = np.nan_to_num(x, nan=0.0)
e = np.vectorize(math.erf, otypes=[np.float64])(x)
y = np.log(1.0 / np.exp(-np.sqrt(np.abs(e))))
np.savez(sys.argv[2], y=y.astype(np.float32))
PYEOF
# the erf case's input holds a NaN: replace it so the chain's result is finite
"$PY" - "$OPS/v2_erf/input.npz" "$TMP/chain_in.npz" <<'PYEOF'
import sys
import numpy as np
x = np.load(sys.argv[1])["x"]
np.savez(sys.argv[2], x=np.nan_to_num(x, nan=0.0).astype(np.float32))
PYEOF

run_all() {   # run_all NAME SPEC WEIGHTS INPUT: every backend, same bytes as cpu_ref
	local name=$1 spec=$2 weights=$3 input=$4 b
	for b in $BACKENDS; do
		check "$name: validate on $b" "$BIN/eulernpu" validate "$spec" --backend "$b"
		check "$name: compile on $b" "$BIN/eulernpu" compile --spec "$spec" \
			--weights "$weights" --backend "$b" --out "$TMP/$name.$b"
		check "$name: run on $b" "$BIN/eulernpu" run --artifact "$TMP/$name.$b" \
			--input "$input" --out "$TMP/$name.$b.npz"
		[ "$b" = cpu_ref ] && continue
		check "$name: $b equals cpu_ref bit for bit" "$BIN/eulernpu" compare \
			--got "$TMP/$name.$b.npz" --expected "$TMP/$name.cpu_ref.npz" --exact
	done
}

run_all chain "$TMP/chain.yaml" "$OPS/v2_erf/weights.npz" "$TMP/chain_in.npz"
check "chain: cpu_ref within 1e-5 of numpy float64" "$BIN/eulernpu" compare \
	--got "$TMP/chain.cpu_ref.npz" --expected "$TMP/chain_expected.npz" --tol 1e-5 --rtol 1e-5
for d in "$OPS"/v2_*/; do
	run_all "$(basename "$d")" "$d/spec.yaml" "$d/weights.npz" "$d/input.npz"
done

# a v1 spec with a v2 op: E0208 at the op's line:col, and the fix says v2
sed 's/^eulernpu: 2/eulernpu: 1/' "$TMP/chain.yaml" >"$TMP/v1.yaml"
check_status "v1 spec using erf is refused" 2 "$BIN/eulernpu" validate "$TMP/v1.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "v1 error: code" "$err" "^error\\[E0208\\]"
expect_match "v1 error: line:col and message" "$err" \
	"v1.yaml:10:23: op 'erf' needs eulernpu: 2 \\(this spec is eulernpu: 1\\)"
expect_match "v1 error: the fix" "$err" "fix: write 'eulernpu: 2' at the top of the spec"

out=$("$BIN/eulernpu" backends 2>&1)
for op in exp log sqrt neg abs reciprocal erf; do
	expect_match "backends: $op lowers on all four" "$out" "^$op +yes +yes +yes +yes$"
done
finish
