#!/usr/bin/env bash
# v2ops.sh: spec v2 (`eulernpu: 2`) end to end. A chain of the v2 unary ops
# validates, compiles and runs on every backend with the same bytes as
# cpu_ref, which lies within 1e-5 of NumPy float64; the v2 op cases of
# tests/data/ops do the same one op at a time; a v1 spec using a v2 op gets
# the three-line error naming its line:col; `backends` lists the v2 ops.
# A chain of the data movement ops (pad, slice, unsqueeze, squeeze) gives
# NumPy's bytes on every backend; a wrong attribute is E0209 at its line:col.
# Reductions and layer_norm: a chain of them the same way, and a duplicate
# axis's error. conv_transpose2d and resize lower where docs/npu-sim.md and
# fpga_board say, and their attribute errors name the op's line:col.
# Then the elementwise ops pow, min, max, prelu and the activations: a
# chain of all eight (tests/data/specs/good/v2_ew.yaml) the same way, and
# pow/elu/softplus within 1 ulp of NumPy (Annex F's pow cases exact).
# A v1 spec giving a v1 op an attribute v2 added (ceil_mode) gets the
# three-line error at the attribute.
# split (several outputs) feeds later ops and the graph's outputs; gather
# reads int64 indices from weights.npz, and an index out of range fails
# compile (E0304), an int64 weight read by another op fails validate.
. "$(dirname "$0")/lib.sh"
# zynq_ps and fpga_board run on a board agent the server fronts
start_fronted_board v2 || { finish; exit 1; }
OPS=$ROOT/tests/data/ops
BACKENDS="cpu_ref npu_sim zynq_ps fpga_board"

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

# split: several outputs, read by later ops (one of them a split too) and
# named in the graph's outputs, on every backend, within 1e-5 of NumPy
cat >"$TMP/split.yaml" <<'YAML'
eulernpu: 2
name: v2_split_chain
inputs:
  - {name: x, dtype: float32, shape: [2, 6]}
outputs: [a, y, c1]
weights: []
components:
  - name: main
    ops:
      - {name: s, op: split, in: [x], out: [a, b, c], attrs: {axis: -1, split: [1, 2, 3]}}
      - {name: e, op: exp, in: [b], out: eb}
      - {name: t, op: split, in: [c], out: [c0, c1, c2], attrs: {axis: 1}}
      - {name: m, op: concat, in: [c2, eb, c0], out: y, attrs: {axis: 1}}
YAML
"$PY" - "$TMP/split_in.npz" "$TMP/split_expected.npz" <<'PYEOF'
import sys
import numpy as np
x = np.random.default_rng(13).standard_normal((2, 6)).astype(np.float32)
np.savez(sys.argv[1], x=x)
X = x.astype(np.float64)
a, b, c = X[:, :1], X[:, 1:3], X[:, 3:]
y = np.concatenate([c[:, 2:3], np.exp(b), c[:, 0:1]], axis=1)
np.savez(sys.argv[2], a=a.astype(np.float32), y=y.astype(np.float32),
         c1=c[:, 1:2].astype(np.float32))
PYEOF
run_all split "$TMP/split.yaml" "$OPS/v2_split_equal/weights.npz" "$TMP/split_in.npz"
check "split: cpu_ref within 1e-5 of numpy float64" "$BIN/eulernpu" compare \
	--got "$TMP/split.cpu_ref.npz" --expected "$TMP/split_expected.npz" --tol 1e-5 --rtol 1e-5
sed 's/split: \[1, 2, 3\]/split: [1, 2, 2]/' "$TMP/split.yaml" >"$TMP/split_bad.yaml"
check_status "split sizes not summing to the dim are refused" 2 "$BIN/eulernpu" validate \
	"$TMP/split_bad.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "split error: code" "$err" "^error\\[E0206\\]"
expect_match "split error: line:col and message" "$err" \
	"split_bad.yaml:10:9: op 's': split sizes sum to 5, dimension 1 of x is 6"

# gather with int64 indices (a weight, through the daemon's weights upload)
# after a split, on every backend, within 1e-5 of NumPy
cat >"$TMP/gather.yaml" <<'YAML'
eulernpu: 2
name: v2_gather_chain
inputs:
  - {name: x, dtype: float32, shape: [3, 8]}
outputs: [y]
weights:
  - {name: idx, dtype: int64, shape: [2, 3]}
components:
  - name: main
    ops:
      - {name: s, op: split, in: [x], out: [a, b], attrs: {axis: 1}}
      - {name: g, op: gather, in: [b, idx], out: h, attrs: {axis: -1}}
      - {name: e, op: exp, in: [h], out: y}
YAML
"$PY" - "$TMP/gather_in.npz" "$TMP/gather_w.npz" "$TMP/gather_expected.npz" "$TMP/gather_bad.npz" <<'PYEOF'
import sys
import numpy as np
x = np.random.default_rng(17).standard_normal((3, 8)).astype(np.float32)
idx = np.array([[3, -1, 0], [-4, 2, 2]], dtype=np.int64)
np.savez(sys.argv[1], x=x)
np.savez(sys.argv[2], idx=idx)
b = x.astype(np.float64)[:, 4:]
np.savez(sys.argv[3], y=np.exp(np.take(b, idx, axis=1)).astype(np.float32))
np.savez(sys.argv[4], idx=np.array([[3, -1, 0], [-5, 2, 2]], dtype=np.int64))
PYEOF
run_all gather "$TMP/gather.yaml" "$TMP/gather_w.npz" "$TMP/gather_in.npz"
check "gather: cpu_ref within 1e-5 of numpy float64" "$BIN/eulernpu" compare \
	--got "$TMP/gather.cpu_ref.npz" --expected "$TMP/gather_expected.npz" --tol 1e-5 --rtol 1e-5
check_status "gather index out of range fails compile" 2 "$BIN/eulernpu" compile \
	--spec "$TMP/gather.yaml" --weights "$TMP/gather_bad.npz" --out "$TMP/gather_bad"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "gather error: code" "$err" "^error\\[E0304\\]"
expect_match "gather error: line:col and message" "$err" \
	"gather.yaml:12:9: op 'g' \\(gather\\): index -5 at position 3 of 'idx' is out of range \\[-4, 3\\]"
sed 's/out: y}$/out: y0}\n      - {name: z, op: add, in: [y0, idx], out: y}/' "$TMP/gather.yaml" \
	>"$TMP/gather_add.yaml"
check_status "an int64 weight read by add is refused" 2 "$BIN/eulernpu" validate \
	"$TMP/gather_add.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "int64 add error: code" "$err" "^error\\[E0207\\]"
expect_match "int64 add error: line:col and message" "$err" \
	"gather_add.yaml:14:37: op 'z' \\(add\\) reads 'idx' \\(int64\\) as input 2, which must be float32"

# a v1 spec with a v2 op: E0208 at the op's line:col, and the fix says v2
sed 's/^eulernpu: 2/eulernpu: 1/' "$TMP/chain.yaml" >"$TMP/v1.yaml"
check_status "v1 spec using erf is refused" 2 "$BIN/eulernpu" validate "$TMP/v1.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "v1 error: code" "$err" "^error\\[E0208\\]"
expect_match "v1 error: line:col and message" "$err" \
	"v1.yaml:10:23: op 'erf' needs eulernpu: 2 \\(this spec is eulernpu: 1\\)"
expect_match "v1 error: the fix" "$err" "fix: write 'eulernpu: 2' at the top of the spec"

# conv_transpose2d and resize: npu_sim lowers conv_transpose2d as a GEMM and
# resize as vector passes; fpga_board runs both on its PS
for c in conv_transpose2d_basic:conv_transpose2d:npu_sim.gemm resize_linear_half_up:resize:npu_sim.vector.resize; do
	IFS=: read -r case op kernel <<<"$c"
	expect_match "$op: npu_sim lowering" "$(cat "$TMP/v2_$case.npu_sim/graph.json")" "\"$kernel\""
	expect_match "$op: fpga_board runs it on the PS" \
		"$(cat "$TMP/v2_$case.fpga_board/graph.json")" "\"fpga_board.ps.$op\""
done
# their attribute errors: the three lines, at the op's line:col
BAD=$ROOT/tests/data/specs/bad
for c in "convt_output_padding:E0206:12:9:output_padding must be >= 0 and smaller than the stride or the dilation" \
	"resize_scales_and_sizes:E0206:11:9:give one of 'scales' and 'sizes', not both" \
	"resize_no_scales_or_sizes:E0209:11:9:missing required attribute: one of 'scales' or 'sizes'" \
	"v1_uses_resize:E0208:11:24:op 'resize' needs eulernpu: 2"; do
	IFS=: read -r f code line col msg <<<"$c"
	check_status "$f is refused" 2 "$BIN/eulernpu" validate "$BAD/$f.yaml"
	err=$(cat "$TMP/last.out" "$TMP/last.err")
	expect_match "$f: code" "$err" "^error\\[$code\\]"
	expect_match "$f: line:col and message" "$err" "$f.yaml:$line:$col: .*$msg"
	expect_match "$f: a fix or a See: line" "$err" "(fix:|See:)"
done

out=$("$BIN/eulernpu" backends 2>&1)
for op in exp log sqrt neg abs reciprocal erf conv_transpose2d resize; do
	expect_match "backends: $op lowers on all four" "$out" "^$op +yes +yes +yes +yes$"
done
for op in pad slice squeeze unsqueeze; do
	expect_match "backends: $op lowers on all four" "$out" "^$op +yes +yes +yes +yes$"
done

# data movement: pad (crop and reflect) -> slice (INT64 ends, negative
# steps) -> unsqueeze -> squeeze on every backend, the same bytes as cpu_ref,
# and cpu_ref's bytes equal to NumPy's (np.pad and Python slicing: no
# arithmetic, so exact)
cat >"$TMP/move.yaml" <<'YAML'
eulernpu: 2
name: v2_move_chain
inputs:
  - {name: x, dtype: float32, shape: [2, 3, 5]}
outputs: [y]
weights: []
components:
  - name: main
    ops:
      - {name: p, op: pad, in: [x], out: h1, attrs: {pads: [0, -1, 2, 1, 1, 3], mode: reflect}}
      - {name: s, op: slice, in: [h1], out: h2, attrs: {starts: [-1, 9223372036854775807], ends: [-9223372036854775808, 0], axes: [2, 0], steps: [-2, -1]}}
      - {name: u, op: unsqueeze, in: [h2], out: h3, attrs: {axes: [0, -2]}}
      - {name: q, op: squeeze, in: [h3], out: y, attrs: {axes: [0]}}
YAML
"$PY" - "$TMP/move_in.npz" "$TMP/move_expected.npz" <<'PYEOF'
import sys
import numpy as np
x = np.random.default_rng(7).standard_normal((2, 3, 5)).astype(np.float32)
x[0, 0, :3] = [np.nan, -0.0, np.inf]
np.savez(sys.argv[1], x=x)
h = np.pad(x[:, 1:, :], ((0, 1), (0, 1), (2, 3)), mode="reflect")
h = h[2**63 - 1:0:-1, :, -1:-2**63:-2]
np.savez(sys.argv[2], y=np.expand_dims(h, -2))
PYEOF
run_all move "$TMP/move.yaml" "$OPS/v2_abs/weights.npz" "$TMP/move_in.npz"
check "move chain: cpu_ref equals numpy bit for bit" "$BIN/eulernpu" compare \
	--got "$TMP/move.cpu_ref.npz" --expected "$TMP/move_expected.npz" --exact

# a wrong attribute: E0209 at the entry's line:col, naming it
sed 's/steps: \[-2, -1\]/steps: [-2, 0]/' "$TMP/move.yaml" >"$TMP/zero_step.yaml"
check_status "slice with a zero step is refused" 2 "$BIN/eulernpu" validate "$TMP/zero_step.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "zero step: code" "$err" "^error\\[E0209\\]"
expect_match "zero step: line:col of the entry and message" "$err" \
	"zero_step.yaml:11:151: op 's' \\(slice\\): attribute 'steps'\\[1\\] is 0: a step must not be 0"

# reductions and layer_norm (v2): a chain (layer_norm with scale and bias,
# layer_norm over two dims, reduce_mean/max/sum/min with negative axes and
# keepdims 0/1) on every backend, byte-equal to cpu_ref, and cpu_ref within
# 1e-5 of NumPy float64; 'backends' lists them; a bad axes list gets its
# three-line error at the op's line:col.
cat >"$TMP/rchain.yaml" <<'YAML'
eulernpu: 2
name: v2_rchain
inputs:
  - {name: x, dtype: float32, shape: [2, 3, 8]}
outputs: [y, z]
weights:
  - {name: g, dtype: float32, shape: [8]}
  - {name: b, dtype: float32, shape: [8]}
components:
  - name: main
    ops:
      - {name: ln, op: layer_norm, in: [x, g, b], out: h1}
      - {name: ln2, op: layer_norm, in: [h1], out: h2, attrs: {axis: -2, epsilon: 1e-3}}
      - {name: mx, op: reduce_max, in: [h2], out: h3, attrs: {axes: [-1]}}
      - {name: me, op: reduce_mean, in: [h3], out: y, attrs: {axes: [0, -2], keepdims: 0}}
      - {name: mn, op: reduce_min, in: [h2], out: h4, attrs: {axes: [1], keepdims: 0}}
      - {name: sm, op: reduce_sum, in: [h4], out: z, attrs: {keepdims: 0}}
YAML
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
d = sys.argv[1]
r = np.random.default_rng(13)
x = r.standard_normal((2, 3, 8)).astype(np.float32)
g = r.standard_normal(8).astype(np.float32)
b = r.standard_normal(8).astype(np.float32)
np.savez(d + "/rchain_in.npz", x=x)
np.savez(d + "/rchain_w.npz", g=g, b=b)
def ln(v, axes, eps):
    mu = v.mean(axis=axes, keepdims=True)
    var = ((v - mu) ** 2).mean(axis=axes, keepdims=True)
    return (v - mu) / np.sqrt(var + np.float64(np.float32(eps)))
h1 = ln(x.astype(np.float64), (2,), 1e-5) * g + b
h2 = ln(h1, (1, 2), 1e-3)
y = h2.max(axis=2, keepdims=True).mean(axis=(0, 1))
z = h2.min(axis=1).sum()
np.savez(d + "/rchain_expected.npz", y=y.astype(np.float32), z=np.float32(z))
PYEOF
run_all rchain "$TMP/rchain.yaml" "$TMP/rchain_w.npz" "$TMP/rchain_in.npz"
check "rchain: cpu_ref within 1e-5 of numpy float64" "$BIN/eulernpu" compare \
	--got "$TMP/rchain.cpu_ref.npz" --expected "$TMP/rchain_expected.npz" --tol 1e-5 --rtol 1e-5
for op in reduce_mean reduce_sum reduce_max reduce_min layer_norm; do
	expect_match "backends: $op lowers on all four" "$out" "^$op +yes +yes +yes +yes$"
done
sed 's/axes: \[-1\]}/axes: [2, -1]}/' "$TMP/rchain.yaml" >"$TMP/rdup.yaml"
check_status "reduce with axis 2 twice is refused" 2 "$BIN/eulernpu" validate "$TMP/rdup.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "duplicate axes: code" "$err" "^error\\[E0206\\]"
expect_match "duplicate axes: line:col and message" "$err" \
	"rdup.yaml:14:9: op 'mx': axes\\[1\\] names dimension 2 a second time"

# ---- pow, min, max, hard_sigmoid, hard_swish, prelu, elu, softplus --------
# tests/data/specs/good/v2_ew.yaml chains all eight (prelu's slope and pow's
# exponent are weights, max takes three inputs) on every backend, with the
# same bytes as cpu_ref, which lies within 1e-5 of NumPy float64
"$PY" - "$TMP/ew_w.npz" "$TMP/ew_in.npz" "$TMP/ew_expected.npz" <<'PYEOF'
import sys
import numpy as np
r = np.random.default_rng(13)
f32 = np.float32
x = (r.standard_normal((2, 3, 4, 4)) * 1.5).astype(f32)
z = r.standard_normal(4).astype(f32)
slope = r.uniform(-0.5, 0.5, (3, 1, 1)).astype(f32)
e = np.array([3.0], dtype=f32)
np.savez(sys.argv[1], slope=slope, e=e)
np.savez(sys.argv[2], x=x, z=z)
X, Z, S = x.astype(np.float64), z.astype(np.float64), slope.astype(np.float64)
h = X * np.clip(X / 6.0 + 0.5, 0.0, 1.0)
h = np.where(h < 0, S * h, h)
h = np.maximum(np.maximum(h, Z), X)
h = h ** 3.0
h = np.logaddexp(0.0, h)
h = np.where(h >= 0, h, float(f32(0.5)) * np.expm1(np.minimum(h, 0)))
h = np.clip(float(f32(0.1)) * h + float(f32(0.25)), 0.0, 1.0)
np.savez(sys.argv[3], y=h.astype(f32))
PYEOF
run_all ew_chain "$ROOT/tests/data/specs/good/v2_ew.yaml" "$TMP/ew_w.npz" "$TMP/ew_in.npz"
check "ew chain: cpu_ref within 1e-5 of numpy float64" "$BIN/eulernpu" compare \
	--got "$TMP/ew_chain.cpu_ref.npz" --expected "$TMP/ew_expected.npz" --tol 1e-5 --rtol 1e-5
# pow, elu and softplus: cpu_ref within 1 ulp of NumPy's float64 rounded to
# float32 on every element of their cases, and v2_pow's first 50 elements
# (C99 Annex F's special pairs, gen.py's POW_SPECIAL) bit for bit, signed
# zeros and infinities included
ulp_args=()
for c in v2_pow:50 v2_pow_bcast:0 v2_elu:0 v2_elu_alpha:0 v2_softplus:0; do
	ulp_args+=("$TMP/${c%%:*}.cpu_ref.npz" "$OPS/${c%%:*}/expected.npz" "${c#*:}")
done
check "pow, elu, softplus: within 1 ulp of numpy, Annex F cases exact" "$PY" - "${ulp_args[@]}" <<'PYEOF'
import sys
import numpy as np
def key(a):
    u = a.view(np.uint32).astype(np.int64)
    return np.where(u >= 0x80000000, -(u & 0x7fffffff), u)
bad = 0
args = sys.argv[1:]
for i in range(0, len(args), 3):
    g = np.load(args[i])["y"].reshape(-1)
    e = np.load(args[i + 1])["y"].reshape(-1)
    n = int(args[i + 2])
    gn, en = np.isnan(g), np.isnan(e)
    d = np.abs(key(g) - key(e))
    d[gn & en] = 0
    d[gn ^ en] = 1 << 40
    if d.max() > 1:
        j = int(np.argmax(d))
        print("%s: %d ulp at %d: %r vs %r" % (args[i], d[j], j, g[j], e[j]))
        bad += 1
    same = (g[:n].view(np.uint32) == e[:n].view(np.uint32)) | (gn[:n] & en[:n])
    if not same.all():
        j = int(np.argmin(same))
        print("%s: special %d differs: %r vs %r" % (args[i], j, g[j], e[j]))
        bad += 1
    print("%s: max %d ulp over %d, %d exact" % (args[i], d.max(), len(g), n))
sys.exit(1 if bad else 0)
PYEOF
sed 's/^/    # /' "$TMP/last.out"
# the new ops in a v1 spec: E0208
sed 's/^eulernpu: 2/eulernpu: 1/' "$ROOT/tests/data/specs/good/v2_ew.yaml" >"$TMP/v1ew.yaml"
check_status "v1 spec using hard_swish is refused" 2 "$BIN/eulernpu" validate "$TMP/v1ew.yaml"
expect_match "v1 error names hard_swish at its line:col" "$(cat "$TMP/last.out" "$TMP/last.err")" \
	"v1ew.yaml:13:25: op 'hard_swish' needs eulernpu: 2"
out=$("$BIN/eulernpu" backends 2>&1)
for op in pow min max hard_sigmoid hard_swish prelu elu softplus; do
	expect_match "backends: $op lowers on all four" "$out" "^$op +yes +yes +yes +yes$"
done

# v2's attributes on v1 ops (ceil_mode, maxpool2d's dilations): E0209 at the
# attribute in a v1 spec; the same spec as v2 gives the NumPy case's result
# on every backend
cat >"$TMP/v1pool.yaml" <<'YAML'
eulernpu: 1
name: v1_pool
inputs:
  - {name: x, dtype: float32, shape: [1, 2, 7, 8]}
outputs: [y]
weights: []
components:
  - name: main
    ops:
      - {name: p, op: maxpool2d, in: [x], out: y, attrs: {kernel: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], ceil_mode: 1}}
YAML
check_status "v1 spec with ceil_mode is refused" 2 "$BIN/eulernpu" validate "$TMP/v1pool.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "v1 ceil_mode: code" "$err" "^error\\[E0209\\]"
expect_match "v1 ceil_mode: line:col and message" "$err" \
	"v1pool.yaml:10:112: attribute 'ceil_mode' of op 'p' needs eulernpu: 2 \\(this spec is eulernpu: 1\\)"
sed 's/^eulernpu: 1/eulernpu: 2/' "$TMP/v1pool.yaml" >"$TMP/v2pool.yaml"
run_all v2pool "$TMP/v2pool.yaml" "$OPS/v2_maxpool2d_ceil/weights.npz" "$OPS/v2_maxpool2d_ceil/input.npz"
check "v2pool: cpu_ref equals the NumPy case" "$BIN/eulernpu" compare \
	--got "$TMP/v2pool.cpu_ref.npz" --expected "$OPS/v2_maxpool2d_ceil/expected.npz" --exact

out=$("$BIN/eulernpu" backends 2>&1)
for op in exp log sqrt neg abs reciprocal erf conv1d maxpool1d avgpool1d split gather; do
	expect_match "backends: $op lowers on all four" "$out" "^$op +yes +yes +yes +yes$"
done
finish
