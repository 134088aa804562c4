#!/usr/bin/env bash
# page.sh: the status page (server/www/) in a real browser: Debian's
# chromium, headless, driven by puppeteer-core (pinned in
# tests/tools/browser/, installed by make npm-deps) from page.js, against a
# lab server with tokens in front of two board agents, all on loopback.
# page.js signs in with a user's token, sees both boards, a job running and
# one queued behind it (the daemons hold every job while $HOLD exists),
# cancels the queued one with its button, sees another user's job on an
# admin's page (in another tab) with a Cancel button, sees a board job on its board,
# kills that board and sees it go down and the job move to the other, lets
# the jobs end and reads the npu_sim and fpga_board charts against the
# reports, checks text alternatives, contrast, keyboard order and a phone's
# width, and that nothing logged an error. Screenshots go to
# build/test-out/page/<bin dir>/ (kept after the test).
. "$(dirname "$0")/lib.sh"

NODE_MODULES=$ROOT/build/npm-browser/node_modules
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
OUT=$ROOT/build/test-out/page/$(printf '%s' "${BIN#"$ROOT"/}" | tr / -)
if [ ! -f "$NODE_MODULES/puppeteer-core/package.json" ]; then
	notok "puppeteer-core is installed in build/npm-browser (make npm-deps)"; finish; exit 1
fi
if [ ! -x "$CHROMIUM" ]; then
	notok "chromium is installed (make deps)"; finish; exit 1
fi

printf 'tok-%s\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/tok"
ATOK=u-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
BTOK=u-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
OTOK=a-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s user alice\n%s user bob\n%s admin ops\n' "$ATOK" "$BTOK" "$OTOK" >"$TMP/tokens"
chmod 600 "$TMP/tok" "$TMP/tokens"

export EULERNPUD_HOLD=$HOLD
hold
start_board b1 || { finish; exit 1; }
start_board b2 || { finish; exit 1; }
rm -f "$TMP/lab.port"
start_daemon lab --role server --listen 127.0.0.1:0 --port-file "$TMP/lab.port" --tokens "$TMP/tokens" \
	--board "b1=http://127.0.0.1:$(bport b1)" --board "b2=http://127.0.0.1:$(bport b2)" \
	--board-token-file "$TMP/tok" --board-health-interval 1 --board-backoff-max 1 --workers 1 \
	--www "$ROOT/server/www" \
	|| { finish; exit 1; }
URL=http://127.0.0.1:$(cat "$TMP/lab.port")
as() { local tok=$1; shift; EULERNPU_SERVER=$URL EULERNPU_TOKEN=$tok timeout 120 "$BIN/eulernpu" "$@"; }
MLP=$EX/tiny_mlp CNN=$EX/tiny_cnn
as "$ATOK" compile --spec "$CNN/spec.yaml" --weights "$CNN/weights.npz" --backend npu_sim --out "$TMP/cnn_sim" >/dev/null &&
as "$ATOK" compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --backend npu_sim --out "$TMP/mlp_sim" >/dev/null &&
as "$BTOK" compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --backend npu_sim --out "$TMP/mlp_sim_bob" >/dev/null &&
as "$ATOK" compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --backend fpga_board --out "$TMP/mlp_fpga" >/dev/null
check "the models compile" test -d "$TMP/mlp_fpga"

rm -rf "$OUT"
PUPPETEER=$NODE_MODULES/puppeteer-core CHROMIUM=$CHROMIUM LAB_URL=$URL OUT_DIR=$OUT BIN=$BIN HOLD=$HOLD \
	ALICE_TOKEN=$ATOK BOB_TOKEN=$BTOK ADMIN_TOKEN=$OTOK B1_PID=${T_PIDS[b1]} B2_PID=${T_PIDS[b2]} \
	CNN_SIM=$TMP/cnn_sim CNN_INPUT=$CNN/input.npz MLP_SIM=$TMP/mlp_sim MLP_SIM_BOB=$TMP/mlp_sim_bob \
	MLP_FPGA=$TMP/mlp_fpga MLP_INPUT=$MLP/input.npz \
	timeout 300 node "$ROOT/tests/e2e/page.js" >"$TMP/page.out" 2>&1
rc=$?
grep -E '^(ok|not ok) - |^    \| |^# ' "$TMP/page.out"
read -r p f <<<"$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$TMP/page.out" | tail -1)"
T_PASS=$((T_PASS + ${p:-0})) T_FAIL=$((T_FAIL + ${f:-0}))
if [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; then
	notok "page.js ran to its end (exit $rc)"; tail -20 "$TMP/page.out"
fi
check "the screenshots are saved" test -s "$OUT/report-npu.png" -a -s "$OUT/phone.png" -a -s "$OUT/board-down.png"
check "the lab server answers after it all" curl -sf -o /dev/null --max-time 5 "$URL/v1/health"
finish
