#!/usr/bin/env bash
# regen.sh: regenerate every example's weights.npz and input.npz with NumPy
# (seeded), then its golden.npz with cpu_ref through the client, and check
# each golden against a NumPy float64 forward pass within 1e-5.
# Usage: examples/regen.sh [bin-dir]   (after `make`)
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BIN/eulernpud" --socket "$TMP/d.sock" --cache "$TMP/cache" --log "$TMP/d.log" </dev/null >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
export EULERNPU_SERVER=unix:$TMP/d.sock
for _ in $(seq 100); do curl -sf --unix-socket "$TMP/d.sock" http://localhost/v1/health >/dev/null && break; sleep 0.05; done
for ex in examples/*/; do
	[ -f "$ex/gen.py" ] || continue   # resnet18_onnx: its own run.sh
	ex=${ex%/}
	/usr/bin/python3 "$ex/gen.py"
	"$BIN/eulernpu" compile --spec "$ex/spec.yaml" --weights "$ex/weights.npz" --backend cpu_ref --out "$TMP/$(basename "$ex")"
	"$BIN/eulernpu" run --artifact "$TMP/$(basename "$ex")" --input "$ex/input.npz" --out "$ex/golden.npz"
	/usr/bin/python3 "$ex/gen.py" --check "$ex/golden.npz"
done
