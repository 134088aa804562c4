#!/usr/bin/env bash
# events.sh: GET /v1/events, the one stream of a status page, on a lab
# server with tokens: the status event at once; each job's submission and
# states as they happen, numbered; a user's stream carries only their own
# jobs, an admin's every job; Last-Event-ID resumes after a number and a
# number this daemon never made says reset; a bad ?since is 400. A job held
# running by the daemon's test gate (lib.sh's hold) makes the order plain;
# no step assumes how long anything takes (each read waits for its event,
# bounded).
. "$(dirname "$0")/lib.sh"

UTOK=u-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
BTOK=b-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
ATOK=a-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s user alice\n%s user bob\n%s admin ops\n' "$UTOK" "$BTOK" "$ATOK" >"$TMP/tokens"
chmod 600 "$TMP/tokens"
export EULERNPUD_HOLD=$HOLD
hold
start_daemon e --listen 127.0.0.1:0 --port-file "$TMP/e.port" --tokens "$TMP/tokens" --workers 1 \
	|| { finish; exit 1; }
T=http://127.0.0.1:$(cat "$TMP/e.port")
MLP=$EX/tiny_mlp
as() { local tok=$1; shift; EULERNPU_SERVER=$T EULERNPU_TOKEN=$tok timeout 120 "$BIN/eulernpu" "$@"; }
as "$UTOK" compile --spec "$MLP/spec.yaml" --weights "$MLP/weights.npz" --out "$TMP/mlp" >/dev/null

# stream NAME TOKEN [curl args]: a stream into $TMP/NAME.sse, in the background
stream() {
	local name=$1 tok=$2; shift 2
	curl -sN --max-time 120 -H "Authorization: Bearer $tok" "$@" "$T/v1/events" >"$TMP/$name.sse" &
	eval "S_$name=$!"
}
# until_in NAME REGEX: up to 60 s for the stream's text to match
until_in() { for _ in $(seq 600); do grep -Eq -- "$2" "$TMP/$1.sse" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
stream alice "$UTOK"
stream bob "$BTOK"
stream ops "$ATOK"
check "the status event comes at once" until_in alice '^event: status$'
check "  ... with health, cache, boards and the job figures" until_in alice \
	'^data: \{"health":\{.*"cache":\{.*"boards":\[.*"metrics":\{"done":\{"succeeded":0,'
expect_eq "the hello event comes first, naming the stream's user" "$(sed -n 1,2p "$TMP/alice.sse" | tr '\n' ' ')" \
	'event: hello data: {"name":"alice","admin":false,"seq":0} '
until_in ops '^event: hello$' >/dev/null
expect_match "  ... and an admin's, as admin" "$(sed -n 2p "$TMP/ops.sse")" '^data: \{"name":"ops","admin":true,'

AJ=$(as "$UTOK" run --artifact "$TMP/mlp" --input "$MLP/input.npz" --detach)
check "alice's stream: her job, queued or running" until_in alice "\"id\":\"$AJ\",\"state\":\"(queued|running)\""
check "the admin's stream has it too" until_in ops "\"id\":\"$AJ\""
release
check "alice's stream: it succeeded" until_in alice "\"id\":\"$AJ\",\"state\":\"succeeded\""
BJ=$(as "$BTOK" run --artifact "$TMP/mlp" --input "$MLP/input.npz" --detach)
check "bob's stream: his job" until_in bob "\"id\":\"$BJ\",\"state\":\"succeeded\""
check "the admin's stream: bob's too" until_in ops "\"id\":\"$BJ\",\"state\":\"succeeded\""
expect_eq "bob's stream never shows alice's job" "$(grep -c "$AJ" "$TMP/bob.sse")" 0
expect_eq "alice's stream never shows bob's job" "$(grep -c "$BJ" "$TMP/alice.sse")" 0
expect_match "each job event is numbered" "$(grep -B2 "\"id\":\"$AJ\",\"state\":\"succeeded\"" "$TMP/alice.sse" | head -1)" '^id: [0-9]+$'
kill "$S_alice" "$S_bob" "$S_ops" 2>/dev/null
wait "$S_alice" "$S_bob" "$S_ops" 2>/dev/null

# resume: after the first of alice's numbers, her later events come again
FIRST=$(sed -n 's/^id: //p' "$TMP/alice.sse" | head -1)
stream again "$UTOK" -H "Last-Event-ID: $FIRST"
check "Last-Event-ID: what followed it comes again" until_in again "\"id\":\"$AJ\",\"state\":\"succeeded\""
kill "$S_again" 2>/dev/null; wait "$S_again" 2>/dev/null
stream future "$UTOK" -H "Last-Event-ID: 999999"
check "a number this daemon never made: reset" until_in future '^event: reset$'
kill "$S_future" 2>/dev/null; wait "$S_future" 2>/dev/null
expect_eq "?since=x: 400" "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $UTOK" "$T/v1/events?since=x")" 400
expect_eq "no token: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$T/v1/events")" 401
check "the daemon answers after the streams went" curl -sf -o /dev/null "$T/v1/health"
stop_daemon e
finish
