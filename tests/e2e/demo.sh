#!/usr/bin/env bash
# demo.sh: the tiny_mlp pipeline through the thin client, as README shows it.
# With no EULERNPU_SERVER set, the client starts a private daemon on a Unix
# socket in the runtime directory; it exits by itself once idle.
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-bin}
export PATH="$PWD/$BIN:$PATH"
EX=examples/tiny_mlp
OUT=$(mktemp -d "${TMPDIR:-/tmp}/enpu-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
run() { echo "\$ $*"; "$@"; }
run eulernpu validate $EX/spec.yaml
run eulernpu compile  --spec $EX/spec.yaml --weights $EX/weights.npz --out "$OUT/mlp"
run eulernpu run      --artifact "$OUT/mlp" --input $EX/input.npz --out "$OUT/mlp.out.npz"
run eulernpu compare  --got "$OUT/mlp.out.npz" --expected $EX/golden.npz
