#!/usr/bin/env bash
# models.sh: issue 13's model families, end to end. examples/resnet18_onnx/
# export.py exports resnet18, mobilenet_v2, mobilenet_v3_small,
# squeezenet1_1, shufflenet_v2_x0_5, efficientnet_b0 and a 2-layer
# TransformerEncoder from Debian's python3-torch/torchvision (random
# weights, nothing downloaded); each is imported (`eulernpu import`),
# compiled and run on cpu_ref and checked against torch's output within
# atol 1e-4 + rtol 1e-3, and npu_sim and fpga_board must give cpu_ref's
# bytes. Prints per model the max abs difference to torch, the import time
# and npu_sim's cycles on the default target.
#
# Usage: models.sh [NAME...]    (default: all seven; MODELS_DIR=DIR reuses
# an earlier export there instead of exporting again)
. "$(dirname "$0")/../e2e/lib.sh"
NAMES=${*:-resnet18 mobilenet_v2 mobilenet_v3_small squeezenet1_1 shufflenet_v2_x0_5 efficientnet_b0 transformer}
M=${MODELS_DIR:-$TMP/models}
if [ -z "${MODELS_DIR:-}" ]; then
	# shellcheck disable=SC2086
	check "export with torch: $NAMES" "$PY" "$EX/resnet18_onnx/export.py" "$M" $NAMES
	cat "$TMP/last.out"
fi

# fpga_board runs on a board agent the server fronts
start_fronted_board m || { finish; exit 1; }

# maxdiff GOT EXPECTED: the largest |got - expected| over key y
maxdiff() {
	"$PY" -c 'import sys, numpy as np
g = np.load(sys.argv[1])["y"].astype(np.float64); e = np.load(sys.argv[2])["y"].astype(np.float64)
print("%.3g" % np.abs(g - e).max())' "$1" "$2"
}

for n in $NAMES; do
	d=$M/$n o=$TMP/$n
	t0=$(date +%s.%N)
	check "$n: import" "$BIN/eulernpu" import "$d/model.onnx" --out "$o"
	[ -f "$o/spec.yaml" ] || continue   # nothing to compile: its failure counts once
	t1=$(date +%s.%N)
	for b in cpu_ref npu_sim fpga_board; do
		check "$n: compile for $b" "$BIN/eulernpu" compile --spec "$o/spec.yaml" \
			--weights "$o/weights.npz" --backend "$b" --out "$o.$b"
		check "$n: run on $b" "$BIN/eulernpu" run --artifact "$o.$b" \
			--input "$d/input.npz" --out "$o.$b.npz" --report "$o.$b.report.json"
	done
	check "$n: cpu_ref within atol 1e-4 + rtol 1e-3 of torch" "$BIN/eulernpu" compare \
		--got "$o.cpu_ref.npz" --expected "$d/expected.npz" --tol 1e-4 --rtol 1e-3
	for b in npu_sim fpga_board; do
		check "$n: $b gives cpu_ref's bytes" "$BIN/eulernpu" compare \
			--got "$o.$b.npz" --expected "$o.cpu_ref.npz" --exact
	done
	printf '# %s: max |cpu_ref - torch| %s, import %.2f s, npu_sim %s cycles\n' "$n" \
		"$(maxdiff "$o.cpu_ref.npz" "$d/expected.npz" 2>/dev/null)" \
		"$(echo "$t1 - $t0" | bc)" \
		"$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["npu"]["totals"]["cycles"])' \
			"$o.npu_sim.report.json" 2>/dev/null)"
done
# examples/resnet18_onnx/run.sh prints what README.md shows (torch's last
# digits of the max abs diff aside: its float sums may differ by machine)
mask() { sed -e "s|$TMP/r18|/tmp/r18|g" -e 's/max abs diff [0-9.e+-]*/max abs diff D/'; }
want=$(sed -n '/^\$ examples\/resnet18_onnx\/run.sh \/tmp\/r18$/,/^```$/p' "$ROOT/README.md" |
	sed '1d;$d' | mask)
got=$(bash "$ROOT/examples/resnet18_onnx/run.sh" "$TMP/r18" 2>&1 | mask)
expect_eq "examples/resnet18_onnx/run.sh prints README.md's lines" "$got" "$want"
finish
