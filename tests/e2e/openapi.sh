#!/usr/bin/env bash
# openapi.sh: proto/openapi.yaml validates: `redocly lint` (@redocly/cli,
# pinned in tests/tools/redocly/, installed into build/npm by make npm-deps)
# with the rules of proto/redocly.yaml passes, and the linter does catch
# the kind of mistakes the file once had (no telemetry, no update check). No npm or no registry is a
# failure, never a skip: make test must not pass on a file nobody checked.
# The statuses and roles of each operation are test_srv_openapi's and
# test_srv_access's (they read the server's code).
. "$(dirname "$0")/lib.sh"
REDOCLY=$ROOT/build/npm/node_modules/.bin/redocly
PKG=$ROOT/tests/tools/redocly

if [ ! -x "$REDOCLY" ]; then
	make -C "$ROOT" --no-print-directory npm-deps >"$TMP/npm.log" 2>&1 ||
		sed 's/^/    | /' "$TMP/npm.log" | tail -20
fi
check "redocly is installed in build/npm (make npm-deps: nodejs, npm and the npm registry)" test -x "$REDOCLY"
if [ ! -x "$REDOCLY" ]; then
	finish
	exit 1
fi
want=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["dependencies"]["@redocly/cli"])' \
	"$PKG/package.json")
expect_eq "the installed redocly is the pinned one" "$("$REDOCLY" --version 2>/dev/null)" "$want"

# CI is Debian 12: nodejs 18.20, npm 9.2. Every locked package must accept
# them (an update of the lock that needs a newer node fails here, not on CI).
engines() {
	node -e '
	const semver = require(process.argv[1] + "/node_modules/semver");
	const lock = require(process.argv[2]);
	for (const [k, p] of Object.entries(lock.packages)) {
		const e = p.engines;
		if (!e || Array.isArray(e)) continue;
		if (e.node && !semver.satisfies("18.20.4", e.node)) console.log(k, p.version, "node", e.node);
		if (e.npm && !semver.satisfies("9.2.0", e.npm)) console.log(k, p.version, "npm", e.npm);
	}' "$ROOT/build/npm" "$PKG/package-lock.json"
}
expect_eq "every locked package accepts Debian 12's nodejs 18.20 and npm 9.2" "$(engines 2>&1)" ""

lint() {   # lint FILE: redocly's exit status, its report in $TMP/lint.out
	(cd "$ROOT" && NO_COLOR=1 REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true "$REDOCLY" lint "$1" --config proto/redocly.yaml --format=stylish) \
		>"$TMP/lint.out" 2>&1
}
if lint "$ROOT/proto/openapi.yaml"; then
	ok "proto/openapi.yaml passes redocly lint (proto/redocly.yaml)"
else
	notok "proto/openapi.yaml passes redocly lint (proto/redocly.yaml)"
	grep -E 'error|warning' "$TMP/lint.out" | head -40 | sed 's/^/    | /'
fi

# The linter is not a rubber stamp: copies with the old mistakes fail it.
mutant() {   # mutant DESC PYTHON-EXPR-ON-s: the copy must fail, naming the rule
	local desc=$1 rule=$2 expr=$3
	"$PY" -c "import sys; s = open(sys.argv[1]).read(); t = $expr; assert t != s; open(sys.argv[2], 'w').write(t)" \
		"$ROOT/proto/openapi.yaml" "$TMP/bad.yaml" || { notok "$desc: cannot make the copy"; return; }
	if lint "$TMP/bad.yaml"; then
		notok "$desc: lint passes"
	else
		expect_match "$desc: lint fails with $rule" "$(cat "$TMP/lint.out")" "$rule"
	fi
}
mutant "an unquoted comma in a flow mapping" struct \
	"s.replace('description: \"seconds, as above\"', 'description: seconds, as above')"
mutant "a security requirement naming an undeclared scheme" security-defined \
	"s.replace('security: [{bearer: [user]}]', 'security: [{token: [user]}]', 1)"
mutant "a \$ref to a schema that does not exist" no-unresolved-refs \
	"s.replace('\$ref: \"#/components/schemas/Job\"', '\$ref: \"#/components/schemas/Jobs\"', 1)"
mutant "an operation with no 4xx answer (a warning: recommended-strict fails it)" operation-4xx-response \
	"s.replace('{text/plain: {schema: {type: string}}}}\n        \"401\": {\$ref: \"#/components/responses/Error\"}\n', '{text/plain: {schema: {type: string}}}}\n', 1)"
mutant "a path parameter the path does not have" path-parameters-defined \
	"s.replace('  /v1/jobs/{id}/result:\n    parameters:\n      - {name: id,', '  /v1/jobs/{id}/result:\n    parameters:\n      - {name: idx,', 1)"
finish
