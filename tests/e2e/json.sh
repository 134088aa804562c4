#!/usr/bin/env bash
# json.sh: every verb's --json against a real daemon: exactly one JSON
# document on stdout with the documented fields and values, the same exit
# status as without --json, and errors as three lines on stderr (stdout
# empty), as `run --json` and `cache --json` do.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp

# jq-less checks: JQ EXPR < doc prints the Python value of EXPR over the
# parsed document d; lib.sh's jexpr, which fails the next check unless
# stdin is exactly one JSON document.
JQ() { jexpr - "$1"; }
# is_one_doc FILE: stdout held one JSON document
is_one_doc() { "$PY" -c 'import json,sys; json.load(sys.stdin)' <"$1" 2>/dev/null && echo yes || echo no; }

export EULERNPU_SERVER=unix:$TMP/a.sock
start_daemon a || { finish; exit 1; }

# validate
check "validate --json exits 0" "$CLI" validate "$M/spec.yaml" --json
expect_eq "validate --json: one JSON document" "$(is_one_doc "$TMP/last.out")" yes
expect_eq "validate --json: ok, name, operators, components, backend" \
	"$(JQ '[d["ok"], d["name"], d["operators"], d["components"], d["backend"]]' <"$TMP/last.out")" \
	'[true, "tiny_mlp", 5, 2, "cpu_ref"]'
expect_eq "validate --json: nothing on stderr" "$(cat "$TMP/last.err")" ""
check "validate --json --backend fpga_board" "$CLI" validate "$M/spec.yaml" --backend fpga_board --json
expect_eq "validate --json for fpga_board adds pl_ops, ps_ops, pl_segments" \
	"$(JQ '[d["backend"], type(d["pl_ops"]).__name__, type(d["ps_ops"]).__name__, type(d["pl_segments"]).__name__, d["pl_ops"] + d["ps_ops"]]' <"$TMP/last.out")" \
	'["fpga_board", "int", "int", "int", 5]'
expect_eq "validate without --json is unchanged" "$("$CLI" validate "$M/spec.yaml")" \
	"Validation OK: 5 operators · 2 components · backend=cpu_ref"

# compile
check "compile --json exits 0" "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" \
	--out "$TMP/art" --json
expect_eq "compile --json: one JSON document" "$(is_one_doc "$TMP/last.out")" yes
cp "$TMP/last.out" "$TMP/compile1.json"
expect_eq "compile --json: backend, operators, components, out, cached" \
	"$(JQ '[d["backend"], d["operators"], d["components"], d["out"], d["cached"]]' <"$TMP/compile1.json")" \
	"[\"cpu_ref\", 5, 2, \"$TMP/art\", false]"
expect_match "compile --json: artifact is a digest" "$(JQ 'd["artifact"]' <"$TMP/compile1.json")" '^[0-9a-f]{64}$'
expect_eq "compile --json: files lists what was written into out" \
	"$(JQ 'sorted(f["path"] for f in d["files"])' <"$TMP/compile1.json")" \
	"$(cd "$TMP/art" && find . -type f | sed 's|^\./||' | sort | "$PY" -c 'import json,sys; print(json.dumps([l.strip() for l in sys.stdin]))')"
check "compile --json again" "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" \
	--out "$TMP/art2" --json
expect_eq "compile --json again: cached, same artifact" \
	"$(JQ '[d["cached"], d["artifact"]]' <"$TMP/last.out")" \
	"[true, \"$(JQ 'd["artifact"]' <"$TMP/compile1.json")\"]"
check "compile --json --backend fpga_board" "$CLI" compile --spec "$M/spec.yaml" \
	--weights "$M/weights.npz" --backend fpga_board --out "$TMP/artf" --json
expect_eq "compile --json for fpga_board has the partition" \
	"$(JQ '[d["backend"], d["pl_ops"] + d["ps_ops"], type(d["pl_segments"]).__name__]' <"$TMP/last.out")" \
	'["fpga_board", 5, "int"]'
out=$("$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/art3")
expect_eq "compile without --json is unchanged" "$out" "Compile  OK: 5 ops lowered · plan written"

# run (already had --json) gives the result to compare
check "run" "$CLI" run --artifact "$TMP/art" --input "$M/input.npz" --out "$TMP/r.npz"
GOLD=$M/golden.npz
[ -f "$GOLD" ] || { GOLD=$TMP/golden.npz; cp "$TMP/r.npz" "$GOLD"; }

# compare
check "compare --json exits 0" "$CLI" compare --got "$TMP/r.npz" --expected "$GOLD" --json
expect_eq "compare --json: one JSON document" "$(is_one_doc "$TMP/last.out")" yes
expect_eq "compare --json: ok, tensors, max_abs_diff, tol, rtol, exact" \
	"$(JQ '[d["ok"], d["tensors"], d["max_abs_diff"], d["tol"], d["rtol"], d["exact"]]' <"$TMP/last.out")" \
	'[true, 1, 0.0, 1e-05, 0.0, false]'
"$PY" -c 'import sys, numpy as np
g = dict(np.load(sys.argv[1])); k = sorted(g)[0]; g[k] = g[k].copy(); g[k].flat[2] += 0.5
np.savez(sys.argv[2], **g)' "$GOLD" "$TMP/golden_off.npz"
check_status "compare --json with a difference exits 1" 1 \
	"$CLI" compare --got "$TMP/r.npz" --expected "$TMP/golden_off.npz" --json
expect_eq "compare --json difference: one JSON document" "$(is_one_doc "$TMP/last.out")" yes
expect_eq "compare --json difference: ok false" "$(JQ 'd["ok"]' <"$TMP/last.out")" false
expect_eq "compare --json difference: max_abs_diff 0.5 (in float32), worst named" \
	"$(JQ '[abs(d["max_abs_diff"] - 0.5) < 1e-6, "worst" in d]' <"$TMP/last.out")" '[true, true]'
expect_match "compare --json difference: the error still on stderr" \
	"$(sed -n 1p "$TMP/last.err")" '^error\[E0600\]: '
check_status "compare without --json with a difference still exits 1" 1 \
	"$CLI" compare --got "$TMP/r.npz" --expected "$TMP/golden_off.npz"
expect_eq "compare without --json: nothing on stdout" "$(cat "$TMP/last.out")" ""

# backends
check "backends --json exits 0" "$CLI" backends --json
expect_eq "backends --json: one JSON document" "$(is_one_doc "$TMP/last.out")" yes
expect_eq "backends --json: the matrix (backends, ops with matmul on cpu_ref)" \
	"$(JQ '["cpu_ref" in d["backends"], [o["backends"]["cpu_ref"] for o in d["ops"] if o["op"] == "matmul"]]' <"$TMP/last.out")" \
	'[true, [true]]'
expect_match "backends without --json is the table" "$("$CLI" backends | head -1)" '^op +cpu_ref'

# explain (offline)
check "explain E0301 --json exits 0" "$CLI" explain E0301 --json
expect_eq "explain --json: one JSON document" "$(is_one_doc "$TMP/last.out")" yes
expect_eq "explain E0301 --json: code, http_status, exit_code and every field" \
	"$(JQ '[d["code"], d["http_status"], d["exit_code"], sorted(d)]' <"$TMP/last.out")" \
	'["E0301", 422, 2, ["code", "exit_code", "explain", "fix", "http_status", "title"]]'
check "explain --json (all codes)" "$CLI" explain --json
expect_eq "explain --json lists every code of 'explain'" \
	"$(JQ '" ".join(c["code"] for c in d)' <"$TMP/last.out")" \
	"$("$CLI" explain | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
check_status "explain --json of an unknown code exits 2" 2 "$CLI" explain E9999 --json
expect_eq "explain --json unknown code: nothing on stdout" "$(cat "$TMP/last.out")" ""
expect_match "explain --json unknown code: three lines on stderr" \
	"$(sed -n 1p "$TMP/last.err")$(sed -n 3p "$TMP/last.err")" '^error\[E0100\]: .*See: eulernpu explain'

# version
check "version --json exits 0" "$CLI" version --json
expect_eq "version --json: client, server, url" \
	"$(JQ '[d["client"], d["server"], d["url"]]' <"$TMP/last.out")" \
	"[\"$("$CLI" version | sed -n '1s/^eulernpu //p')\", \"$(dcurl a http://l/v1/health | JQ 'd["version"]')\", \"unix:$TMP/a.sock\"]"
check_status "version --json with no server answering exits 3" 3 \
	env EULERNPU_SERVER="unix:$TMP/none.sock" "$CLI" version --json
expect_eq "version --json with no server: server null" "$(JQ 'd["server"]' <"$TMP/last.out")" null

# report
check "run --report" "$CLI" run --artifact "$TMP/art" --input "$M/input.npz" --out "$TMP/r2.npz" \
	--report "$TMP/rep.json"
check "report FILE --json exits 0" "$CLI" report "$TMP/rep.json" --json
expect_eq "report --json is the report.json document itself" \
	"$(jexpr "$TMP/last.out" "$TMP/rep.json" 'ds[0] == ds[1]')" true
echo '[1, 2]' >"$TMP/notrep.json"
check_status "report --json of a non-report exits 2" 2 "$CLI" report "$TMP/notrep.json" --json
expect_eq "report --json non-report: nothing on stdout" "$(cat "$TMP/last.out")" ""

# errors under --json: nothing on stdout, three lines on stderr, same status
check_status "validate --json of a missing spec exits 2" 2 "$CLI" validate "$TMP/nope.yaml" --json
expect_eq "missing spec --json: nothing on stdout" "$(cat "$TMP/last.out")" ""
expect_eq "missing spec --json: three lines on stderr" "$(wc -l <"$TMP/last.err")" 3
expect_match "missing spec --json: the error line names the code" \
	"$(sed -n 1p "$TMP/last.err")" '^error\[E0003\]: '
check_status "compile --json of a missing weights file exits 2" 2 "$CLI" compile --spec "$M/spec.yaml" \
	--weights "$TMP/nope.npz" --out "$TMP/x" --json
expect_eq "compile --json error: nothing on stdout" "$(cat "$TMP/last.out")" ""
check_status "compare --json of a missing file exits 2" 2 "$CLI" compare --got "$TMP/nope.npz" \
	--expected "$GOLD" --json
expect_eq "compare --json error: nothing on stdout" "$(cat "$TMP/last.out")" ""
check_status "backends --json with no server exits 3" 3 \
	env EULERNPU_SERVER="unix:$TMP/none.sock" "$CLI" backends --json
expect_eq "backends --json unreachable: nothing on stdout" "$(cat "$TMP/last.out")" ""

# every verb's --help names --json
missing=
for v in $("$CLI" --help | sed -n '/^verbs:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p'); do
	"$CLI" "$v" --help | grep -q -- '--json' || missing="$missing $v"
done
expect_eq "every verb's --help names --json" "${missing:-none}" none

finish
