#!/usr/bin/env bash
# int8_models.sh: quantised resnet18 and mobilenet_v2 end to end. For each,
# tests/quant/qdq.py exports the torchvision model (random weights, order-one
# outputs) at 16x3x64x64, calibrates per-tensor activation ranges on fixed
# random inputs and writes the QDQ model ONNX Runtime's quantiser would
# (int8 symmetric per-channel weights, uint8 activations, int32 biases);
# `eulernpu import` maps it onto the integer ops (no float op may remain),
# it compiles and runs on cpu_ref on 1 and on 2 threads, and:
# (a) the uint8 logits equal, byte for byte, a NumPy evaluation of the
#     imported spec with integer arithmetic (qdq.py ref: ONNX's definitions
#     and docs/spec-format.md's requantisation; no C code of ours);
# (b) their top-1 agrees with PyTorch's float model on at least 14 of the
#     16 inputs (the figure is printed).
# It prints the int8 and float run times on cpu_ref (1 thread, the same
# input; information only, nothing asserts on time). Both models also run
# on npu_sim (its default target): the int8 one with cpu_ref's bytes, and
# the cycles and DRAM bytes of both are printed (int8 must move fewer).
. "$(dirname "$0")/../e2e/lib.sh"
start_daemon m1 --threads 1 || { finish; exit 1; }
start_daemon m2 --threads 2 || { finish; exit 1; }
Q=$(cd "$(dirname "$0")/../quant" && pwd)/qdq.py
S1=unix:$TMP/m1.sock
S2=unix:$TMP/m2.sock

secs() { "$PY" -c 'import sys, time; print("%.2f" % (time.time() - float(sys.argv[1])))' "$1"; }
now() { "$PY" -c 'import time; print(time.time())'; }

for m in resnet18 mobilenet_v2; do
	D=$TMP/$m
	check "$m: the QDQ model is built" "$PY" "$Q" build "$TMP" "$m"
	check "$m: import" "$BIN/eulernpu" --server "$S1" import "$D/model.onnx" --out "$D/imp"
	ops=$(grep -o 'op: [a-z_0-9]*' "$D/imp/spec.yaml" 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ';')
	echo "# $m ops: $ops"
	expect_match "$m: every conv is a qlinear_conv, the residual adds qlinear_add" "$ops" \
		"qlinear_add;.*qlinear_conv;.*qlinear_global_avgpool;.*qlinear_matmul;"
	expect_eq "$m: no float op left (one quantize_linear at the input)" \
		"$(grep -o 'op: [a-z_0-9]*' "$D/imp/spec.yaml" | grep -Evc 'qlinear_|maxpool2d|flatten|op: quantize_linear$')" 0
	check "$m: compile for cpu_ref" "$BIN/eulernpu" --server "$S1" compile --spec "$D/imp/spec.yaml" \
		--weights "$D/imp/weights.npz" --backend cpu_ref --out "$D/art"
	t0=$(now)
	check "$m: run on 1 thread" "$BIN/eulernpu" --server "$S1" run --artifact "$D/art" \
		--input "$D/input.npz" --out "$D/r1.npz"
	ti=$(secs "$t0")
	check "$m: run on 2 threads" "$BIN/eulernpu" --server "$S2" run --artifact "$D/art" \
		--input "$D/input.npz" --out "$D/r2.npz"
	check "$m: the NumPy integer reference" "$PY" "$Q" ref "$D/imp/spec.yaml" "$D/imp/weights.npz" \
		"$D/input.npz" "$D/ref.npz"
	res=$("$PY" - "$D" <<'PYEOF'
import sys
import numpy as np
d = sys.argv[1]
r1, r2 = np.load(d + "/r1.npz")["y_q"], np.load(d + "/r2.npz")["y_q"]
ref, fl = np.load(d + "/ref.npz")["y_q"], np.load(d + "/float.npz")["y"]
agree = int((r1.argmax(1) == fl.argmax(1)).sum())
print(r1.dtype, r1.tobytes() == ref.tobytes(), r1.tobytes() == r2.tobytes(), agree, len(fl))
PYEOF
)
	read -r dt same threads agree total <<<"$res"
	expect_eq "$m: the logits are uint8" "$dt" uint8
	expect_eq "$m: cpu_ref's bytes are the NumPy reference's" "$same" True
	expect_eq "$m: 2 threads give the same bytes" "$threads" True
	echo "# $m: top-1 agreement with PyTorch's float model: $agree/$total"
	expect_eq "$m: top-1 agrees on at least 14 of 16" "$([ "${agree:-0}" -ge 14 ] && echo yes)" yes
	# the float model on the same input, for the time
	check "$m: the float model imports" "$BIN/eulernpu" --server "$S1" import "$D/float.onnx" \
		--out "$D/fimp"
	check "$m: and compiles" "$BIN/eulernpu" --server "$S1" compile --spec "$D/fimp/spec.yaml" \
		--weights "$D/fimp/weights.npz" --backend cpu_ref --out "$D/fart"
	t0=$(now)
	check "$m: and runs" "$BIN/eulernpu" --server "$S1" run --artifact "$D/fart" \
		--input "$D/input.npz" --out "$D/rf.npz"
	tf=$(secs "$t0")
	echo "# $m on cpu_ref, 1 thread, 16x3x64x64: int8 ${ti} s, float32 ${tf} s"
	# npu_sim (its default target): the int8 model gives cpu_ref's bytes,
	# and its report sits next to the float model's
	for k in int8 float; do
		if [ $k = int8 ]; then sp=$D/imp want=$D/r1.npz; else sp=$D/fimp want=$D/rf.npz; fi
		check "$m $k: compile for npu_sim" "$BIN/eulernpu" --server "$S1" compile \
			--spec "$sp/spec.yaml" --weights "$sp/weights.npz" --backend npu_sim --out "$D/npu.$k"
		check "$m $k: run on npu_sim" "$BIN/eulernpu" --server "$S1" run --artifact "$D/npu.$k" \
			--input "$D/input.npz" --out "$D/npu.$k.npz" --report "$D/npu.$k.json"
		check "$m $k: npu_sim gives cpu_ref's bytes" "$BIN/eulernpu" compare \
			--got "$D/npu.$k.npz" --expected "$want" --exact
	done
	read -r ci di cf df <<<"$("$PY" - "$D" <<'PYEOF'
import json, sys
t = [json.load(open(sys.argv[1] + "/npu.%s.json" % k))["npu"]["totals"] for k in ("int8", "float")]
print(*[x for d in t for x in (d["cycles"], d["dram_read_bytes"] + d["dram_write_bytes"])])
PYEOF
)"
	echo "# $m on npu_sim (default target): int8 $ci cycles, DRAM $di bytes; float32 $cf cycles, DRAM $df bytes"
	expect_eq "$m: int8 moves less DRAM than float32 on npu_sim" \
		"$([ "${di:-0}" -gt 0 ] && [ "${di:-0}" -lt "${df:-0}" ] && echo yes)" yes
done

# a pattern that does not hold keeps its float op between explicit
# dequantize_linear and quantize_linear: a Gemm (stays float), its weight's
# DequantizeLinear of int8 constants mapped, not folded
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper as nh, TensorProto as T
init = [nh.from_array(np.float32(0.1), "xs"), nh.from_array(np.uint8(128), "xz"),
        nh.from_array(np.arange(12, dtype=np.int8).reshape(3, 4), "w"),
        nh.from_array(np.float32(0.05), "ws"), nh.from_array(np.int8(0), "wz"),
        nh.from_array(np.ones(3, np.float32), "b"), nh.from_array(np.float32(0.2), "ys"),
        nh.from_array(np.uint8(100), "yz")]
nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
         helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
         helper.make_node("Gemm", ["xd", "wd", "b"], ["g"], transB=1),
         helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["yq"])]
g = helper.make_graph(nodes, "gemm_qdq", [helper.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                      [helper.make_tensor_value_info("yq", T.UINT8, [2, 3])], init)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          sys.argv[1] + "/gemm_qdq.onnx")
PYEOF
check "QDQ Gemm: imports" "$BIN/eulernpu" --server "$S1" import "$TMP/gemm_qdq.onnx" --out "$TMP/gq"
expect_eq "QDQ Gemm: float gemm between dequantize_linear and quantize_linear" \
	"$(grep -o 'op: [a-z_]*' "$TMP/gq/spec.yaml" 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
	" 2 op: dequantize_linear; 1 op: gemm; 2 op: quantize_linear;"
finish
