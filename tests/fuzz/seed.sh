#!/usr/bin/env bash
# seed.sh TARGET DIR [FUZZ_BINARY]: (re)build the seed corpus of one fuzz
# target in DIR from what the repository already holds (examples, test
# data) plus tests/fuzz/seeds/TARGET/. A target may add its own generator:
# an executable tests/fuzz/seeds/TARGET/seed.sh, run as `seed.sh DIR`.
# fuzz_artifact writes its seeds itself (ENPU_FUZZ_SEEDS), so it needs
# FUZZ_BINARY. Run from anywhere; paths are the repository's.
set -eu
cd "$(dirname "$0")/../.."
t=${1:?usage: seed.sh TARGET DIR [FUZZ_BINARY]}
dir=${2:?usage: seed.sh TARGET DIR [FUZZ_BINARY]}
bin=${3:-build-fuzz/fuzz_$t}

rm -rf "$dir"
mkdir -p "$dir"

add() {   # copy each file, named after its path (a/b/c.npz -> a_b_c.npz)
	local f
	for f in "$@"; do
		[ -f "$f" ] || continue
		cp "$f" "$dir/$(tr '/' '_' <<<"$f")"
	done
}

# compare's input: option byte, 4-byte little-endian length of got, got, expected
pair() {   # $1 = name, $2 = option byte (decimal), $3 = got, $4 = expected
	local n
	n=$(stat -c %s "$3")
	{
		printf "\\$(printf '%03o' "$2")"
		printf "\\$(printf '%03o' $((n & 255)))\\$(printf '%03o' $((n >> 8 & 255)))"
		printf "\\$(printf '%03o' $((n >> 16 & 255)))\\$(printf '%03o' $((n >> 24 & 255)))"
		cat "$3" "$4"
	} >"$dir/$1"
}

case "$t" in
spec)
	add examples/*/spec.yaml tests/data/specs/*/*.yaml tests/data/graphs/*/spec.yaml \
	    tests/data/npusim/targets_bad/*.yaml
	# a sample of the op cases: one spec per op kind is plenty
	add $(ls tests/data/ops/*/spec.yaml | awk -F/ '{split($4, a, "_"); if (!seen[a[1]]++) print}')
	;;
npz)
	add examples/*/*.npz tests/data/npz/*.npy tests/data/npz/*.npz
	add $(ls tests/data/ops/*/input.npz | head -20)
	;;
compare)
	for ex in examples/*/; do
		[ -f "$ex/golden.npz" ] || continue   # resnet18_onnx: a script, no golden
		n=$(basename "$ex")
		pair "${n}_golden_self" 2 "$ex/golden.npz" "$ex/golden.npz"
		pair "${n}_golden_exact" 64 "$ex/golden.npz" "$ex/golden.npz"
		pair "${n}_input_golden" 18 "$ex/input.npz" "$ex/golden.npz"
		pair "${n}_weights_self_rtol" 26 "$ex/weights.npz" "$ex/weights.npz"
	done
	i=0
	for f in tests/data/npz/*.npz; do
		pair "bad_$((i++))" 2 "$f" examples/tiny_mlp/golden.npz
	done
	;;
onnx)
	# a sample of Debian's libonnx-testdata: models and their .pb tensors
	od=/usr/share/libonnx-testdata/data
	for c in node/test_conv_with_strides_padding node/test_constant node/test_if \
		 node/test_depthtospace_crd_mode node/test_constantofshape_int_zeros \
		 node/test_identity_sequence pytorch-converted/test_Conv2d \
		 pytorch-operator/test_operator_non_float_params simple/test_sequence_model8; do
		[ -f "$od/$c/model.onnx" ] && cp "$od/$c/model.onnx" "$dir/$(tr '/' '_' <<<"$c").onnx"
		[ -f "$od/$c/test_data_set_0/input_0.pb" ] &&
			cp "$od/$c/test_data_set_0/input_0.pb" "$dir/$(tr '/' '_' <<<"$c")_input_0.pb"
	done
	;;
artifact)
	[ -x "$bin" ] || { echo "seed.sh: $bin is not built" >&2; exit 1; }
	ENPU_FUZZ_SEEDS=$dir "$bin" >/dev/null 2>&1 ||
		{ echo "seed.sh: $bin could not write its seeds" >&2; exit 1; }
	;;
esac

# hand-made seeds, minus generators and notes
if [ -d "tests/fuzz/seeds/$t" ]; then
	for f in "tests/fuzz/seeds/$t"/*; do
		case "$(basename "$f")" in *.py|*.sh|README*) continue ;; esac
		[ -f "$f" ] && cp "$f" "$dir/seed_$(basename "$f")"
	done
	if [ -x "tests/fuzz/seeds/$t/seed.sh" ]; then
		"tests/fuzz/seeds/$t/seed.sh" "$dir"
	fi
fi
echo "$(ls "$dir" | wc -l)"
