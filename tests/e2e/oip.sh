#!/usr/bin/env bash
# oip.sh: the Open Inference Protocol v2 as its clients use it, against a
# daemon on TCP with tiny_mlp and tiny_cnn deployed. The KServe and Triton
# documentation's curl lines for health, metadata and infer (the model name
# and address put in); infer outputs equal to `eulernpu run`'s result.npz
# bit for bit (JSON data read back as float32, and the binary tensor data
# extension), flat and nested data, one version's path, output selection;
# malformed requests each answered 400 in the protocol's {"error": "..."}
# form, and the daemon serving on after them.
. "$(dirname "$0")/lib.sh"

MLP=$EX/tiny_mlp
CNN=$EX/tiny_cnn
start_daemon o --listen 127.0.0.1:0 --port-file "$TMP/o.port" || { finish; exit 1; }
P=$(cat "$TMP/o.port")
H=127.0.0.1:$P
enpu() { EULERNPU_SERVER=unix:$TMP/o.sock timeout 120 "$BIN/eulernpu" "$@"; }
for m in mlp cnn; do
	d=$EX/tiny_$m
	enpu compile --spec "$d/spec.yaml" --weights "$d/weights.npz" --out "$TMP/$m" >/dev/null
	check "deploy tiny_$m" enpu deploy "$TMP/$m" --name "$m"
	check "eulernpu run of tiny_$m (the reference bytes)" enpu run --model "$m" --input "$d/input.npz" --out "$TMP/$m.ref.npz"
done

# ---- the documentation's lines (Triton: localhost:8000; KServe: ${INGRESS_HOST}:${INGRESS_PORT})
INGRESS_HOST=127.0.0.1 INGRESS_PORT=$P MODEL_NAME=mlp
check "curl -v localhost:8000/v2/health/ready" curl -sf -v "$H/v2/health/ready"
check "curl -v \${INGRESS_HOST}:\${INGRESS_PORT}/v2/health/live" curl -sf -v "http://${INGRESS_HOST}:${INGRESS_PORT}/v2/health/live"
check "curl localhost:8000/v2 (server metadata)" curl -sf -o "$TMP/meta.json" "$H/v2"
expect_match "server metadata names the extensions" "$(cat "$TMP/meta.json")" '"extensions":\["binary_tensor_data","model_repository"\]'
check "curl localhost:8000/v2/models/mlp (model metadata)" curl -sf -o "$TMP/mlp.meta" "$H/v2/models/mlp"
expect_eq "metadata: platform, inputs, outputs" \
	"$("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["platform"], m["versions"], [(t["name"], t["datatype"], t["shape"]) for t in m["inputs"] + m["outputs"]])' "$TMP/mlp.meta")" \
	"eulernpu_cpu_ref ['1'] [('x', 'FP32', [1, 8]), ('logits', 'FP32', [1, 4])]"
check "curl localhost:8000/v2/models/cnn/versions/1/ready" curl -sf "$H/v2/models/cnn/versions/1/ready"

# the requests: input.npz's tensors as JSON, flat and nested
"$PY" - "$MLP/input.npz" "$CNN/input.npz" "$TMP" <<'PYEOF'
import json, sys, numpy as np
for src, m in zip(sys.argv[1:3], ("mlp", "cnn")):
    z = np.load(src)
    ins = [{"name": k, "shape": list(v.shape), "datatype": "FP32", "data": [float("%.9g" % x) for x in v.ravel()]} for k, v in z.items()]
    json.dump({"id": "42", "inputs": ins}, open("%s/%s.flat.json" % (sys.argv[3], m), "w"))
    for i, (k, v) in enumerate(z.items()):
        ins[i]["data"] = v.astype(np.float64).tolist()
    json.dump({"inputs": ins}, open("%s/%s.nested.json" % (sys.argv[3], m), "w"))
PYEOF
# same_bytes RESPONSE REF.npz: every output's JSON data, as float32, is the result's bytes
same_bytes() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys, numpy as np
r, ref = json.load(open(sys.argv[1])), np.load(sys.argv[2])
outs = {o["name"]: o for o in r["outputs"]}
assert sorted(outs) == sorted(ref.files), (sorted(outs), ref.files)
for k in ref.files:
    o = outs[k]
    assert o["datatype"] == "FP32" and o["shape"] == list(ref[k].shape), o
    got = np.array(o["data"], dtype=np.float64).astype("<f4")
    assert got.tobytes() == ref[k].astype("<f4").tobytes(), k
PYEOF
}
for m in mlp cnn; do
	MODEL_NAME=$m
	check "KServe's curl: infer $m -d @./input.json" curl -sf -o "$TMP/$m.out" -H "Content-Type: application/json" \
		"http://${INGRESS_HOST}:${INGRESS_PORT}/v2/models/${MODEL_NAME}/infer" -d @"$TMP/$m.flat.json"
	check "infer $m: the bytes eulernpu run writes" same_bytes "$TMP/$m.out" "$TMP/$m.ref.npz"
	check "infer $m, nested data" curl -sf -o "$TMP/$m.nout" -X POST "$H/v2/models/$m/versions/1/infer" -d @"$TMP/$m.nested.json"
	check "infer $m, nested: the same bytes" same_bytes "$TMP/$m.nout" "$TMP/$m.ref.npz"
done
expect_eq "the response carries the request's id and the version" \
	"$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["id"], r["model_name"], r["model_version"])' "$TMP/mlp.out")" "42 mlp 1"
JOB=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["parameters"]["job"])' "$TMP/mlp.out")
check "the infer ran as a job of the queue" curl -sf -o "$TMP/job.json" "$H/v1/jobs/$JOB"
expect_eq "that job ran the model's version" "$(jget "$TMP/job.json" model) $(jget "$TMP/job.json" state)" "mlp:1 succeeded"

# the binary tensor data extension, both ways
check "binary tensor data in and out: the same bytes" "$PY" - "$P" "$MLP/input.npz" "$TMP/mlp.ref.npz" <<'PYEOF'
import http.client, json, sys, numpy as np
x, ref = np.load(sys.argv[2])["x"], np.load(sys.argv[3])["logits"]
head = json.dumps({"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32",
                               "parameters": {"binary_data_size": x.nbytes}}],
                   "parameters": {"binary_data_output": True}}).encode()
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
c.request("POST", "/v2/models/mlp/infer", head + x.astype("<f4").tobytes(),
          {"Inference-Header-Content-Length": str(len(head)), "Content-Type": "application/octet-stream"})
r = c.getresponse(); body = r.read()
assert r.status == 200, (r.status, body)
n = int(r.getheader("Inference-Header-Content-Length"))
meta = json.loads(body[:n])
assert meta["outputs"][0]["parameters"]["binary_data_size"] == ref.nbytes, meta
assert body[n:] == ref.astype("<f4").tobytes()
PYEOF
check "the repository index lists both" curl -sf -X POST -o "$TMP/index.json" "$H/v2/repository/index"
expect_eq "index rows" "$("$PY" -c 'import json,sys; print(sorted((m["name"], m["version"], m["state"]) for m in json.load(open(sys.argv[1]))))' "$TMP/index.json")" \
	"[('cnn', '1', 'READY'), ('mlp', '1', 'READY')]"

# ---- malformed requests: 400, {"error": "..."}, and the daemon serves on
bad() {   # bad DESC STATUS BODY [curl args]
	local desc=$1 want=$2 body=$3; shift 3
	local got
	got=$(curl -s -o "$TMP/bad.json" -w '%{http_code}' -X POST "$@" --data-binary "$body" "$H/v2/models/mlp/infer")
	expect_eq "$desc: $want" "$got" "$want"
	expect_eq "$desc: the protocol's error form" \
		"$("$PY" -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; print(type(e).__name__, bool(e))' "$TMP/bad.json" 2>&1)" "str True"
}
D8='[1,2,3,4,5,6,7,8]'
bad "wrong datatype" 400 "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,8],\"datatype\":\"INT32\",\"data\":$D8}]}"
bad "shape and data of different sizes" 400 '{"inputs":[{"name":"x","shape":[1,8],"datatype":"FP32","data":[1,2,3]}]}'
bad "too much data" 400 '{"inputs":[{"name":"x","shape":[1,8],"datatype":"FP32","data":[1,2,3,4,5,6,7,8,9]}]}'
bad "a shape that is not the model's" 400 '{"inputs":[{"name":"x","shape":[2,4],"datatype":"FP32","data":[1,2,3,4,5,6,7,8]}]}'
bad "an unknown input" 400 "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,8],\"datatype\":\"FP32\",\"data\":$D8},{\"name\":\"y\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}"
bad "a missing input" 400 '{"inputs":[]}'
bad "an input given twice" 400 "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,8],\"datatype\":\"FP32\",\"data\":$D8},{\"name\":\"x\",\"shape\":[1,8],\"datatype\":\"FP32\",\"data\":$D8}]}"
bad "non-numeric data" 400 '{"inputs":[{"name":"x","shape":[1,8],"datatype":"FP32","data":[1,2,3,"4",5,6,7,8]}]}'
bad "null in the data" 400 '{"inputs":[{"name":"x","shape":[1,8],"datatype":"FP32","data":[1,2,3,null,5,6,7,8]}]}'
bad "a huge shape" 400 '{"inputs":[{"name":"x","shape":[4294967296,4294967296],"datatype":"FP32","data":[1]}]}'
bad "a negative dimension" 400 '{"inputs":[{"name":"x","shape":[-1,8],"datatype":"FP32","data":[1]}]}'
bad "no inputs list" 400 '{"id":"1"}'
bad "not JSON" 400 '{"inputs":[{'
bad "an unknown output" 400 "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,8],\"datatype\":\"FP32\",\"data\":$D8}],\"outputs\":[{\"name\":\"nope\"}]}"
bad "binary_data_size past the body" 400 '{"inputs":[{"name":"x","shape":[1,8],"datatype":"FP32","parameters":{"binary_data_size":32}}]}' \
	-H "Inference-Header-Content-Length: 92"
bad "a header length past the body" 400 '{}' -H "Inference-Header-Content-Length: 99999"
got=$(curl -s -o "$TMP/bad.json" -w '%{http_code}' "$H/v2/models/nope")
expect_eq "an unknown model: 404" "$got" 404
expect_match "  ... in the protocol's form" "$(cat "$TMP/bad.json")" '^\{"error":"no model'
check "after them all, health" curl -sf "$H/v2/health/live"
check "and an infer" curl -sf -o "$TMP/again.out" "$H/v2/models/mlp/infer" -d @"$TMP/mlp.flat.json"
check "  ... with the same bytes" same_bytes "$TMP/again.out" "$TMP/mlp.ref.npz"
stop_daemon o
finish
