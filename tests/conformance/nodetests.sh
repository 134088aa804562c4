#!/usr/bin/env bash
# nodetests.sh: ONNX's own node tests (Debian's libonnx-testdata,
# data/node/) through the whole pipeline, on one daemon: every test is
# classified by nodetest.py against what that daemon's GET /v1/backends
# lists (applicable: float32 inputs and outputs, every node that runs maps to
# a spec v2 op the daemon has; else not applicable, with the reason); each
# applicable one is imported (`eulernpu import`), compiled and run on cpu_ref
# and compared with the test's output_N.pb at ONNX's tolerance (rtol 1e-3,
# atol 1e-7; integer outputs of spec v3's quantised ops exactly, `compare
# --exact`), and compiled and run on npu_sim, which must give cpu_ref's
# bytes (`compare --exact`), where npu_sim lowers every op the test needs
# (GET /v1/backends: npu_sim does not lower the quantised ops yet, by
# design). Prints the per-op table (passed, failed, not
# applicable with reasons) and checks that docs/conformance.md's copy of it (between
# <!-- nodetests:begin --> and <!-- nodetests:end -->) is current.
#
#   nodetests.sh            check: fails when a test fails or the table is stale
#   nodetests.sh --write    rewrite docs/conformance.md's table (still fails on a failed test)
#   nodetests.sh TEST...    only these tests (no table check)
#
# Every command is bounded (NODETEST_TIMEOUT seconds, 120), so a hang is a
# failure, not a stuck run. make conformance runs it; make test too.
. "$(dirname "$0")/../e2e/lib.sh"
NODE=${ONNX_NODE_DIR:-/usr/share/libonnx-testdata/data/node}
HELPER=$ROOT/tests/conformance/nodetest.py
LIMIT=${NODETEST_TIMEOUT:-120}
write=0
if [ "${1:-}" = --write ]; then
	write=1
	shift
fi
only=("$@")
if [ ! -d "$NODE" ]; then
	skip no-onnx-testdata "$NODE is missing (apt-get install libonnx-testdata)"
	finish
	exit
fi
t0=$(date +%s)
start_daemon nt || { finish; exit 1; }
export EULERNPU_SERVER=unix:$TMP/nt.sock
dcurl nt http://localhost/v1/backends >"$TMP/backends.json"
W=$TMP/w
RES=$TMP/results.tsv
: >"$RES"
if ! "$PY" "$HELPER" prepare "$NODE" "$W" "$TMP/backends.json" "${only[@]}" >"$TMP/prep.tsv" \
	2>"$TMP/prep.err"; then
	notok "nodetest.py prepare: $(tail -1 "$TMP/prep.err")"
	finish
	exit 1
fi

enpu() { timeout "$LIMIT" "$BIN/eulernpu" "$@"; }

# one_test NAME SETS BACKENDS CMP: 0 when it passes; else the reason on stdout, and 2
# when the daemon's importer says the op lacks an attribute in this build
# (a v2 attribute of a v1 op: /v1/backends lists ops, not attributes), 1
# for a failure; 2 too for an attribute value the importer says is not in
# spec v2 ("OpType ATTR VALUE not in spec v2")
one_test() {
	local d=$W/$1 sets=$2 bks=$3 cmp=$4 k attr b
	if ! enpu import "$d/model.onnx" --out "$d/imp" --json >"$d/imp.json" 2>"$d/err"; then
		attr=$(sed -n 's/.*spec op \([a-z0-9_]*\) of this build has no attribute \([a-z_]*\).*/\1 \2/p' \
			"$d/err" | head -1)
		if [ -n "$attr" ] && [ "$(grep -c 'cannot be imported' "$d/err")" = 1 ] &&
			grep -q ': 1 node cannot be imported' "$d/err"; then
			echo "attribute not in spec v2 ($attr)"
			return 2
		fi
		# the importer's "ATTR VALUE not in spec v2": an attribute value
		# spec v2 does not have by design (Resize mode cubic, ...)
		attr=$(sed -n 's/.*cannot be imported: .* (\([A-Za-z]*\), opset [0-9]*): \(.* not in spec v2\)$/\1 \2/p' \
			"$d/err" | head -1)
		if [ -n "$attr" ] && grep -q ': 1 node cannot be imported' "$d/err"; then
			echo "$attr"
			return 2
		fi
		echo "import: $(sed -n 2p "$d/err" | sed 's/^ *//')"
		return 1
	fi
	for b in $bks; do
		enpu compile --spec "$d/imp/spec.yaml" --weights "$d/imp/weights.npz" --backend "$b" \
			--out "$d/$b" >/dev/null 2>"$d/err" ||
			{ echo "compile on $b: $(head -1 "$d/err")"; return 1; }
	done
	for ((k = 0; k < sets; k++)); do
		"$PY" "$HELPER" rekey "$d/imp.json" "$k" "$d" 2>"$d/err" ||
			{ tail -1 "$d/err"; return 1; }
		for b in $bks; do
			enpu run --artifact "$d/$b" --input "$d/in_$k.npz" --out "$d/$b.$k.npz" \
				>/dev/null 2>"$d/err" || { echo "run on $b: $(head -1 "$d/err")"; return 1; }
		done
		if [ "$cmp" = exact ]; then
			enpu compare --got "$d/cpu_ref.$k.npz" --expected "$d/exp_$k.npz" --exact \
				>"$d/err" 2>&1
		else
			enpu compare --got "$d/cpu_ref.$k.npz" --expected "$d/exp_$k.npz" --tol 1e-7 \
				--rtol 1e-3 >"$d/err" 2>&1
		fi || { echo "cpu_ref vs output_$k.pb: $(grep -m1 -v '^ *$' "$d/err")"; return 1; }
		case " $bks " in *" npu_sim "*) ;; *) continue ;; esac
		enpu compare --got "$d/npu_sim.$k.npz" --expected "$d/cpu_ref.$k.npz" --exact \
			>"$d/err" 2>&1 ||
			{ echo "npu_sim vs cpu_ref: $(grep -m1 -v '^ *$' "$d/err")"; return 1; }
	done
	return 0
}

n_app=0
while IFS=$'\t' read -r t op st info bks cmp; do
	if [ "$st" != applicable ]; then
		printf '%s\t%s\tna\t%s\n' "$t" "$op" "$info" >>"$RES"
		continue
	fi
	why=$(one_test "$t" "$info" "$bks" "$cmp")
	case $? in
	0)	n_app=$((n_app + 1))
		ok "$t ($op)"
		printf '%s\t%s\tpass\n' "$t" "$op" >>"$RES" ;;
	2)	echo "n/a - $t ($op): $why"
		printf '%s\t%s\tna\t%s\n' "$t" "$op" "$why" >>"$RES" ;;
	*)	n_app=$((n_app + 1))
		notok "$t ($op): $why"
		printf '%s\t%s\tfail\t%s\n' "$t" "$op" "$why" >>"$RES" ;;
	esac
done <"$TMP/prep.tsv"

table=$("$PY" "$HELPER" table "$RES")
printf '%s\n' "$table"
echo "nodetests: $(wc -l <"$TMP/prep.tsv") tests, $n_app applicable, $(( $(date +%s) - t0 )) s"
if [ ${#only[@]} = 0 ]; then
	if [ "$write" = 1 ]; then
		awk -v t="$table" '/<!-- nodetests:begin -->/ { print; print t; skip = 1; next }
			/<!-- nodetests:end -->/ { skip = 0 } !skip' "$ROOT/docs/conformance.md" >"$TMP/conformance.md" &&
			cp "$TMP/conformance.md" "$ROOT/docs/conformance.md"
	fi
	got=$(sed -n '/<!-- nodetests:begin -->/,/<!-- nodetests:end -->/p' "$ROOT/docs/conformance.md" | sed '1d;$d')
	expect_eq "docs/conformance.md's node-test table is current (tests/conformance/nodetests.sh --write)" \
		"$got" "$table"
fi
finish
