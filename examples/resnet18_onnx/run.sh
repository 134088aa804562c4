#!/usr/bin/env bash
# run.sh: a PyTorch model into eulernpu. Exports torchvision's resnet18
# (random weights, nothing downloaded) to ONNX with torch, imports it into
# a spec (`eulernpu import`), compiles it for cpu_ref and npu_sim, runs
# both on the same input and compares: cpu_ref against torch's own output,
# npu_sim against cpu_ref bit for bit. Needs python3-torch and
# python3-torchvision (Debian), and a built tree (`make`).
#
# Usage: examples/resnet18_onnx/run.sh [OUT]   (OUT: a new directory; default
# a temporary one, removed at the end)
set -eu
cd "$(dirname "$0")/../.."
export PATH="$PWD/bin:$PATH"
OUT=${1:-}
if [ -z "$OUT" ]; then
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/resnet18_onnx.XXXXXX")
	trap 'rm -rf "$OUT"' EXIT
fi
run() { echo "\$ $*"; "$@"; }
run /usr/bin/python3 examples/resnet18_onnx/export.py "$OUT" resnet18
M=$OUT/resnet18
run eulernpu import  "$M/model.onnx" --out "$OUT/spec"
run eulernpu compile --spec "$OUT/spec/spec.yaml" --weights "$OUT/spec/weights.npz" --out "$OUT/cpu"
run eulernpu run     --artifact "$OUT/cpu" --input "$M/input.npz" --out "$OUT/cpu.npz"
run eulernpu compare --got "$OUT/cpu.npz" --expected "$M/expected.npz" --tol 1e-4 --rtol 1e-3
run eulernpu compile --spec "$OUT/spec/spec.yaml" --weights "$OUT/spec/weights.npz" \
	--backend npu_sim --out "$OUT/npu"
run eulernpu run     --artifact "$OUT/npu" --input "$M/input.npz" --out "$OUT/npu.npz"
run eulernpu compare --got "$OUT/npu.npz" --expected "$OUT/cpu.npz" --exact
