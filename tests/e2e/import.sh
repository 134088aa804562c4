#!/usr/bin/env bash
# import.sh: `eulernpu import` and POST /v1/import end to end. Small ONNX
# models are built here with onnx.helper (python3-onnx): an MLP with a
# symbolic batch dim imports (bound by --input, else 1), validates,
# compiles, runs on cpu_ref within 1e-5 of NumPy and on npu_sim with
# cpu_ref's bytes; the same model with its weights as external data gives
# the same bytes, and a second import uploads nothing; curl imports with a
# multipart model and with JSON digests. Errors: garbage bytes (E0403, exit
# 2), unmappable nodes (one E0404 naming them all), a missing external file,
# an external location with '..', a bad --input (E0100), an --out that
# holds files (left untouched), an external location the request does not
# supply and an external blob the server lacks (409 listing it).
. "$(dirname "$0")/lib.sh"
start_daemon im || { finish; exit 1; }
export EULERNPU_SERVER=unix:$TMP/im.sock
M=$TMP/models
mkdir -p "$M/ext" "$M/noext" "$M/evil"

# The models, and the MLP's NumPy value on an input of batch 2.
"$PY" - "$M" <<'PYEOF'
import os, shutil, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(13)
w1 = rng.standard_normal((8, 16)).astype(np.float32)
b1 = rng.standard_normal(16).astype(np.float32)
w2 = rng.standard_normal((16, 4)).astype(np.float32)
b2 = rng.standard_normal(4).astype(np.float32)

def mlp():
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="/fc1/MatMul"),
             helper.make_node("Add", ["h0", "b1"], ["h1"], name="/fc1/Add"),
             helper.make_node("Relu", ["h1"], ["h2"], name="/act/Relu"),
             helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="/fc2/MatMul"),
             helper.make_node("Add", ["h3", "b2"], ["y"], name="/fc2/Add")]
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

onnx.save(mlp(), os.path.join(out, "mlp.onnx"))
# the same with every initializer in ext/weights.bin
onnx.save(mlp(), os.path.join(out, "ext", "mlp.onnx"), save_as_external_data=True,
          all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
# ... without its data file
shutil.copy(os.path.join(out, "ext", "mlp.onnx"), os.path.join(out, "noext", "mlp.onnx"))
# ... pointing outside the model's directory
m = onnx.load(os.path.join(out, "ext", "mlp.onnx"), load_external_data=False)
for t in m.graph.initializer:
    for kv in t.external_data:
        if kv.key == "location":
            kv.value = "../ext/weights.bin"
onnx.save(m, os.path.join(out, "evil", "mlp.onnx"))
# two nodes no spec op expresses, side by side on runtime data
g = helper.make_graph(
    [helper.make_node("Sin", ["x"], ["a"], name="odd_sin"),
     helper.make_node("Cos", ["x"], ["b"], name="odd_cos"),
     helper.make_node("Add", ["a", "b"], ["y"], name="fine_add")],
    "odd", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "odd.onnx"))
x = rng.standard_normal((2, 8)).astype(np.float32)
y = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
np.savez(os.path.join(out, "input.npz"), x=x)
np.savez(os.path.join(out, "expected.npz"), y=y.astype(np.float32))
np.savez(os.path.join(out, "input1.npz"), x=x[:1])
PYEOF
check "the test models are built (python3-onnx)" test -s "$M/mlp.onnx" -a -s "$M/ext/weights.bin"

# ---- import, validate, compile, run, compare -------------------------------
check "import the MLP with --input x=2,8" "$BIN/eulernpu" import "$M/mlp.onnx" --out "$TMP/mlp" \
	--input x=2,8
out=$(cat "$TMP/last.out")
expect_match "  summary: ops, then spec.yaml + weights.npz in DIR" "$(sed -n 1p <<<"$out")" \
	"^Import   OK: [0-9]+ ops? · $TMP/mlp/spec.yaml \+ weights.npz$"
expect_eq "  summary: the input with its bound shape" "$(sed -n 2p <<<"$out")" "  inputs:  x (2, 8)"
expect_eq "  summary: the output" "$(sed -n 3p <<<"$out")" "  outputs: y (2, 4)"
expect_eq "  DIR holds spec.yaml and weights.npz only" "$(cd "$TMP/mlp" && echo ./* ./.[!.]*)" \
	"./spec.yaml ./weights.npz ./.[!.]*"
expect_eq "  no temporary directory is left beside DIR" "$(compgen -G "$TMP/.mlp.*")" ""
expect_match "  the spec is v2" "$(head -5 "$TMP/mlp/spec.yaml")" "^eulernpu: 2"
check "  it validates" "$BIN/eulernpu" validate "$TMP/mlp/spec.yaml"
for b in cpu_ref npu_sim; do
	check "  it compiles for $b" "$BIN/eulernpu" compile --spec "$TMP/mlp/spec.yaml" \
		--weights "$TMP/mlp/weights.npz" --backend "$b" --out "$TMP/mlp.$b"
	check "  it runs on $b" "$BIN/eulernpu" run --artifact "$TMP/mlp.$b" --input "$M/input.npz" \
		--out "$TMP/mlp.$b.npz"
done
check "  cpu_ref is within 1e-5 of NumPy" "$BIN/eulernpu" compare --got "$TMP/mlp.cpu_ref.npz" \
	--expected "$M/expected.npz" --tol 1e-5 --rtol 1e-5
check "  npu_sim gives cpu_ref's bytes" "$BIN/eulernpu" compare --got "$TMP/mlp.npu_sim.npz" \
	--expected "$TMP/mlp.cpu_ref.npz" --exact

check "import --json" "$BIN/eulernpu" import "$M/mlp.onnx" --out "$TMP/mlp.json.d" --json
cp "$TMP/last.out" "$TMP/imp.json"
expect_eq "  an unbound symbolic dim is 1" "$(jget "$TMP/imp.json" inputs.0.shape)" "[1, 8]"
expect_eq "  outputs named with shapes" "$(jget "$TMP/imp.json" outputs.0.name outputs.0.shape)" \
	"y [1, 4]"
expect_eq "  out is DIR" "$(jget "$TMP/imp.json" out)" "$TMP/mlp.json.d"
expect_eq "  the files are the blobs named" \
	"$(sha256sum "$TMP/mlp.json.d/spec.yaml" "$TMP/mlp.json.d/weights.npz" | cut -d' ' -f1 | tr '\n' ' ')" \
	"$(jget "$TMP/imp.json" spec weights) "
check "  batch 1: compiles" "$BIN/eulernpu" compile --spec "$TMP/mlp.json.d/spec.yaml" \
	--weights "$TMP/mlp.json.d/weights.npz" --out "$TMP/mlp1"
check "  batch 1: runs" "$BIN/eulernpu" run --artifact "$TMP/mlp1" --input "$M/input1.npz" \
	--out "$TMP/mlp1.npz"
check "import --name" "$BIN/eulernpu" import "$M/mlp.onnx" --out "$TMP/named" --name my_mlp --json
expect_eq "  the spec is called so" "$(jget "$TMP/last.out" name)" "my_mlp"
expect_match "  in spec.yaml too" "$(cat "$TMP/named/spec.yaml")" "^name: \"?my_mlp\"?$"

# ---- external data -----------------------------------------------------------
check "the external-data model imports" "$BIN/eulernpu" import "$M/ext/mlp.onnx" \
	--out "$TMP/ext" --input x=2,8
check "  compiles" "$BIN/eulernpu" compile --spec "$TMP/ext/spec.yaml" --weights "$TMP/ext/weights.npz" \
	--out "$TMP/ext.art"
check "  runs" "$BIN/eulernpu" run --artifact "$TMP/ext.art" --input "$M/input.npz" --out "$TMP/ext.npz"
check "  the same bytes as with the weights inside the model" "$BIN/eulernpu" compare \
	--got "$TMP/ext.npz" --expected "$TMP/mlp.cpu_ref.npz" --exact
check "  the same weights.npz" cmp "$TMP/ext/weights.npz" "$TMP/mlp/weights.npz"
n0=$(dcurl im http://localhost/v1/health | jget - blobs_received)
check "a second import of it" "$BIN/eulernpu" import "$M/ext/mlp.onnx" --out "$TMP/ext2" --input x=2,8
expect_eq "  uploads nothing (the server has the model and weights.bin)" \
	"$(dcurl im http://localhost/v1/health | jget - blobs_received)" "$n0"

# ---- curl ----------------------------------------------------------------------
dcurl im -F model=@"$M/mlp.onnx" http://localhost/v1/import >"$TMP/c1.json"
sd=$(jget "$TMP/c1.json" spec)
expect_eq "curl multipart: the answer names the inputs" "$(jget "$TMP/c1.json" inputs.0.name)" x
dcurl im -o "$TMP/c1.yaml" -w '%{http_code}' "http://localhost/v1/blobs/$sd" >"$TMP/c1.code"
expect_eq "  GET /v1/blobs/{spec} serves it to the caller" "$(cat "$TMP/c1.code")" 200
expect_eq "  its bytes are the digest" "$(sha256sum "$TMP/c1.yaml" | cut -d' ' -f1)" "$sd"
md=$(sha256sum "$M/ext/mlp.onnx" | cut -d' ' -f1)
wd=$(sha256sum "$M/ext/weights.bin" | cut -d' ' -f1)
dcurl im -T "$M/ext/mlp.onnx" "http://localhost/v1/blobs/$md" >/dev/null
dcurl im -H 'Content-Type: application/json' -w '\n%{http_code}' -d \
	"{\"model\": \"$md\", \"external\": {\"weights.bin\": \"$wd\"}, \"inputs\": {\"x\": [3, 8]}}" \
	http://localhost/v1/import >"$TMP/c2.out"
expect_eq "curl JSON: a listed external blob the server has: 200" "$(tail -1 "$TMP/c2.out")" 200
expect_eq "  the bound shape" "$(head -1 "$TMP/c2.out" | jget - inputs.0.shape)" "[3, 8]"
dcurl im -H 'Content-Type: application/json' -w '\n%{http_code}' -d "{\"model\": \"$md\"}" \
	http://localhost/v1/import >"$TMP/c3.out"
expect_eq "curl JSON: an external location not supplied: 400" "$(tail -1 "$TMP/c3.out")" 400
expect_match "  naming it" "$(head -1 "$TMP/c3.out" | jget - error.message)" "weights\.bin"
bogus=$(echo never-uploaded | sha256sum | cut -d' ' -f1)
dcurl im -H 'Content-Type: application/json' -w '\n%{http_code}' -d \
	"{\"model\": \"$md\", \"external\": {\"weights.bin\": \"$bogus\"}}" \
	http://localhost/v1/import >"$TMP/c4.out"
expect_eq "curl JSON: an external blob the server lacks: 409" "$(tail -1 "$TMP/c4.out")" 409
expect_eq "  listed as missing" "$(head -1 "$TMP/c4.out" | jget - error.code missing.0)" "E0804 $bogus"
dcurl im -H 'Content-Type: application/json' -w '\n%{http_code}' -d \
	"{\"model\": \"$md\", \"inputs\": {\"x\": [1, \"a\"]}}" http://localhost/v1/import >"$TMP/c5.out"
expect_eq "curl JSON: a bad inputs field: 400 E0803" "$(tail -1 "$TMP/c5.out") $(head -1 "$TMP/c5.out" |
	jget - error.code)" "400 E0803"

# ---- errors ----------------------------------------------------------------------
head -c 4096 /dev/urandom >"$TMP/garbage.onnx"
printf '\x0a\xff\xff\xff\xff\x0f' >>"$TMP/garbage.onnx"
check_status "garbage bytes: exit 2" 2 "$BIN/eulernpu" import "$TMP/garbage.onnx" --out "$TMP/g"
expect_eq "  E0403" "$(sed -n 1p "$TMP/last.err")" "error[E0403]: not a valid ONNX model or tensor"
check "  no DIR is made" test ! -e "$TMP/g"
dcurl im -F model=@"$TMP/garbage.onnx" -w '\n%{http_code}' http://localhost/v1/import >"$TMP/c6.out"
expect_eq "  over curl: 422 E0403" "$(tail -1 "$TMP/c6.out") $(head -1 "$TMP/c6.out" | jget - error.code)" \
	"422 E0403"

check_status "unmappable nodes: exit 2" 2 "$BIN/eulernpu" import "$M/odd.onnx" --out "$TMP/odd"
err=$(cat "$TMP/last.err")
expect_eq "  E0404" "$(sed -n 1p <<<"$err")" "error[E0404]: cannot import the ONNX model"
expect_match "  names the first node and its op type" "$err" "odd_sin.*Sin|Sin.*odd_sin"
expect_match "  and the second, in the same error" "$err" "odd_cos.*Cos|Cos.*odd_cos"
expect_eq "  not the node it can map" "$(grep -c fine_add <<<"$err")" 0
check "  no DIR is made" test ! -e "$TMP/odd"

check_status "a missing external-data file: exit 2" 2 "$BIN/eulernpu" import "$M/noext/mlp.onnx" \
	--out "$TMP/noext"
expect_eq "  E0003" "$(sed -n 1p "$TMP/last.err")" "error[E0003]: cannot read or write a file"
expect_match "  naming the file" "$(cat "$TMP/last.err")" "noext/weights\.bin"
check_status "an external location with '..': exit 2" 2 "$BIN/eulernpu" import "$M/evil/mlp.onnx" \
	--out "$TMP/evil"
expect_eq "  E0403" "$(sed -n 1p "$TMP/last.err")" "error[E0403]: not a valid ONNX model or tensor"
expect_match "  saying why" "$(cat "$TMP/last.err")" "\.\./ext/weights\.bin.*'\.\.'"

for bad in "x" "x=" "x=1,a" "x=0,8" "=2,8"; do
	check_status "--input '$bad': exit 2" 2 "$BIN/eulernpu" import "$M/mlp.onnx" --out "$TMP/b" \
		--input "$bad"
	expect_eq "  E0100" "$(sed -n 1p "$TMP/last.err")" "error[E0100]: usage error"
done
check_status "--input binding one name twice: exit 2" 2 "$BIN/eulernpu" import "$M/mlp.onnx" \
	--out "$TMP/b" --input x=1,8 --input x=2,8
check_status "no --out: exit 2" 2 "$BIN/eulernpu" import "$M/mlp.onnx"

mkdir -p "$TMP/mine"
echo "keep me" >"$TMP/mine/spec.yaml"
check_status "an --out that holds files: exit 2" 2 "$BIN/eulernpu" import "$M/mlp.onnx" --out "$TMP/mine"
expect_eq "  E0100" "$(sed -n 1p "$TMP/last.err")" "error[E0100]: usage error"
expect_eq "  the file is untouched" "$(cat "$TMP/mine/spec.yaml")" "keep me"
check_status "an --out that holds an earlier import: exit 2 (never replaced)" 2 "$BIN/eulernpu" \
	import "$M/mlp.onnx" --out "$TMP/mlp"
check "  its files are untouched" cmp "$TMP/mlp/weights.npz" "$TMP/ext/weights.npz"
mkdir -p "$TMP/empty"
check "an empty --out is fine" "$BIN/eulernpu" import "$M/mlp.onnx" --out "$TMP/empty"
check "  and filled" test -s "$TMP/empty/spec.yaml"
# the README's pipeline shows this very import
want=$(awk '/^\$ eulernpu import mlp.onnx/ { f = 1; next } /^```/ { f = 0 } f' "$ROOT/README.md")
got=$(cd "$M" && "$BIN/eulernpu" import mlp.onnx --out "$TMP/readme" --input x=1,8 2>&1)
expect_eq "README's pipeline: eulernpu import prints what it shows" "$got" "${want//\/tmp\/mlp-onnx/$TMP/readme}"
# the daemon's limits on a model
start_daemon lim --max-onnx-bytes 100 || { finish; exit 1; }
check_status "a model past --max-onnx-bytes: exit 2" 2 "$BIN/eulernpu" --server "unix:$TMP/lim.sock" \
	import "$M/mlp.onnx" --out "$TMP/lim1"
expect_eq "  E0004" "$(sed -n 1p "$TMP/last.err")" "error[E0004]: size limit exceeded"
expect_match "  naming the setting" "$(cat "$TMP/last.err")" "--max-onnx-bytes"
stop_daemon lim
start_daemon lim2 --max-onnx-nodes 4 || { finish; exit 1; }
check_status "a graph past --max-onnx-nodes (5 nodes, 4 allowed): exit 2" 2 "$BIN/eulernpu" \
	--server "unix:$TMP/lim2.sock" import "$M/mlp.onnx" --out "$TMP/lim2"
expect_eq "  E0004" "$(sed -n 1p "$TMP/last.err")" "error[E0004]: size limit exceeded"
expect_match "  naming the setting" "$(cat "$TMP/last.err")" "--max-onnx-nodes"
stop_daemon lim2
check "import --help" "$BIN/eulernpu" import --help
expect_match "  shows the usage" "$(cat "$TMP/last.out")" "--input NAME=SHAPE"
expect_match "eulernpu --help lists import" "$("$BIN/eulernpu" --help)" "^  import "
stop_daemon im
expect_eq "no sanitizer reports from the daemons" \
	"$(cat "$TMP"/*.stderr 2>/dev/null | grep -c -e 'runtime error' -e 'Sanitizer')" 0
finish
