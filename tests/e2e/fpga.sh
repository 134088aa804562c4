#!/usr/bin/env bash
# fpga.sh: validate and compile say how many ops an fpga_board partition
# puts on the PL (the counts come from the partition in the core).
. "$(dirname "$0")/lib.sh"
start_daemon f || exit 1
export EULERNPU_SERVER=unix:$TMP/f.sock
out=$("$BIN/eulernpu" validate "$EX/tiny_cnn/spec.yaml" --backend fpga_board)
expect_eq "tiny_cnn validate: PL line" "$out" "Validation OK: 8 operators · 2 components · backend=fpga_board
fpga_board : 2 of 8 ops on the PL in 2 segments · 6 on the PS"
out=$("$BIN/eulernpu" compile --spec "$EX/tiny_mlp/spec.yaml" --weights "$EX/tiny_mlp/weights.npz" \
	--backend fpga_board --out "$TMP/mlp")
expect_eq "tiny_mlp compile: PL line" "$out" "Compile  OK: 5 ops lowered · plan written
fpga_board : 5 of 5 ops on the PL in 2 segments · 0 on the PS"
out=$("$BIN/eulernpu" compile --spec "$EX/tiny_mlp/spec.yaml" --weights "$EX/tiny_mlp/weights.npz" \
	--backend fpga_board --out "$TMP/mlp2")
expect_match "a cache hit says it too" "$out" "^fpga_board : 5 of 5 ops on the PL"
printf 'pl_ops: [matmul]\n' > "$TMP/t.yaml"
out=$("$BIN/eulernpu" compile --spec "$EX/tiny_mlp/spec.yaml" --weights "$EX/tiny_mlp/weights.npz" \
	--backend fpga_board --target "$TMP/t.yaml" --out "$TMP/mlp3")
expect_match "a target restricting the PL moves ops to the PS" "$out" \
	"fpga_board : 2 of 5 ops on the PL in 2 segments · 3 on the PS"
out=$("$BIN/eulernpu" validate "$EX/tiny_mlp/spec.yaml")
expect_eq "cpu_ref says nothing of a PL" "$out" "Validation OK: 5 operators · 2 components · backend=cpu_ref"
finish
