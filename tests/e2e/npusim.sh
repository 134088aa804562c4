#!/usr/bin/env bash
# npusim.sh: the npu_sim backend through the daemon and the client: the
# issue's five commands (cpu_ref vs npu_sim, byte-equal) for tiny_mlp and
# tiny_cnn, run's summary line, run --report and `eulernpu report`, target
# files (capability errors, invalid targets, the cache key), AlexNet conv1 in
# scalesim_compat mode (112283 cycles), and the capability matrix.
. "$(dirname "$0")/lib.sh"

U=http://localhost
# Every client call is bounded: a hang is a failure, not a stuck suite.
enpu() { timeout 120 "$BIN/eulernpu" "$@"; }
# jget FILE KEY.PATH: a JSON value (strings bare, others as JSON)
sha() { sha256sum "$1" | cut -d' ' -f1; }
art_id() { jget "$1/manifest.json" id; }
# The op a report ranks first: the highest compute + stall, first in schedule order on a tie.
top_op() {
	jexpr "$1" '(lambda ops, cost: [o["name"] for o in ops if cost(o) == max(map(cost, ops))][0])(
		d["npu"]["ops"], lambda o: o.get("compute_cycles", 0) + o.get("stall_cycles", 0))'
}
SUMMARY_RE='^npu_sim    : [0-9]+ cycles · [0-9]+\.[0-9]{2} µs at [0-9.]+ MHz · DRAM [0-9]+(\.[0-9])? (B|KiB|MiB|GiB) · utilisation [0-9]+\.[0-9]%$'

export EULERNPU_SERVER=unix:$TMP/a.sock
start_daemon a --workers 2 || { finish; exit 1; }

# ---- the issue's five commands, per example ------------------------------------
for m in tiny_mlp tiny_cnn; do
	X=$EX/$m
	out=$(enpu compile --spec "$X/spec.yaml" --weights "$X/weights.npz" --backend cpu_ref --out "$TMP/$m.a"); rc=$?
	expect_match "$m: compile cpu_ref" "$out $rc" '^Compile  OK: [0-9]+ ops lowered · plan written 0$'
	out=$(enpu run --artifact "$TMP/$m.a" --input "$X/input.npz" --out "$TMP/$m.a.npz" --report "$TMP/$m.a.json"); rc=$?
	expect_match "$m: run cpu_ref prints the Run line" "$out" '^Run      OK: [0-9]+ output tensors? \('
	expect_eq "$m: run cpu_ref prints one line (no npu_sim summary)" "$(wc -l <<<"$out") $rc" "1 0"
	out=$(enpu compile --spec "$X/spec.yaml" --weights "$X/weights.npz" --backend npu_sim --out "$TMP/$m.b"); rc=$?
	expect_match "$m: compile npu_sim" "$out $rc" '^Compile  OK: [0-9]+ ops lowered · plan written 0$'
	expect_eq "$m: the artifact is npu_sim's" "$(jget "$TMP/$m.b/manifest.json" backend)" npu_sim
	runb=$(enpu run --artifact "$TMP/$m.b" --input "$X/input.npz" --out "$TMP/$m.b.npz" --report "$TMP/$m.b.json"); rc=$?
	expect_eq "$m: run npu_sim exits 0" "$rc" 0
	expect_match "$m: run npu_sim: the Run line first" "$(sed -n 1p <<<"$runb")" '^Run      OK: [0-9]+ output tensors? \('
	expect_match "$m: run npu_sim: one summary line" "$(sed -n 2p <<<"$runb")" "$SUMMARY_RE"
	expect_eq "$m: run npu_sim prints two lines" "$(wc -l <<<"$runb")" 2
	out=$(enpu compare --got "$TMP/$m.b.npz" --expected "$TMP/$m.a.npz" --exact); rc=$?
	expect_eq "$m: compare --exact npu_sim vs cpu_ref" "$out $rc" "Compare  OK: 1 tensor · bytes equal 0"
	check "$m: npu_sim result.npz is byte-identical to cpu_ref's" cmp "$TMP/$m.a.npz" "$TMP/$m.b.npz"
	if [ -f "$X/golden.npz" ]; then
		out=$(enpu compare --got "$TMP/$m.b.npz" --expected "$X/golden.npz" --exact)
		expect_eq "$m: npu_sim equals the golden bit for bit" "$out" "Compare  OK: 1 tensor · bytes equal"
	fi

	# run --report: the JSON, its cycles, and the summary's numbers agree.
	expect_eq "$m: report format" "$(jget "$TMP/$m.b.json" format)" eulernpu-report
	expect_eq "$m: report backend" "$(jget "$TMP/$m.b.json" backend)" npu_sim
	cyc=$(jget "$TMP/$m.b.json" npu.totals.cycles)
	expect_match "$m: report totals.cycles > 0" "$cyc" '^[1-9][0-9]*$'
	expect_match "$m: the summary quotes totals.cycles" "$(sed -n 2p <<<"$runb")" "^npu_sim    : $cyc cycles · "
	expect_eq "$m: report lists every op" "$(jget "$TMP/$m.b.json" 'npu.ops.#')" \
		"$(jget "$TMP/$m.b/graph.json" 'ops.#')"
	expect_eq "$m: cpu_ref report has no npu section" "$(jexpr "$TMP/$m.a.json" '"npu" in d')" false

	# eulernpu report FILE: header, columns, most expensive op first, totals.
	out=$(enpu report "$TMP/$m.b.json"); rc=$?
	expect_eq "$m: report FILE exits 0" "$rc" 0
	expect_match "$m: report header" "$(sed -n 1p <<<"$out")" '^npu_sim report: [0-9]+ ops · array [0-9]+×[0-9]+ · (os|ws|is) · '
	expect_match "$m: report column header" "$(sed -n 2p <<<"$out")" '^op +lowering +shape +folds +cycles +stall +util % +SRAM words +DRAM bytes$'
	top=$(top_op "$TMP/$m.b.json")
	expect_match "$m: first row is the most expensive op ($top)" "$(sed -n 3p <<<"$out")" "^$top "
	expect_match "$m: totals line" "$(tail -1 <<<"$out")" "^total: $cyc cycles .* µs at [0-9.]+ MHz · DRAM read .*, write .* · peak SRAM .* · utilisation [0-9.]+%$"
	widths=$("$PY" -c 'import sys; ls = sys.stdin.buffer.read().decode().split("\n")[1:-2]; print(len({len(l) for l in ls}))' <<<"$out")
	expect_eq "$m: every table row has the same width" "$widths" 1
	out=$(enpu report "$TMP/$m.a.json"); rc=$?
	expect_match "$m: report of a cpu_ref run: no cycle model" "$out $rc" '^cpu_ref report: no cycle model \(only npu_sim has one\) 0$'
done

# ---- report JOBID, and the served bytes --------------------------------------------
M=$EX/tiny_cnn
ID=$(art_id "$TMP/tiny_cnn.b")
dcurl a -o "$TMP/job.json" -F artifact="$ID" -F input=@"$M/input.npz" "$U/v1/jobs?wait=60"
JID=$(jget "$TMP/job.json" id)
expect_eq "job JSON: npu.cycles as in the report" "$(jget "$TMP/job.json" npu.cycles)" "$(jget "$TMP/tiny_cnn.b.json" npu.totals.cycles)"
expect_match "job JSON: npu has time_us, dram_bytes, utilisation, clock_mhz" \
	"$(jget "$TMP/job.json" npu)" '"time_us": .*"clock_mhz": .*"dram_bytes": .*"utilisation": '
dcurl a -o "$TMP/served.json" "$U/v1/jobs/$JID/report"
expect_eq "GET /report: the bytes the job's digest names" "$(sha "$TMP/served.json")" "$(jget "$TMP/job.json" report)"
dcurl a -o "$TMP/job2.json" -F artifact="$ID" -F input=@"$M/input.npz" "$U/v1/jobs?wait=60"
expect_eq "the same run again: the same report bytes (no clock in a report)" \
	"$(jget "$TMP/job2.json" report)" "$(jget "$TMP/job.json" report)"
expect_eq "the same run again: a job of its own" "$(jget "$TMP/job2.json" id | grep -cx "$JID")" 0
expect_eq "report.json: version 2, no seconds" "$(jget "$TMP/served.json" version) $(grep -c '"seconds"' "$TMP/served.json")" "2 0"
out=$(enpu report "$JID"); rc=$?
expect_eq "report JOBID exits 0" "$rc" 0
expect_eq "report JOBID prints what report FILE prints" "$out" "$(enpu report "$TMP/tiny_cnn.b.json")"
check_status "report of an unknown job exits 2" 2 enpu report 0123456789abcdef
expect_eq "unknown job: E0800" "$(sed -n 1p "$TMP/last.err")" "error[E0800]: not found"
printf '{"format": "something-else"}\n' >"$TMP/notreport.json"
check_status "report of a file that is not a report exits 2" 2 enpu report "$TMP/notreport.json"
expect_eq "not a report: E0100" "$(sed -n 1p "$TMP/last.err")" "error[E0100]: usage error"
expect_match "not a report: names the file" "$(sed -n 2p "$TMP/last.err")" "notreport\.json.*not an eulernpu report"
expect_eq "not a report: three lines" "$(wc -l <"$TMP/last.err")" 3
printf 'not json' >"$TMP/garbage.json"
check_status "report of a non-JSON file exits 2" 2 enpu report "$TMP/garbage.json"
check_status "report of a missing file that is no job id exits 2" 2 enpu report "$TMP/nope.json"
expect_eq "missing report file: E0003" "$(sed -n 1p "$TMP/last.err")" "error[E0003]: cannot read or write a file"
check_status "report --help exits 0" 0 enpu report --help
expect_match "report --help on stdout" "$(head -1 "$TMP/last.out")" '^usage: eulernpu report '
check_status "report without an argument exits 2" 2 enpu report

# ---- target files: capability errors, invalid targets ----------------------------------
L=$EX/tiny_mlp
sed 's/^  npu_sim: .*/  npu_sim: {ops: [matmul, add]}/' "$L/spec.yaml" >"$TMP/restricted.yaml"
check "restricted spec copy differs" sh -c "! cmp -s '$L/spec.yaml' '$TMP/restricted.yaml'"
check_status "spec targets without relu: compile exits 2" 2 \
	enpu compile --spec "$TMP/restricted.yaml" --weights "$L/weights.npz" --backend npu_sim --out "$TMP/r1"
expect_eq "capability (spec): E0210" "$(sed -n 1p "$TMP/last.err")" "error[E0210]: backend lowering missing for op"
expect_match "capability (spec): names act1 and npu_sim" "$(sed -n 2p "$TMP/last.err")" "'act1'.*npu_sim|npu_sim.*'act1'"
expect_eq "capability (spec): three lines" "$(wc -l <"$TMP/last.err")" 3
check_status "spec targets without relu: validate exits 2" 2 enpu validate "$TMP/restricted.yaml" --backend npu_sim
expect_eq "capability (validate): E0210" "$(sed -n 1p "$TMP/last.err")" "error[E0210]: backend lowering missing for op"
printf 'ops: [matmul, add]\n' >"$TMP/noact.yaml"
check_status "--target without relu: compile exits 2" 2 \
	enpu compile --spec "$L/spec.yaml" --weights "$L/weights.npz" --backend npu_sim --target "$TMP/noact.yaml" --out "$TMP/r2"
expect_eq "capability (--target): E0210" "$(sed -n 1p "$TMP/last.err")" "error[E0210]: backend lowering missing for op"
expect_match "capability (--target): names act1" "$(sed -n 2p "$TMP/last.err")" "'act1'"
check "capability error wrote no artifact" test ! -e "$TMP/r2/manifest.json"
check_status "--target without relu: validate exits 2" 2 enpu validate "$L/spec.yaml" --backend npu_sim --target "$TMP/noact.yaml"
expect_eq "capability (validate --target): E0210" "$(sed -n 1p "$TMP/last.err")" "error[E0210]: backend lowering missing for op"
out=$(enpu validate "$L/spec.yaml" --backend npu_sim); rc=$?
expect_eq "validate --backend npu_sim" "$out $rc" "Validation OK: 5 operators · 2 components · backend=npu_sim 0"
printf 'ops: [matmul, add, relu]\n' >"$TMP/withact.yaml"
out=$(enpu validate "$L/spec.yaml" --backend npu_sim --target "$TMP/withact.yaml"); rc=$?
expect_eq "validate --target with every op" "$out $rc" "Validation OK: 5 operators · 2 components · backend=npu_sim 0"

printf 'array: [0, 16]\n' >"$TMP/bad_target.yaml"
check_status "invalid target file: compile exits 2" 2 \
	enpu compile --spec "$L/spec.yaml" --weights "$L/weights.npz" --backend npu_sim --target "$TMP/bad_target.yaml" --out "$TMP/r3"
expect_eq "invalid target: E0213" "$(sed -n 1p "$TMP/last.err")" "error[E0213]: invalid target description"
expect_match "invalid target: at FILE:line:col" "$(sed -n 2p "$TMP/last.err")" "^  $TMP/bad_target\.yaml:1:[0-9]+: "
expect_match "invalid target: see line" "$(sed -n 3p "$TMP/last.err")" '^  fix: .* · See: eulernpu explain E0213$'
check_status "invalid target file: validate exits 2" 2 enpu validate "$L/spec.yaml" --backend npu_sim --target "$TMP/bad_target.yaml"
expect_eq "invalid target (validate): E0213" "$(sed -n 1p "$TMP/last.err")" "error[E0213]: invalid target description"
check_status "missing target file exits 2" 2 \
	enpu compile --spec "$L/spec.yaml" --weights "$L/weights.npz" --backend npu_sim --target "$TMP/none.yaml" --out "$TMP/r4"
expect_eq "missing target file: E0003" "$(sed -n 1p "$TMP/last.err")" "error[E0003]: cannot read or write a file"

# ---- the target is part of the cache key -------------------------------------------------
# tiny_mlp's spec says {array: [16, 16], dataflow: os}; the same options in
# a file, reordered and with a default spelled out, are the same key.
SD=$(sha "$L/spec.yaml"); WD=$(sha "$L/weights.npz")
DEF_ID=$(art_id "$TMP/tiny_mlp.b")
printf 'dataflow: os\narray: [16, 16]\nword_bytes: 4\n' >"$TMP/same.yaml"
dcurl a -o "$TMP/c_same.json" -F spec=@"$L/spec.yaml" -F weights=@"$L/weights.npz" -F backend=npu_sim \
	-F target=@"$TMP/same.yaml" "$U/v1/compile"
expect_eq "equivalent target in a file: cache hit, same artifact" \
	"$(jget "$TMP/c_same.json" cached) $(jget "$TMP/c_same.json" artifact)" "true $DEF_ID"
printf 'array: [8, 8]\ndataflow: os\n' >"$TMP/small.yaml"
out=$(enpu compile --spec "$L/spec.yaml" --weights "$L/weights.npz" --backend npu_sim --target "$TMP/small.yaml" --out "$TMP/small"); rc=$?
expect_eq "compile --target (8x8) exits 0" "$rc" 0
SMALL_ID=$(art_id "$TMP/small")
expect_match "a different target: a different artifact" "$SMALL_ID" '^[0-9a-f]{64}$'
check "a different target: the artifact id changes" test "$SMALL_ID" != "$DEF_ID"
TD=$(sha "$TMP/small.yaml")
dcurl a -o "$TMP/c_small.json" -d "{\"spec\":\"$SD\",\"weights\":\"$WD\",\"backend\":\"npu_sim\",\"target\":\"$TD\",\"target_name\":\"small.yaml\"}" "$U/v1/compile"
expect_eq "the 8x8 target again (JSON digests): cache hit, same id" \
	"$(jget "$TMP/c_small.json" cached) $(jget "$TMP/c_small.json" artifact)" "true $SMALL_ID"
sed 's/^  npu_sim: .*/  npu_sim: {dataflow: os, array: [8, 8]}/' "$L/spec.yaml" >"$TMP/spec8.yaml"
dcurl a -o "$TMP/c_spec8.json" -F spec=@"$TMP/spec8.yaml" -F weights=@"$L/weights.npz" -F backend=npu_sim "$U/v1/compile"
expect_eq "the 8x8 target in the spec: a new compile (other spec digest)" "$(jget "$TMP/c_spec8.json" cached)" false
out=$(enpu run --artifact "$TMP/small" --input "$L/input.npz" --out "$TMP/small.npz"); rc=$?
expect_match "the 8x8 artifact runs" "$(sed -n 2p <<<"$out") $rc" "${SUMMARY_RE%\$} 0$"
check "8x8 array: the same bytes as cpu_ref" cmp "$TMP/small.npz" "$TMP/tiny_mlp.a.npz"

# ---- the roofline: a bandwidth limit makes ops memory-bound, listed first ---------------
C=$EX/tiny_cnn
printf 'dram_bytes_per_cycle: 16\n' >"$TMP/bw.yaml"
enpu compile --spec "$C/spec.yaml" --weights "$C/weights.npz" --backend npu_sim --target "$TMP/bw.yaml" --out "$TMP/bw" >/dev/null
enpu run --artifact "$TMP/bw" --input "$C/input.npz" --out "$TMP/bw.npz" --report "$TMP/bw.json" >/dev/null
check "16 B/cycle: the same bytes as cpu_ref" cmp "$TMP/bw.npz" "$TMP/tiny_cnn.a.npz"
expect_eq "16 B/cycle: memory_bound is stall_cycles > 0 for every op" \
	"$(jexpr "$TMP/bw.json" 'all(o["memory_bound"] == (o["stall_cycles"] > 0) for o in d["npu"]["ops"])')" true
expect_eq "16 B/cycle: an op stalls iff its needed bandwidth is above 16" \
	"$(jexpr "$TMP/bw.json" 'all((o["needed_bytes_per_cycle"] > 16) == o["memory_bound"] for o in d["npu"]["ops"])')" true
expect_eq "16 B/cycle: gemm ops have MACs per DRAM byte" \
	"$(jexpr "$TMP/bw.json" 'all(("arithmetic_intensity" in o) == (o["lowering"] == "gemm") for o in d["npu"]["ops"])')" true
nmem=$(jexpr "$TMP/bw.json" 'sum(o["memory_bound"] for o in d["npu"]["ops"])')
expect_match "16 B/cycle: some ops are memory-bound" "$nmem" '^[1-9][0-9]*$'
want=$(jexpr "$TMP/bw.json" '" ".join(o["name"] for o in sorted((o for o in d["npu"]["ops"] if o["stall_cycles"] > 0), key=lambda o: -o["stall_cycles"]))')
out=$(enpu report "$TMP/bw.json")
expect_match "16 B/cycle: report header names the bandwidth" "$(sed -n 1p <<<"$out")" ' · DRAM 16 B/cycle · '
expect_match "16 B/cycle: roofline columns" "$(sed -n 2p <<<"$out")" 'DRAM bytes +MAC/B +needs B/c +bound$'
expect_eq "16 B/cycle: memory-bound ops first, most stall first" \
	"$(sed -n "3,$((nmem + 2))p" <<<"$out" | awk '{print $1}' | paste -sd' ')" "$want"
expect_eq "16 B/cycle: those rows say memory, the others not" \
	"$(sed -n '3,$p' <<<"$out" | sed '$d' | awk '{print $NF}' | uniq -c | awk '{print $2}' | paste -sd' ')" "memory compute -"
printf 'array: [4, 4]\ndataflow: ws\n' >"$TMP/ws.yaml"
dcurl a -o "$TMP/c_ws.json" -F spec=@"$L/spec.yaml" -F weights=@"$L/weights.npz" -F backend=npu_sim \
	-F target=@"$TMP/ws.yaml" "$U/v1/compile"
expect_eq "a new target (multipart): cached false" "$(jget "$TMP/c_ws.json" cached)" false
check "a new target: another artifact id" test "$(jget "$TMP/c_ws.json" artifact)" != "$DEF_ID"
dcurl a -o "$TMP/c_bad.json" -F spec=@"$L/spec.yaml" -F weights=@"$L/weights.npz" -F backend=npu_sim \
	-F target=@"$TMP/bad_target.yaml" "$U/v1/compile"
expect_match "invalid target over curl: E0213 at bad_target.yaml:1" \
	"$(jget "$TMP/c_bad.json" error.code) $(jget "$TMP/c_bad.json" error.where)" '^E0213 bad_target\.yaml:1:[0-9]+$'

# ---- AlexNet conv1 on a 32x32 weight-stationary array, SCALE-Sim conventions ----------
# M = 55·55 needs a 227×227 input without padding (AlexNet's well-known
# erratum: with 224×224, ONNX's floor((224 - 11) / 4) + 1 gives 54, while
# SCALE-Sim's topology files say 224 and round up). Both are checked:
# 55·55 -> 36 folds × (2·32 + 32 + 3025 - 2) - 1 = 112283 cycles,
# 54·54 -> 36 folds × (2·32 + 32 + 2916 - 2) - 1 = 108359.
alexnet() {   # DIR SIDE: spec, target, weights and input of conv1 on a SIDE×SIDE image
	mkdir -p "$1"
	"$PY" - "$1" "$2" <<'EOF'
import sys, numpy as np
d, side = sys.argv[1], int(sys.argv[2])
open(d + "/spec.yaml", "w").write("""eulernpu: 1
name: alexnet_conv1
inputs:
  - {name: image, dtype: float32, shape: [1, 3, %d, %d]}
outputs: [c1]
weights:
  - {name: conv1.w, dtype: float32, shape: [96, 3, 11, 11]}
components:
  - name: features
    ops:
      - {name: conv1, op: conv2d, in: [image, conv1.w], out: c1, attrs: {strides: [4, 4]}}
""" % (side, side))
open(d + "/target.yaml", "w").write("array: [32, 32]\ndataflow: ws\nscalesim_compat: true\n")
rng = np.random.default_rng(1)
np.savez(d + "/weights.npz", **{"conv1.w": rng.standard_normal((96, 3, 11, 11)).astype("<f4")})
np.savez(d + "/input.npz", image=rng.standard_normal((1, 3, side, side)).astype("<f4"))
EOF
}
conv_cycles() {
	jexpr "$1" '[o for o in d["npu"]["ops"] if o["op"] == "conv2d"][0]["compute_cycles"]'
}
A=$TMP/alex
alexnet "$A" 227
out=$(enpu compile --spec "$A/spec.yaml" --weights "$A/weights.npz" --backend npu_sim --target "$A/target.yaml" --out "$A/b"); rc=$?
expect_eq "alexnet conv1: compile npu_sim --target" "$out $rc" "Compile  OK: 1 op lowered · plan written 0"
out=$(enpu run --artifact "$A/b" --input "$A/input.npz" --out "$A/b.npz" --report "$A/b.json"); rc=$?
expect_eq "alexnet conv1: run exits 0" "$rc" 0
expect_eq "alexnet conv1: M N K" \
	"$(jget "$A/b.json" npu.ops.0.gemm.M) $(jget "$A/b.json" npu.ops.0.gemm.N) $(jget "$A/b.json" npu.ops.0.gemm.K)" "3025 96 363"
expect_eq "alexnet conv1: 112283 compute cycles (SCALE-Sim v2)" "$(conv_cycles "$A/b.json")" 112283
expect_eq "alexnet conv1: the target says scalesim_compat" "$(jget "$A/b.json" npu.target.scalesim_compat)" true
expect_match "alexnet conv1: summary line" "$(sed -n 2p <<<"$out")" "^npu_sim    : 112283 cycles"
out=$(enpu report "$A/b.json")
expect_match "alexnet conv1: report row" "$(sed -n 3p <<<"$out")" '^conv1 +gemm +3025×96×363 +36 +112283 +'
expect_match "alexnet conv1: report header names scalesim_compat" "$(sed -n 1p <<<"$out")" 'array 32×32 · ws · .*scalesim_compat'
A4=$TMP/alex224
alexnet "$A4" 224
enpu compile --spec "$A4/spec.yaml" --weights "$A4/weights.npz" --backend npu_sim --target "$A4/target.yaml" --out "$A4/b" >/dev/null
enpu run --artifact "$A4/b" --input "$A4/input.npz" --out "$A4/b.npz" --report "$A4/b.json" >/dev/null
expect_eq "alexnet conv1 on 224x224 (54x54 outputs): 108359 cycles" "$(conv_cycles "$A4/b.json")" 108359

# ---- an older build's artifact: no summary in manifest.json, no counts in plan.json ----
# The daemon imports it deep, completes its manifest, and runs it with the same numbers.
"$PY" - "$TMP/tiny_cnn.b" "$TMP/old" <<'PYEOF'
import hashlib, json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(src, dst)
plan = json.load(open(os.path.join(dst, "plan.json")))
plan["npu"].pop("peak_dram_bytes")
for op in plan["npu"]["ops"]:
    op.pop("compute_cycles"); op.pop("stall_cycles")
open(os.path.join(dst, "plan.json"), "w").write(json.dumps(plan, indent=2))
man = json.load(open(os.path.join(dst, "manifest.json")))
man.pop("summary")
h = hashlib.sha256(b"eulernpu-artifact-v1\n")
for f in man["files"]:
    data = open(os.path.join(dst, f["path"]), "rb").read()
    f["sha256"], f["bytes"] = hashlib.sha256(data).hexdigest(), len(data)
    h.update(f["path"].encode() + b"\0" + f["sha256"].encode() + b"\n")
man["id"] = h.hexdigest()
open(os.path.join(dst, "manifest.json"), "w").write(json.dumps(man, indent=2))
PYEOF
oid=$(art_id "$TMP/old")
expect_eq "older artifact: no summary in its manifest" "$(jexpr "$TMP/old/manifest.json" '"summary" in d')" false
expect_eq "older artifact: a new id (plan.json differs)" "$([ "$oid" != "$(art_id "$TMP/tiny_cnn.b")" ] && echo yes)" yes
out=$(enpu run --artifact "$TMP/old" --input "$EX/tiny_cnn/input.npz" --out "$TMP/old.npz" --report "$TMP/old.json" 2>&1); rc=$?
expect_eq "older artifact: run --artifact imports and runs it" "$rc" 0
check "older artifact: the same result" cmp "$TMP/old.npz" "$TMP/tiny_cnn.b.npz"
expect_eq "older artifact: the same npu report" "$(jexpr "$TMP/old.json" 'json.dumps(d["npu"], sort_keys=True)')" \
	"$(jexpr "$TMP/tiny_cnn.b.json" 'json.dumps(d["npu"], sort_keys=True)')"
curl -sf --unix-socket "$TMP/a.sock" "$U/v1/artifacts/$oid/files/manifest.json" -o "$TMP/old.served.json"
expect_eq "older artifact: the daemon's manifest has the derived summary" \
	"$(jexpr "$TMP/old.served.json" 'json.dumps(d["summary"], sort_keys=True)')" \
	"$(jexpr "$TMP/tiny_cnn.b/manifest.json" 'json.dumps(d["summary"], sort_keys=True)')"
expect_eq "older artifact: under the same id" "$(jget "$TMP/old.served.json" id)" "$oid"

# ---- the capability matrix ----------------------------------------------------------------
out=$(enpu backends); rc=$?
expect_eq "backends exits 0" "$rc" 0
col=$(head -1 <<<"$out" | awk '{for (i = 1; i <= NF; i++) if ($i == "npu_sim") print i}')
expect_match "backends: an npu_sim column" "$col" '^[0-9]+$'
rows=$(sed 1d <<<"$out" | grep -c .)
yes=$(sed 1d <<<"$out" | awk -v c="${col:-0}" '$c == "yes"' | wc -l)
expect_eq "backends: npu_sim lowers every op ($rows)" "$yes" "$rows"
check "backends: at least 22 ops" test "$rows" -ge 22
dcurl a -o "$TMP/bk.json" "$U/v1/backends"
expect_match "GET /v1/backends: npu_sim available" "$(jget "$TMP/bk.json" available)" '"npu_sim"'

finish
