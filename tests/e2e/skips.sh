#!/usr/bin/env bash
# skips.sh: the harness's own teeth. A skip is never a pass: outside CI it
# is reported and counted apart; under CI=true a skip whose id is not in
# the allow-list fails the script, a listed one does not. A JSON read
# (jget, jexpr) of a missing file, empty or invalid JSON or a missing key
# fails the check that used it, even inside $(...), and at least finish.
# Each case runs a throwaway script that sources lib.sh.
. "$(dirname "$0")/lib.sh"

# probe NAME CI SCRIPT-BODY: run a throwaway script (lib.sh sourced) with
# CI=$2 and the allow-list $TMP/allow; its output in $TMP/NAME.out, its
# exit status printed.
printf '# test allow-list\nlisted-id  allowed for this self-test\n' >"$TMP/allow"
probe() {
	local name=$1 ci=$2
	{ echo ". '$ROOT/tests/e2e/lib.sh'"; printf '%s\n' "$3"; } >"$TMP/$name.sh"
	CI=$ci SKIPS_ALLOW=$TMP/allow bash "$TMP/$name.sh" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $?
}
# closing NAME: the probe's "N passed, M failed" line and the "K skipped" after it
closing() { grep -E '^[0-9]+ (passed, [0-9]+ failed|skipped)$' "$TMP/$1.out" | tr '\n' ' ' | sed 's/ $//'; }

# ---- skips ------------------------------------------------------------------
expect_eq "CI=true, an unlisted skip: the script fails" \
	"$(probe ci_unlisted true 'ok one; skip not-listed "a tool is missing"; finish')" 1
expect_eq "... counted as a failure, not as a pass nor a skip" "$(closing ci_unlisted)" "1 passed, 1 failed"
expect_match "... it says which id and where the list is" "$(cat "$TMP/ci_unlisted.out")" \
	"^not ok - skip 'not-listed' under CI=true, and 'not-listed' is not in "
expect_match "... and prints the skip line" "$(cat "$TMP/ci_unlisted.out")" '^skip - not-listed: a tool is missing$'

expect_eq "CI=true, a listed skip: the script passes" \
	"$(probe ci_listed true 'ok one; skip listed-id "allowed"; finish')" 0
expect_eq "... counted as a skip, not as a pass" "$(closing ci_listed)" "1 passed, 0 failed 1 skipped"

expect_eq "CI unset, an unlisted skip: reported, the script passes" \
	"$(probe dev_unlisted '' 'ok one; skip not-listed "a tool is missing"; finish')" 0
expect_eq "... counted as a skip, not as a pass" "$(closing dev_unlisted)" "1 passed, 0 failed 1 skipped"
expect_match "... reported on its own line" "$(cat "$TMP/dev_unlisted.out")" '^skip - not-listed: a tool is missing$'

expect_eq "a script that only skips does not finish 0 passed and green under CI" \
	"$(probe ci_only_skip true 'skip nothing-here "nothing ran"; finish')" 1

# the real allow-list parses: ids only, no id twice
check "tests/skips.allow: every line is 'ID  reason', no id twice" bash -c '
	awk '\''!/^#/ && NF { if (NF < 2 || $1 !~ /^[a-z0-9][a-z0-9:._-]*$/ || seen[$1]++) bad = 1 } END { exit bad }'\'' "$1"' \
	_ "$ROOT/tests/skips.allow"

# ---- JSON reads -------------------------------------------------------------
probe j_empty '' ': >"$TMP/e.json"; jget "$TMP/e.json" state; echo "rc=$?"' >/dev/null
expect_eq "jget on an empty file: exit 1, no value" "$(cat "$TMP/j_empty.out")" "rc=1"
expect_match "... says why on stderr" "$(cat "$TMP/j_empty.err")" 'e\.json state: empty input, no JSON'

for c in "empty:: >\"\$TMP/x.json\"" "invalid::echo '{\"state\": ' >\"\$TMP/x.json\"" \
	"not-json::echo 'Internal Server Error' >\"\$TMP/x.json\"" "missing-file::rm -f \"\$TMP/x.json\"" \
	"missing-key::echo '{\"status\": \"done\"}' >\"\$TMP/x.json\""; do
	name=${c%%::*} make=${c#*::}
	# inside $(...), compared with what a broken read prints (nothing): a
	# check that would pass on its own must fail, and so must the script
	expect_eq "jget, $name: the check that used it fails, and the script" \
		"$(probe "j_$name" '' "$make
expect_eq 'state is empty' \"\$(jget \"\$TMP/x.json\" state)\" ''
finish")" 1
	expect_eq "jget, $name: 0 passed, 1 failed" "$(closing "j_$name")" "0 passed, 1 failed"
	expect_match "jget, $name: the failure names the read" "$(cat "$TMP/j_$name.out")" \
		'^not ok - JSON read failed: jget .*x\.json state: '
	expect_eq "jget - (stdin), $name: fails as well" \
		"$(probe "js_$name" '' "$make
v=\$(cat \"\$TMP/x.json\" 2>/dev/null | jget - state)
finish")" 1
	expect_eq "jexpr, $name: fails as well" \
		"$(probe "je_$name" '' "$make
expect_eq 'a constant' \"\$(jexpr \"\$TMP/x.json\" 'd[\"state\"] and 1 or 1')\" ''
finish")" 1
done

expect_eq "jget: a null value is read (null), not a failure" \
	"$(probe j_null '' "echo '{\"started\": null, \"a\": [1, \"x\"]}' >\"\$TMP/x.json\"
expect_eq null \"\$(jget \"\$TMP/x.json\" started)\" null
expect_eq star \"\$(jget \"\$TMP/x.json\" 'a.*')\" '1 x'
expect_eq len \"\$(jget \"\$TMP/x.json\" 'a.#')\" 2
finish")" 0
expect_eq "... 3 passed" "$(closing j_null)" "3 passed, 0 failed"
expect_eq "jget: an index past the end fails" \
	"$(probe j_index '' "echo '{\"jobs\": [{\"id\": 1}]}' >\"\$TMP/x.json\"
x=\$(jget \"\$TMP/x.json\" jobs.1.id)
finish")" 1

finish
