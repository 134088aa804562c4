#!/usr/bin/env bash
# owners.sh: who owns what (docs/access.md). A lab daemon on TCP loopback
# with the tokens alice (user), bob (user) and root (admin): bob neither
# lists, reads, streams nor cancels alice's job (404, as for a job that does
# not exist), cannot read her input, result or weights blobs nor name them
# in a job, compile or compare until he uploads the same bytes himself;
# root sees everything; input_name is a base name; uploaders survive a
# restart. Then two throwaway local users (created here, removed at the
# end) over a world-accessible Unix socket: ownership by peer uid.
. "$(dirname "$0")/lib.sh"

# the throwaway users of the Unix socket part, removed however the script ends
UA=enpuown$$a
UB=enpuown$$b
MADE=()
# as root: directly, or through sudo -n when not root (a CI user with sudo)
SUDO=
[ "$(id -u)" = 0 ] || SUDO="sudo -n"
del_users() {
	local u
	for u in "${MADE[@]}"; do $SUDO userdel "$u" >/dev/null 2>&1; done
}
trap 'del_users; cleanup' EXIT

unset EULERNPU_SERVER EULERNPU_TOKEN EULERNPU_CACERT
export XDG_CONFIG_HOME=$TMP/xdg
CLI=$BIN/eulernpu
M=$EX/tiny_mlp
U=http://localhost

rnd() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
AT=a-$(rnd); BT=b-$(rnd); RT=r-$(rnd)
printf '%s user alice\n%s user bob\n%s admin root\n' "$AT" "$BT" "$RT" >"$TMP/tokens"
chmod 600 "$TMP/tokens"
printf '%s\n' "$AT" >"$TMP/atok"
chmod 600 "$TMP/atok"

lab() {   # the lab daemon t on a fresh port: T is its URL
	rm -f "$TMP/t.port"
	start_daemon t --listen 127.0.0.1:0 --port-file "$TMP/t.port" --tokens "$TMP/tokens" \
		--workers 1 || { finish; exit 1; }
	for _ in $(seq 100); do [ -s "$TMP/t.port" ] && break; sleep 0.05; done
	T=http://127.0.0.1:$(cat "$TMP/t.port")
}
lab
# as TOKEN OUT [curl args...]: the status code; the body in OUT
as() { local tok=$1 out=$2; shift 2; curl -s --max-time 60 -o "$out" -w '%{http_code}' \
	-H "Authorization: Bearer $tok" "$@"; }
sha() { sha256sum "$1" | cut -c1-64; }
IN=$(sha "$M/input.npz")
W=$(sha "$M/weights.npz")
SP=$(sha "$M/spec.yaml")

# ---- alice compiles and runs with the client ------------------------------------------------
check "alice compiles" "$CLI" --server "$T" --token-file "$TMP/atok" compile --spec "$M/spec.yaml" \
	--weights "$M/weights.npz" --out "$TMP/art"
check "alice runs" "$CLI" --server "$T" --token-file "$TMP/atok" run --artifact "$TMP/art" \
	--input "$M/input.npz" --out "$TMP/a.npz"
ART=$(jget "$TMP/art/manifest.json" id)
expect_eq "alice lists her job" "$(as "$AT" "$TMP/al.json" "$T/v1/jobs")" 200
expect_eq "alice's list: one job" "$(jget "$TMP/al.json" jobs.#)" 1
J=$(jget "$TMP/al.json" jobs.0.id)
RES=$(jget "$TMP/al.json" jobs.0.result)
REP=$(jget "$TMP/al.json" jobs.0.report)
expect_eq "the job's owner is alice" "$(jget "$TMP/al.json" jobs.0.owner)" alice
expect_eq "the client sends the input's base name" "$(jget "$TMP/al.json" jobs.0.input_name)" input.npz

# ---- bob sees nothing of alice's -------------------------------------------------------------
expect_eq "bob lists jobs: 200" "$(as "$BT" "$TMP/bl.json" "$T/v1/jobs")" 200
expect_eq "bob's list excludes alice's job" "$(jget "$TMP/bl.json" jobs.#)" 0
as "$BT" "$TMP/none.json" "$T/v1/jobs/0123456789abcdef" >/dev/null
NOJOB=$(jget "$TMP/none.json" error.code)
for p in "" /events /result /report; do
	expect_eq "bob GET alice's job$p: 404" "$(as "$BT" "$TMP/b.json" "$T/v1/jobs/$J$p")" 404
	expect_eq "bob GET alice's job$p: as a job that does not exist" \
		"$(jget "$TMP/b.json" error.code) $(jget "$TMP/b.json" error.message)" \
		"$NOJOB no job '$J' on this server"
done
expect_eq "bob DELETE alice's job: 404 (not 409)" "$(as "$BT" "$TMP/b.json" -X DELETE "$T/v1/jobs/$J")" 404
expect_eq "bob DELETE: as a job that does not exist" "$(jget "$TMP/b.json" error.message)" \
	"no job '$J' on this server"
for d in "$RES:result" "$REP:report" "$W:weights" "$IN:input" "$SP:spec"; do
	expect_eq "bob GET /v1/blobs of alice's ${d#*:}: 404" \
		"$(as "$BT" "$TMP/b.json" "$T/v1/blobs/${d%%:*}")" 404
done
expect_eq "bob's 404 for a blob reads as an absent one" "$(jget "$TMP/b.json" error.message)" \
	"blob $SP is not on the server"
expect_eq "bob blobs/missing: alice's input is missing to him" \
	"$(as "$BT" "$TMP/b.json" -H 'Content-Type: application/json' -d "{\"digests\":[\"$IN\",\"$W\"]}" \
	"$T/v1/blobs/missing" >/dev/null; jget "$TMP/b.json" missing.#)" 2
expect_eq "alice blobs/missing: none" \
	"$(as "$AT" "$TMP/a.json" -H 'Content-Type: application/json' -d "{\"digests\":[\"$IN\",\"$W\"]}" \
	"$T/v1/blobs/missing" >/dev/null; jget "$TMP/a.json" missing.#)" 0
JOB_BODY="{\"artifact\":\"$ART\",\"input\":\"$IN\",\"input_name\":\"/home/bob/secret/in.npz\"}"
expect_eq "bob POST /v1/jobs with alice's input digest: refused (409)" \
	"$(as "$BT" "$TMP/b.json" -H 'Content-Type: application/json' -d "$JOB_BODY" "$T/v1/jobs")" 409
expect_eq "refused as missing: the client would upload it" "$(jget "$TMP/b.json" missing.0)" "$IN"
expect_eq "bob POST /v1/compile with alice's spec and weights: 409" \
	"$(as "$BT" "$TMP/b.json" -H 'Content-Type: application/json' \
	-d "{\"spec\":\"$SP\",\"weights\":\"$W\"}" "$T/v1/compile")" 409
expect_eq "bob POST /v1/compare with alice's result: 409" \
	"$(as "$BT" "$TMP/b.json" -H 'Content-Type: application/json' \
	-d "{\"got\":\"$RES\",\"expected\":\"$RES\"}" "$T/v1/compare")" 409
expect_eq "compiled artifacts stay shared" "$(as "$BT" "$TMP/b.json" "$T/v1/artifacts/$ART")" 200

# ---- alice and root still see them ------------------------------------------------------------
expect_eq "alice GET her result" "$(as "$AT" "$TMP/r.npz" "$T/v1/jobs/$J/result")" 200
expect_eq "alice GET her result blob (her job's)" "$(as "$AT" "$TMP/r2.npz" "$T/v1/blobs/$RES")" 200
expect_eq "alice GET her weights blob (uploaded)" "$(as "$AT" "$TMP/w.npz" "$T/v1/blobs/$W")" 200
expect_eq "root lists alice's job" "$(as "$RT" "$TMP/rl.json" "$T/v1/jobs" >/dev/null
	jexpr "$TMP/rl.json" "[j['owner'] for j in d['jobs'] if j['id'] == '$J']")" '["alice"]'
expect_eq "root GET alice's job" "$(as "$RT" "$TMP/r.json" "$T/v1/jobs/$J")" 200
expect_eq "root GET alice's report" "$(as "$RT" "$TMP/r.json" "$T/v1/jobs/$J/report")" 200
expect_eq "root GET alice's weights blob" "$(as "$RT" "$TMP/r.npz" "$T/v1/blobs/$W")" 200
expect_eq "root DELETE alice's finished job: 409 (it is there)" \
	"$(as "$RT" "$TMP/r.json" -X DELETE "$T/v1/jobs/$J")" 409

# ---- bob proves he has the bytes ---------------------------------------------------------------
head -c 100 /dev/urandom >"$TMP/junk"
expect_eq "bob PUT wrong bytes under alice's digest: refused" \
	"$(as "$BT" "$TMP/b.json" -X PUT --data-binary @"$TMP/junk" "$T/v1/blobs/$IN")" 422
expect_eq "... and the blob stays unreadable to him" "$(as "$BT" "$TMP/b.json" "$T/v1/blobs/$IN")" 404
expect_eq "bob PUT the same bytes: 200 (not stored again)" \
	"$(as "$BT" "$TMP/b.json" -X PUT --data-binary @"$M/input.npz" "$T/v1/blobs/$IN")" 200
expect_eq "... created: false" "$(jget "$TMP/b.json" created)" false
expect_eq "bob GET /v1/blobs of the input: now 200" "$(as "$BT" "$TMP/b.npz" "$T/v1/blobs/$IN")" 200
expect_eq "bob POST /v1/jobs with the input: now allowed" \
	"$(as "$BT" "$TMP/bj.json" -H 'Content-Type: application/json' -d "$JOB_BODY" "$T/v1/jobs?wait=60")" 200
expect_eq "bob's job is bob's" "$(jget "$TMP/bj.json" owner)" bob
expect_eq "input_name is a base name though a path was sent" "$(jget "$TMP/bj.json" input_name)" in.npz
BJ=$(jget "$TMP/bj.json" id)
expect_eq "bob lists only his job" "$(as "$BT" "$TMP/bl.json" "$T/v1/jobs" >/dev/null
	jget "$TMP/bl.json" jobs.#) $(jget "$TMP/bl.json" jobs.0.id)" "1 $BJ"
expect_eq "alice does not see bob's job" "$(as "$AT" "$TMP/a.json" "$T/v1/jobs/$BJ")" 404
expect_eq "bob still cannot read alice's weights" "$(as "$BT" "$TMP/b.json" "$T/v1/blobs/$W")" 404
expect_eq "root lists both jobs" "$(as "$RT" "$TMP/rl.json" "$T/v1/jobs" >/dev/null
	jget "$TMP/rl.json" jobs.#)" 2

# ---- uploaders are kept in the cache across a restart ---------------------------------------------
stop_daemon t
lab
expect_eq "after a restart: bob reads the input he uploaded" "$(as "$BT" "$TMP/b.npz" "$T/v1/blobs/$IN")" 200
expect_eq "after a restart: alice reads her weights" "$(as "$AT" "$TMP/w.npz" "$T/v1/blobs/$W")" 200
expect_eq "after a restart: bob still cannot read alice's weights" \
	"$(as "$BT" "$TMP/b.json" "$T/v1/blobs/$W")" 404
expect_match "the owners record lists an uploader a line" "$(cat "$TMP/t.cache/owners/${IN:0:2}/$IN")" \
	'^alice$|^bob$'
stop_daemon t

# ---- Unix socket: the peer's uid ---------------------------------------------------------------
# Two throwaway users, created if absent and removed at the end (also on
# failure); the daemon runs as root, whose own uid is an admin.
if ! PATH=$PATH:/usr/sbin:/sbin command -v useradd >/dev/null || { [ -n "$SUDO" ] && ! sudo -n true 2>/dev/null; }; then
	skip owners-unix-users "needs root (or sudo -n) and useradd to create local users"
	finish
	exit $?
fi
for u in "$UA" "$UB"; do
	if ! id "$u" >/dev/null 2>&1; then
		$SUDO env PATH="$PATH:/usr/sbin:/sbin" useradd -M -N -r -s /usr/sbin/nologin "$u" && MADE+=("$u")
	fi
done
check "two local users exist" id "$UA" "$UB"
UIDA=$(id -u "$UA")
chmod 711 "$TMP"
mkdir -m 755 "$TMP/pub"
cp "$M/input.npz" "$TMP/pub/input.npz"
chmod 644 "$TMP/pub/input.npz"
start_daemon u --socket-mode 0666 --workers 1 || { finish; exit 1; }
check "root (the daemon's uid) compiles over the socket" "$CLI" --server "unix:$TMP/u.sock" compile \
	--spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/uart"
UART=$(jget "$TMP/uart/manifest.json" id)
# usr USER [curl args...]: curl as USER on the socket, the body then the status on the last line
usr() { local u=$1; shift
	if [ -n "$SUDO" ]; then set -- sudo -n -u "$u" -- curl "$@"; else set -- runuser -u "$u" -- curl "$@"; fi
	"$@" -s --max-time 60 --unix-socket "$TMP/u.sock" -w '\n%{http_code}'; }
UBODY="{\"artifact\":\"$UART\",\"input\":\"$IN\"}"
expect_eq "$UA uploads the input" "$(usr "$UA" -X PUT --data-binary @"$TMP/pub/input.npz" \
	"$U/v1/blobs/$IN" | tail -1)" 201
usr "$UA" -H 'Content-Type: application/json' -d "$UBODY" "$U/v1/jobs?wait=60" >"$TMP/uj.out"
expect_eq "$UA runs a job" "$(tail -1 "$TMP/uj.out")" 200
head -n -1 "$TMP/uj.out" >"$TMP/uj.json"
UJ=$(jget "$TMP/uj.json" id)
expect_eq "the job's owner is $UA's uid" "$(jget "$TMP/uj.json" owner)" "uid:$UIDA"
expect_eq "$UA sees it" "$(usr "$UA" "$U/v1/jobs/$UJ" | tail -1)" 200
expect_eq "$UB does not: 404" "$(usr "$UB" "$U/v1/jobs/$UJ" | tail -1)" 404
expect_eq "$UB cannot cancel it: 404" "$(usr "$UB" -X DELETE "$U/v1/jobs/$UJ" | tail -1)" 404
expect_eq "$UB's list is empty" "$(usr "$UB" "$U/v1/jobs" | head -n -1 | jget - jobs.#)" 0
expect_eq "$UB cannot read the input blob" "$(usr "$UB" "$U/v1/blobs/$IN" | tail -1)" 404
expect_eq "$UB cannot run on it" "$(usr "$UB" -H 'Content-Type: application/json' -d "$UBODY" \
	"$U/v1/jobs" | tail -1)" 409
expect_eq "$UB uploads the same bytes" "$(usr "$UB" -X PUT --data-binary @"$TMP/pub/input.npz" \
	"$U/v1/blobs/$IN" | tail -1)" 200
expect_eq "... then runs on it" "$(usr "$UB" -H 'Content-Type: application/json' -d "$UBODY" \
	"$U/v1/jobs?wait=60" | tail -1)" 200
expect_eq "root sees both jobs" "$(dcurl u "$U/v1/jobs" | jget - jobs.#)" 2
stop_daemon u
GONE=("${MADE[@]}")
del_users
MADE=()
for u in "${GONE[@]}"; do
	expect_eq "throwaway user $u is removed" "$(id "$u" 2>/dev/null)" ""
done

expect_eq "no sanitizer reports from the daemons" \
	"$(cat "$TMP"/*.stderr 2>/dev/null | grep -c -e 'runtime error' -e 'Sanitizer')" 0

finish
