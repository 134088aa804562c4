#!/usr/bin/env bash
# docs.sh: README.md's error table is the code catalogue (common/err.c), as
# `eulernpu explain` prints it. With --write, rewrite the table in place.
. "$(dirname "$0")/lib.sh"
table() {
	echo "| code | title | HTTP | exit |"
	echo "| --- | --- | --- | --- |"
	"$BIN/eulernpu" explain | while read -r code _; do
		"$BIN/eulernpu" explain "$code" | awk -v c="$code" '
			NR == 1 { sub(/^[^:]*: /, ""); title = $0 }
			/^HTTP status: / { http = $3 }
			/^exit code: / { ex = $3 }
			END { printf "| %s | %s | %s | %s |\n", c, title, http, ex }'
	done
}
want=$(table)
if [ "${1:-}" = --write ]; then
	awk -v t="$want" '/<!-- errors:begin -->/ { print; print t; skip = 1; next }
		/<!-- errors:end -->/ { skip = 0 } !skip' "$ROOT/README.md" > "$TMP/README.md" &&
		cp "$TMP/README.md" "$ROOT/README.md"
fi
got=$(sed -n '/<!-- errors:begin -->/,/<!-- errors:end -->/p' "$ROOT/README.md" | sed '1d;$d')
expect_eq "README error table matches the catalogue (tests/e2e/docs.sh --write)" "$got" "$want"
n=$("$BIN/eulernpu" explain | wc -l)
check "catalogue lists codes" test "$n" -ge 40
for verb in import validate compile run compare report backends boards jobs cache explain version; do
	check "README documents '$verb'" grep -q "eulernpu $verb" "$ROOT/README.md"
done
# what a user reads points inside the repository (or the installed copy)
outside=$( (cat "$ROOT/README.md" "$ROOT"/docs/*.md "$ROOT/client/eulernpu.1" "$ROOT/server/eulernpud.8" \
	"$ROOT/proto/openapi.yaml"; "$BIN/eulernpu" explain | while read -r code _; do
	"$BIN/eulernpu" explain "$code"; done) | grep -nE '\.\./shared|SPEC_FORMAT|ARCHITECTURE\.md|STYLE\.md')
expect_eq "README, docs, man pages, OpenAPI and error texts point only inside the repository" "$outside" ""
for f in $(grep -o '](docs/[^)#]*' "$ROOT/README.md" | sed 's/^](//' | sort -u); do
	check "README's link $f exists" test -f "$ROOT/$f"
done
# eulernpu-spec(5) is the spec format as it is now (make man-spec), and man renders it
if command -v lowdown >/dev/null; then
	expect_eq "docs/eulernpu-spec.5 is docs/spec-format.md as lowdown makes it (make man-spec)" \
		"$(lowdown -s -Tman -M title=eulernpu-spec -M section=5 "$ROOT/docs/spec-format.md" |
		   cmp - "$ROOT/docs/eulernpu-spec.5" 2>&1 && echo same)" "same"
else
	skip no-lowdown "lowdown is not installed (apt-get install lowdown): eulernpu-spec.5 NOT checked"
fi
out=$(MANWIDTH=100 man -l "$ROOT/docs/eulernpu-spec.5" 2>/dev/null); rc=$?
expect_eq "man -l renders eulernpu-spec(5)" "$rc" 0
expect_match "eulernpu-spec(5) holds the reference arithmetic" "$out" 'Reference arithmetic'

# docs/write-a-model.md stays true: its spec and weights script, run, print
# what it shows
W=$TMP/wm
mkdir -p "$W"
awk '/^```yaml$/ { f = 1; next } /^```$/ { f = 0 } f' "$ROOT/docs/write-a-model.md" >"$W/spec.yaml"
awk '/^```python$/ { f = 1; next } /^```$/ { f = 0 } f' "$ROOT/docs/write-a-model.md" >"$W/gen.py"
check "the walkthrough's weights script runs" sh -c "cd '$W' && '$PY' gen.py"
start_daemon wm || { finish; exit 1; }
doc_out() {   # the lines the walkthrough shows after "$ eulernpu $1"
	awk -v c="$ eulernpu $1" 'index($0, c) == 1 { if (seen) exit; f = seen = 1; next }
		/^\$ |^```/ { f = 0 } f' \
		"$ROOT/docs/write-a-model.md" | head -"${2:-1}"
}
wm() { (cd "$W" && "$BIN/eulernpu" --server "unix:$TMP/wm.sock" "$@" 2>&1); }
for cmd in "validate spec.yaml" \
	"compile --spec spec.yaml --weights weights.npz --out art" \
	"run --artifact art --input input.npz --out result.npz" \
	"compile --spec spec.yaml --weights weights.npz --backend npu_sim --out art.npu" \
	"run --artifact art.npu --input input.npz --out result.npu.npz --report report.json" \
	"compare --got result.npu.npz --expected result.npz --exact"; do
	n=$(doc_out "$cmd" 9 | wc -l)
	# shellcheck disable=SC2086
	expect_eq "write-a-model.md: eulernpu $cmd prints what the page shows" "$(wm $cmd | head -"$n")" \
		"$(doc_out "$cmd" "$n")"
done
expect_eq "write-a-model.md: the report's first lines" "$(wm report report.json | head -4)" \
	"$(doc_out "report report.json" 4)"
sed -i 's/shape: \[4, 2\]}/shape: [2, 4]}/' "$W/spec.yaml"
expect_eq "write-a-model.md: the shape error, as shown" "$(wm validate spec.yaml)" \
	"$(awk '/^error\[E0206\]/ { f = 1 } /^```/ { f = 0 } f' "$ROOT/docs/write-a-model.md")"
finish
