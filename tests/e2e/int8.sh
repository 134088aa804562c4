#!/usr/bin/env bash
# int8.sh: spec v3 (`eulernpu: 3`) end to end. A model of the six quantised
# ops (quantize_linear per tensor into qlinear_conv with per-channel weight
# scales, padding, stride and a bias, dequantize_linear, conv_integer;
# qlinear_matmul with per-column scales and matmul_integer on a uint8
# input) validates, compiles and runs on cpu_ref with the bytes NumPy's
# integer arithmetic gives by ONNX's definition and docs/spec-format.md's
# requantisation rule; on a daemon with --threads 2, and on zynq_ps and
# fpga_board (a board agent, its integer GEMMs on the PL) and npu_sim,
# with the same bytes, as `eulernpu backends` says. transpose, concat
# and flatten move int8 and int32 data byte for byte. The OIP infer route
# takes and answers the integer tensors. Integer results
# compare exactly in tolerance mode too. Type errors (int8 into add, mixed
# zero point) are E0207 at their line:col.
. "$(dirname "$0")/lib.sh"
start_fronted_board q1 || { finish; exit 1; }
start_daemon q2 --threads 2 || { finish; exit 1; }

cat >"$TMP/q.yaml" <<'YAML'
eulernpu: 3
name: int8_tour
inputs:
  - {name: x, dtype: float32, shape: [2, 3, 9, 7]}
  - {name: a, dtype: uint8, shape: [2, 6, 16]}
outputs: [yq, y, acc, mq, mi, mcat, accf]
weights:
  - {name: xs, dtype: float32, shape: []}
  - {name: xz, dtype: int8, shape: []}
  - {name: w, dtype: int8, shape: [4, 3, 3, 3]}
  - {name: ws, dtype: float32, shape: [4]}
  - {name: wz, dtype: int8, shape: [4]}
  - {name: ys, dtype: float32, shape: []}
  - {name: yz, dtype: int8, shape: []}
  - {name: bias, dtype: int32, shape: [4]}
  - {name: as, dtype: float32, shape: [1]}
  - {name: az, dtype: uint8, shape: [1]}
  - {name: b, dtype: uint8, shape: [16, 5]}
  - {name: bs, dtype: float32, shape: [5]}
  - {name: bz, dtype: uint8, shape: [5]}
  - {name: ms, dtype: float32, shape: []}
  - {name: mz, dtype: uint8, shape: []}
components:
  - name: conv
    ops:
      - {name: q, op: quantize_linear, in: [x, xs, xz], out: xq}
      - {name: c, op: qlinear_conv, in: [xq, xs, xz, w, ws, wz, ys, yz, bias], out: yq,
         attrs: {pads: [1, 2, 1, 0], strides: [2, 1]}}
      - {name: d, op: dequantize_linear, in: [yq, ys, yz], out: y}
      - {name: ci, op: conv_integer, in: [xq, w, xz, wz], out: acc, attrs: {pads: [1, 2, 1, 0], strides: [2, 1]}}
  - name: fc
    ops:
      - {name: m, op: qlinear_matmul, in: [a, as, az, b, bs, bz, ms, mz], out: mq}
      - {name: mm, op: matmul_integer, in: [a, b, az, bz], out: mi}
  - name: move
    ops:
      - {name: tr, op: transpose, in: [mq], out: mqt}
      - {name: cc, op: concat, in: [mqt, mqt], out: mcat, attrs: {axis: 0}}
      - {name: fl, op: flatten, in: [acc], out: accf}
YAML
# weights, input and the expected bytes by ONNX's definitions in NumPy
# integer arithmetic; the requantisation as docs/spec-format.md writes it:
# M = fl32(fl32(s_a * s_b) / s_y), y = saturate(zp + rne(float64(acc) * M))
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
d = sys.argv[1]
r = np.random.default_rng(17)
f32 = np.float32
x = (r.standard_normal((2, 3, 9, 7)) * 3).astype(f32)
x[0, 0, 0, :4] = [f32(0.25), f32(-0.25), f32(0.75), f32(1e9)]   # ties, saturation
xs, xz = f32(0.5), np.int8(-3)
w = r.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
ws = np.array([0.01, 0.002, 0.03, 0.0005], f32)
wz = np.array([0, -5, 7, 127], np.int8)
ys, yz = f32(0.2), np.int8(10)
bias = np.array([100, -20000, 3, 2**20], np.int32)
a = r.integers(0, 256, (2, 6, 16)).astype(np.uint8)
as_, az = np.array([0.03], f32), np.array([128], np.uint8)
b = r.integers(0, 256, (16, 5)).astype(np.uint8)
bs = np.array([0.01, 0.02, 0.004, 0.1, 0.0001], f32)
bz = np.array([0, 255, 100, 128, 3], np.uint8)
ms, mz = f32(0.5), np.uint8(90)
np.savez(d + "/w.npz", xs=xs, xz=xz, w=w, ws=ws, wz=wz, ys=ys, yz=yz, bias=bias,
         **{"as": as_}, az=az, b=b, bs=bs, bz=bz, ms=ms, mz=mz)
np.savez(d + "/in.npz", x=x, a=a)

def sat(v, dt):
    i = np.iinfo(dt)
    return np.clip(v, i.min, i.max).astype(dt)

xq = sat(np.rint(x / xs).astype(np.int64) + int(xz), np.int8)   # x / xs in float32
# conv: pads [top, left, bottom, right] = [1, 2, 1, 0], strides [2, 1]
xp = np.pad(xq.astype(np.int64) - int(xz), ((0, 0), (0, 0), (1, 1), (2, 0)))
wi = w.astype(np.int64) - wz.astype(np.int64)[:, None, None, None]
oh, ow = (xp.shape[2] - 3) // 2 + 1, xp.shape[3] - 3 + 1
acc = np.zeros((2, 4, oh, ow), np.int64)
for i in range(oh):
    for j in range(ow):
        patch = xp[:, :, 2 * i:2 * i + 3, j:j + 3]
        acc[:, :, i, j] = np.einsum("ncij,mcij->nm", patch, wi)
M = (xs * ws) / ys                      # float32, product first
assert M.dtype == f32
v = (acc + bias.astype(np.int64)[None, :, None, None]).astype(np.float64) * \
    M.astype(np.float64)[None, :, None, None]
yq = sat(np.rint(v).astype(np.int64) + int(yz), np.int8)
y = (yq.astype(f32) - f32(yz)) * ys
ai = a.astype(np.int64) - int(az[0])
bi = b.astype(np.int64) - bz.astype(np.int64)[None, :]
mi = np.matmul(ai, bi)
Mm = (as_[0] * bs) / ms
mq = sat(np.rint(mi.astype(np.float64) * Mm.astype(np.float64)).astype(np.int64) + int(mz), np.uint8)
mqt = np.ascontiguousarray(mq.transpose())
np.savez(d + "/expected.npz", yq=yq, y=y.astype(f32), acc=acc.astype(np.int32), mq=mq,
         mi=mi.astype(np.int32), mcat=np.concatenate([mqt, mqt], axis=0),
         accf=acc.astype(np.int32).reshape(2, -1))
# the edges were hit: saturation at both ends of yq and mq, a tie in xq
assert (yq == 127).any() and (yq == -128).any(), "yq saturates both ways"
assert (mq == 255).any() and (mq == 0).any(), "mq saturates both ways"
PYEOF
check "expected bytes computed" test -s "$TMP/expected.npz"

check "v3 spec validates" "$BIN/eulernpu" validate "$TMP/q.yaml"
check "v3 spec compiles on cpu_ref" "$BIN/eulernpu" compile --spec "$TMP/q.yaml" \
	--weights "$TMP/w.npz" --out "$TMP/q.cpu_ref"
check "runs on cpu_ref" "$BIN/eulernpu" run --artifact "$TMP/q.cpu_ref" --input "$TMP/in.npz" \
	--out "$TMP/q.cpu_ref.npz"
check "cpu_ref gives NumPy's integer bytes exactly" "$BIN/eulernpu" compare \
	--got "$TMP/q.cpu_ref.npz" --expected "$TMP/expected.npz" --exact
expect_eq "result dtypes are the spec's" \
	"$("$PY" -c 'import sys, numpy as np; z = np.load(sys.argv[1]); print(" ".join("%s=%s" % (k, z[k].dtype) for k in sorted(z.files)))' "$TMP/q.cpu_ref.npz")" \
	"acc=int32 accf=int32 mcat=uint8 mi=int32 mq=uint8 y=float32 yq=int8"
# --threads 2: the same bytes
check "compiles on the --threads 2 daemon" env EULERNPU_SERVER="unix:$TMP/q2.sock" \
	"$BIN/eulernpu" compile --spec "$TMP/q.yaml" --weights "$TMP/w.npz" --out "$TMP/q.t2"
check "runs with 2 kernel threads" env EULERNPU_SERVER="unix:$TMP/q2.sock" \
	"$BIN/eulernpu" run --artifact "$TMP/q.t2" --input "$TMP/in.npz" --out "$TMP/q.t2.npz"
check "2 threads give the same bytes" "$BIN/eulernpu" compare --got "$TMP/q.t2.npz" \
	--expected "$TMP/q.cpu_ref.npz" --exact
for b in zynq_ps fpga_board; do
	check "compiles on $b" "$BIN/eulernpu" compile --spec "$TMP/q.yaml" --weights "$TMP/w.npz" \
		--backend "$b" --out "$TMP/q.$b"
	check "runs on $b" "$BIN/eulernpu" run --artifact "$TMP/q.$b" --input "$TMP/in.npz" \
		--out "$TMP/q.$b.npz"
	check "$b equals cpu_ref bit for bit" "$BIN/eulernpu" compare --got "$TMP/q.$b.npz" \
		--expected "$TMP/q.cpu_ref.npz" --exact
done
# fpga_board ran the integer GEMMs on its (emulated) PL as int8 segments
expect_eq "fpga_board: the integer GEMMs on the PL, the rest on the PS" \
	"$(jexpr "$TMP/q.fpga_board/graph.json" '" ".join(o["name"] + ":" + o["lowering"] for o in d["ops"])')" \
	"q:ps c:pl d:ps ci:pl m:pl mm:pl tr:ps cc:ps fl:ps"
# npu_sim lowers the quantised ops (their costs: tests/e2e/int8_npusim.sh)
check "compiles on npu_sim" "$BIN/eulernpu" compile --spec "$TMP/q.yaml" --weights "$TMP/w.npz" \
	--backend npu_sim --out "$TMP/q.npu_sim"
check "runs on npu_sim" "$BIN/eulernpu" run --artifact "$TMP/q.npu_sim" --input "$TMP/in.npz" \
	--out "$TMP/q.npu_sim.npz"
check "npu_sim equals cpu_ref bit for bit" "$BIN/eulernpu" compare --got "$TMP/q.npu_sim.npz" \
	--expected "$TMP/q.cpu_ref.npz" --exact
"$BIN/eulernpu" backends >"$TMP/backends.txt" 2>&1
expect_match "backends: qlinear_conv on cpu_ref and npu_sim" "$(cat "$TMP/backends.txt")" \
	"qlinear_conv +yes +yes +yes +yes"

# the OIP infer route takes UINT8 and answers INT8, UINT8, INT32 as the
# result's integers; a value outside UINT8 is a 400 naming the input
check "deploy the int8 model" "$BIN/eulernpu" deploy "$TMP/q.cpu_ref" --name q8
"$PY" - "$TMP/in.npz" "$TMP" <<'PYEOF'
import json, sys, numpy as np
z = np.load(sys.argv[1])
ins = [{"name": "x", "shape": list(z["x"].shape), "datatype": "FP32",
        "data": [float("%.9g" % v) for v in z["x"].ravel()]},
       {"name": "a", "shape": list(z["a"].shape), "datatype": "UINT8",
        "data": z["a"].astype(int).tolist()}]
json.dump({"inputs": ins}, open(sys.argv[2] + "/infer.json", "w"))
ins[1]["data"] = [256] + z["a"].astype(int).ravel().tolist()[1:]
json.dump({"inputs": ins}, open(sys.argv[2] + "/infer_bad.json", "w"))
PYEOF
code=$(dcurl q1 -o "$TMP/infer.out" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary @"$TMP/infer.json" http://localhost/v2/models/q8/infer)
expect_eq "OIP infer of the int8 model: 200" "$code" 200
check "OIP outputs: the run's dtypes and integers, byte for byte" "$PY" -c '
import json, sys, numpy as np
r, ref = json.load(open(sys.argv[1])), np.load(sys.argv[2])
dt = {"int8": "INT8", "uint8": "UINT8", "int32": "INT32", "float32": "FP32"}
outs = {o["name"]: o for o in r["outputs"]}
assert sorted(outs) == sorted(ref.files), sorted(outs)
for k in ref.files:
    o = outs[k]
    assert o["datatype"] == dt[str(ref[k].dtype)] and o["shape"] == list(ref[k].shape), (k, o["datatype"])
    got = np.array(o["data"], dtype=np.float64).astype(ref[k].dtype)
    assert got.tobytes() == ref[k].tobytes(), k
' "$TMP/infer.out" "$TMP/q.cpu_ref.npz"
code=$(dcurl q1 -o "$TMP/infer_bad.out" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary @"$TMP/infer_bad.json" http://localhost/v2/models/q8/infer)
expect_eq "a UINT8 value of 256: 400" "$code" 400
expect_match "its error names the input and the range" "$(cat "$TMP/infer_bad.out")" \
	"input 'a': data holds 256, not an integer in \\[0, 255\\] \\(UINT8\\)"

# integers compare exactly in tolerance mode too: one off by one fails
"$PY" - "$TMP/q.cpu_ref.npz" "$TMP/off.npz" <<'PYEOF'
import sys
import numpy as np
z = dict(np.load(sys.argv[1]))
z["mi"] = z["mi"].copy()
z["mi"].flat[3] += 1
np.savez(sys.argv[2], **z)
PYEOF
check_status "an int32 off by one fails even at tol 10" 1 "$BIN/eulernpu" compare \
	--got "$TMP/off.npz" --expected "$TMP/q.cpu_ref.npz" --tol 10
expect_match "the message names the integer element" "$(cat "$TMP/last.out" "$TMP/last.err")" \
	"tensor 'mi' differs at \\(0, 0, 3\\).*int32: integers must be equal"

# type errors: the three-line error at the input that breaks the rule
sed 's/      - {name: d, op: dequantize_linear, in: \[yq, ys, yz\], out: y}/      - {name: d, op: relu, in: [yq], out: y}/' \
	"$TMP/q.yaml" >"$TMP/bad_add.yaml"
check_status "int8 into a float op is refused" 2 "$BIN/eulernpu" validate "$TMP/bad_add.yaml"
err=$(cat "$TMP/last.out" "$TMP/last.err")
expect_match "int8 into relu: code" "$err" "^error\\[E0207\\]"
expect_match "int8 into relu: line:col and message" "$err" \
	"bad_add.yaml:29:34: op 'd' \\(relu\\) reads 'yq' \\(int8\\) as input 1, which must be float32"
sed 's/  - {name: mz, dtype: uint8, shape: \[\]}/  - {name: mz, dtype: uint8, shape: []}\n  - {name: az8, dtype: int8, shape: [1]}/; s/in: \[a, b, az, bz\]/in: [a, b, az8, bz]/' \
	"$TMP/q.yaml" >"$TMP/bad_mixed.yaml"
"$PY" -c 'import sys, numpy as np; z = dict(np.load(sys.argv[1])); z["az8"] = np.array([1], np.int8); np.savez(sys.argv[2], **z)' \
	"$TMP/w.npz" "$TMP/w_mixed.npz"
check_status "a zero point of another dtype is refused" 2 "$BIN/eulernpu" validate \
	"$TMP/bad_mixed.yaml"
expect_match "mixed types named" "$(cat "$TMP/last.out" "$TMP/last.err")" \
	"op 'mm' \\(matmul_integer\\) has mixed types: input 1 'a' is uint8 but input 3 'az8' is int8"
finish
