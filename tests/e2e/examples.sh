#!/usr/bin/env bash
# examples.sh: every example's golden.npz is what cpu_ref computes today
# (bit for bit), and lies within 1e-5 of a NumPy float64 forward pass.
. "$(dirname "$0")/lib.sh"
start_daemon ex || exit 1
export EULERNPU_SERVER=unix:$TMP/ex.sock
for dir in "$EX"/*/; do
	[ -f "$dir/spec.yaml" ] || continue   # resnet18_onnx: a script (models.sh runs it)
	ex=$(basename "$dir")
	check "$ex: golden within 1e-5 of numpy float64" "$PY" "$dir/gen.py" --check "$dir/golden.npz"
	check "$ex: compile" "$BIN/eulernpu" compile --spec "$dir/spec.yaml" --weights "$dir/weights.npz" \
		--backend cpu_ref --out "$TMP/$ex"
	check "$ex: run" "$BIN/eulernpu" run --artifact "$TMP/$ex" --input "$dir/input.npz" --out "$TMP/$ex.npz"
	check "$ex: result equals golden bit for bit" "$BIN/eulernpu" compare --got "$TMP/$ex.npz" \
		--expected "$dir/golden.npz" --exact
done
finish
