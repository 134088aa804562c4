#!/usr/bin/env bash
# client.sh: the thin client (eulernpu) against real daemons: the seed's four
# lines byte for byte, exit statuses, errors as the user sees them, uploads
# of only the missing blobs, artifact import, and the private daemon.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp

# Fixtures made with NumPy: a transposed fc1.w, a golden under another key,
# a golden off by 0.5 at (0, 2), an input of the wrong shape.
"$PY" - "$M" "$TMP" <<'EOF'
import sys, numpy as np
m, tmp = sys.argv[1], sys.argv[2]
w = dict(np.load(m + "/weights.npz"))
w["fc1.w"] = np.ascontiguousarray(w["fc1.w"].T)
np.savez(tmp + "/weights_t.npz", **w)
np.savez(tmp + "/input_bad.npz", x=np.zeros((1, 7), "<f4"))
EOF

# Golden: the example's when the lead has generated it, else our own first
# result (then only the formatting, not the numbers, is under test).
GOLD=$M/golden.npz

export EULERNPU_SERVER=unix:$TMP/a.sock
start_daemon a || { finish; exit 1; }

# The four commands, byte for byte.
out=$("$CLI" validate "$M/spec.yaml"); rc=$?
expect_eq "validate prints the line" "$out" "Validation OK: 5 operators · 2 components · backend=cpu_ref"
expect_eq "validate exits 0" "$rc" 0
out=$("$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp"); rc=$?
expect_eq "compile prints the line" "$out" "Compile  OK: 5 ops lowered · plan written"
expect_eq "compile exits 0" "$rc" 0
check "compile wrote manifest.json and plan.json" test -s "$TMP/mlp/manifest.json" -a -s "$TMP/mlp/plan.json"
out=$("$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/mlp.out.npz"); rc=$?
expect_eq "run prints the line" "$out" "Run      OK: 1 output tensor (1, 4)"
expect_eq "run exits 0" "$rc" 0
[ -f "$GOLD" ] || { GOLD=$TMP/golden.npz; cp "$TMP/mlp.out.npz" "$GOLD"; echo "# no $M/golden.npz: using our own result"; }
out=$("$CLI" compare --got "$TMP/mlp.out.npz" --expected "$GOLD"); rc=$?
expect_eq "compare prints the line" "$out" "Compare  OK: 1 tensor · max abs diff 0.0 < tol 1e-05"
expect_eq "compare exits 0" "$rc" 0
out=$("$CLI" compare --got "$TMP/mlp.out.npz" --expected "$GOLD" --exact)
expect_eq "compare --exact" "$out" "Compare  OK: 1 tensor · bytes equal"
out=$("$CLI" compare --got "$TMP/mlp.out.npz" --expected "$GOLD" --tol 1e-3 --rtol 0.0001)
expect_eq "compare --tol --rtol in Python repr" "$out" "Compare  OK: 1 tensor · max abs diff 0.0 < tol 0.001 + rtol 0.0001"
# Global option after the verb, and --server overriding the environment.
out=$(EULERNPU_SERVER=unix:$TMP/none.sock "$CLI" validate "$M/spec.yaml" --server "unix:$TMP/a.sock")
expect_eq "--server after the verb overrides EULERNPU_SERVER" "$out" \
	"Validation OK: 5 operators · 2 components · backend=cpu_ref"

# A run by artifact id.
id=$(jget "$TMP/mlp/manifest.json" id)
out=$("$CLI" run --artifact "$id" --input "$M/input.npz" --out "$TMP/byid.npz")
expect_eq "run --artifact ID" "$out" "Run      OK: 1 output tensor (1, 4)"
check "run by id gives the same bytes" cmp "$TMP/mlp.out.npz" "$TMP/byid.npz"

# Compare failure: exit 1, naming the tensor and the index.
"$PY" -c 'import sys, numpy as np
g = dict(np.load(sys.argv[1])); k = list(g)[0]; g[k] = g[k].copy(); g[k][0, 2] += 0.5
np.savez(sys.argv[2], **g)' "$GOLD" "$TMP/golden_off.npz"
check_status "compare with a difference exits 1" 1 "$CLI" compare --got "$TMP/mlp.out.npz" --expected "$TMP/golden_off.npz"
err=$(cat "$TMP/last.err")
expect_match "difference: E0600 first line" "$(sed -n 1p <<<"$err")" '^error\[E0600\]: '
expect_match "difference names the tensor and index" "$err" "logits.*\(0, 2\)|\(0, 2\).*logits"
expect_eq "difference: nothing on stdout" "$(cat "$TMP/last.out")" ""

# --exact reaches the server: a difference far inside the tolerance passes
# without it and fails with it (bits, not tolerance).
"$PY" -c 'import sys, numpy as np
g = dict(np.load(sys.argv[1])); k = list(g)[0]; g[k] = g[k].copy()
g[k][0, 1] = np.nextafter(g[k][0, 1], np.float32(np.inf), dtype=np.float32)
np.savez(sys.argv[2], **g)' "$GOLD" "$TMP/golden_ulp.npz"
check "one ulp off passes the tolerance" "$CLI" compare --got "$TMP/mlp.out.npz" --expected "$TMP/golden_ulp.npz"
check_status "one ulp off fails --exact: exit 1" 1 "$CLI" compare --got "$TMP/mlp.out.npz" --expected "$TMP/golden_ulp.npz" --exact
expect_match "one ulp off, --exact: says the bits differ" "$(cat "$TMP/last.err")" 'exact comparison: the bits differ'

# Golden under another key: not comparable, exit 2.
"$PY" -c 'import sys, numpy as np
g = dict(np.load(sys.argv[1])); np.savez(sys.argv[2], other=list(g.values())[0])' "$GOLD" "$TMP/golden_key.npz"
check_status "golden key not found exits 2" 2 "$CLI" compare --got "$TMP/mlp.out.npz" --expected "$TMP/golden_key.npz"
expect_eq "golden key: first line" "$(sed -n 1p "$TMP/last.err")" "error[E0601]: tensor keys differ"
expect_match "golden key: names the key" "$(sed -n 2p "$TMP/last.err")" "logits"
expect_match "golden key: see line" "$(sed -n 3p "$TMP/last.err")" '^  fix: .* · See: eulernpu explain E0601$'

# Weights shape mismatch through the client: all three lines.
check_status "transposed weights exit 2" 2 "$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/weights_t.npz" --out "$TMP/bad"
expect_eq "weights mismatch: line 1" "$(sed -n 1p "$TMP/last.err")" "error[E0301]: weights tensor shape mismatch"
expect_match "weights mismatch: line 2" "$(sed -n 2p "$TMP/last.err")" "^  .*'fc1\.w'.*\[8, 16\].*\[16, 8\]"
expect_match "weights mismatch: line 3" "$(sed -n 3p "$TMP/last.err")" '^  fix: .* · See: eulernpu explain E0301$'
expect_eq "weights mismatch: three lines" "$(wc -l <"$TMP/last.err")" 3

# A job that fails on its input: the job's error, the catalogue's exit.
check_status "input of the wrong shape exits 2" 2 "$CLI" run --artifact "$TMP/mlp" --input "$TMP/input_bad.npz" --out "$TMP/x.npz"
expect_eq "input mismatch: first line" "$(sed -n 1p "$TMP/last.err")" "error[E0501]: input tensor shape mismatch"
check "failed run wrote no result" test ! -e "$TMP/x.npz"

# Local and usage errors.
check_status "missing spec file exits 2" 2 "$CLI" validate "$TMP/nope.yaml"
expect_eq "missing file: E0003" "$(sed -n 1p "$TMP/last.err")" "error[E0003]: cannot read or write a file"
expect_match "missing file: names it" "$(sed -n 2p "$TMP/last.err")" "nope\.yaml"
check_status "compile without --weights exits 2" 2 "$CLI" compile --spec "$M/spec.yaml" --out "$TMP/o"
expect_match "usage error hints at --help" "$(cat "$TMP/last.err")" "eulernpu compile --help"
check_status "unknown verb exits 2" 2 "$CLI" frobnicate
check_status "unknown option exits 2" 2 "$CLI" run --artifakt x
check_status "bad --tol exits 2" 2 "$CLI" compare --got a --expected b --tol abc
check_status "no verb exits 2" 2 "$CLI"

# --help: stdout, exit 0, for the tool and every verb.
for v in "" validate compile run compare backends explain version; do
	check_status "--help ${v:-(tool)} exits 0" 0 "$CLI" $v --help
	expect_match "--help ${v:-(tool)} on stdout" "$(head -1 "$TMP/last.out")" "^usage: eulernpu ${v}"
	expect_eq "--help ${v:-(tool)} quiet on stderr" "$(cat "$TMP/last.err")" ""
done

# explain, backends, version.
out=$("$CLI" explain E0301); rc=$?
expect_eq "explain exits 0" "$rc" 0
expect_eq "explain: title line" "$(head -1 <<<"$out")" "E0301: weights tensor shape mismatch"
expect_match "explain: HTTP status and exit code" "$out" "^HTTP status: 422$"
expect_match "explain: exit code" "$out" "^exit code: 2$"
check_status "explain of an unknown code exits 2" 2 "$CLI" explain E9999
out=$("$CLI" explain)
expect_match "explain lists all codes" "$out" "^E0808  server unreachable$"
out=$("$CLI" backends); rc=$?
expect_eq "backends exits 0" "$rc" 0
expect_match "backends header" "$(head -1 <<<"$out")" "^op +cpu_ref +npu_sim +zynq_ps +fpga_board$"
expect_match "backends: matmul row" "$out" "^matmul +yes "
out=$("$CLI" version)
expect_match "version: client and server" "$out" "^eulernpud [0-9]"

# Unreachable server: exit 3.
check_status "unreachable server exits 3" 3 env EULERNPU_SERVER="unix:$TMP/none.sock" "$CLI" validate "$M/spec.yaml"
expect_eq "unreachable: first line" "$(sed -n 1p "$TMP/last.err")" "error[E0808]: server unreachable"
expect_match "unreachable: names the URL" "$(sed -n 2p "$TMP/last.err")" "unix:$TMP/none.sock"

# Only missing blobs are uploaded: a second compile sends nothing.
puts() { grep -c 'method=PUT route=/v1/blobs/\*' "$TMP/a.log"; }
before=$(puts)
"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp2" >/dev/null
expect_eq "second compile uploads no blob" "$(puts)" "$before"
check "second compile gives the same files" diff -r "$TMP/mlp" "$TMP/mlp2"
check "the log records blob uploads at all" test "$before" -gt 0

# Artifact import: run a compiled directory on a fresh daemon.
start_daemon b
out=$(EULERNPU_SERVER=unix:$TMP/b.sock "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/b.out.npz")
expect_eq "run --artifact DIR on a fresh daemon" "$out" "Run      OK: 1 output tensor (1, 4)"
check "imported artifact gives the same bytes" cmp "$TMP/mlp.out.npz" "$TMP/b.out.npz"
check "the fresh daemon received the artifact" grep -q 'method=PUT route=/v1/artifacts/\*' "$TMP/b.log"
stop_daemon b

# The private daemon (its own cache: one daemon per cache directory):
# started on demand (inside $(...): it must not hold
# the pipe), found again by the next command, killed by us.
RT=$TMP/rt
out=$(env -u EULERNPU_SERVER XDG_RUNTIME_DIR="$RT" XDG_CACHE_HOME="$TMP/xc" EULERNPU_IDLE_EXIT=30 \
	timeout 20 "$CLI" validate "$M/spec.yaml" 2>&1); rc=$?
expect_eq "auto-start inside \$(...) returns promptly, exit 0" "$rc" 0
expect_eq "auto-start: validate works" "$out" "Validation OK: 5 operators · 2 components · backend=cpu_ref"
PIDF=$RT/eulernpu/eulernpud.pid
check "auto-start: pid file exists" test -s "$PIDF"
pid1=$(cat "$PIDF" 2>/dev/null)
[ -n "$pid1" ] && EXTRA_PIDS+=("$pid1")
check "auto-start: the daemon is alive" kill -0 "${pid1:-0}"
expect_eq "auto-start: directory is private" "$(stat -c %a "$RT/eulernpu")" 700
out=$(env -u EULERNPU_SERVER XDG_RUNTIME_DIR="$RT" XDG_CACHE_HOME="$TMP/xc" timeout 20 "$CLI" compile \
	--spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp3" 2>&1)
expect_eq "auto-start: a second command works" "$out" "Compile  OK: 5 ops lowered · plan written"
expect_eq "auto-start: the second command reuses the daemon" "$(cat "$PIDF" 2>/dev/null)" "$pid1"
if [ -n "$pid1" ]; then
	kill -TERM "$pid1" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid1" 2>/dev/null || break; sleep 0.05; done
fi
check "auto-started daemon is gone after kill" sh -c "! kill -0 ${pid1:-0} 2>/dev/null"

finish
