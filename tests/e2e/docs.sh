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
for verb in validate compile run compare report backends boards jobs cache explain version; do
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
finish
