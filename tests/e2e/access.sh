#!/usr/bin/env bash
# access.sh: who may talk to eulernpud. Bearer tokens with roles on TCP
# (none / wrong -> 401, user on an admin route -> 403, right -> 200, health
# open), Unix sockets by file mode, the client's token and CA sources
# (flag > env > config file), a TLS round trip with a certificate made here,
# and no token ever in a log or an error message.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp
U=http://localhost
unset EULERNPU_SERVER EULERNPU_TOKEN EULERNPU_CACERT
export XDG_CONFIG_HOME=$TMP/xdg


UTOK=u-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
ATOK=a-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '# lab tokens\n%s user alice\n\n%s admin ops\n' "$UTOK" "$ATOK" >"$TMP/tokens"
chmod 644 "$TMP/tokens"

# ---- a world-readable token file is refused ----------------------------------------------
"$BIN/eulernpud" --socket "$TMP/x.sock" --cache "$TMP/x.cache" --tokens "$TMP/tokens" \
	>"$TMP/x.out" 2>"$TMP/x.err"; rc=$?
expect_eq "world-readable --tokens: exit 2" "$rc" 2
expect_eq "world-readable --tokens: three lines" "$(wc -l <"$TMP/x.err")" 3
expect_match "world-readable --tokens: E0816" "$(head -1 "$TMP/x.err")" '^error\[E0816\]'
expect_match "world-readable --tokens: says why" "$(sed -n 2p "$TMP/x.err")" 'readable or writable by everyone'
chmod 600 "$TMP/tokens"
printf '%s\n' "$ATOK" >"$TMP/single"
chmod 604 "$TMP/single"
for flag in --token-file --board-token-file; do
	extra=; [ "$flag" = --board-token-file ] && extra="--board b=unix:$TMP/none.sock"
	# shellcheck disable=SC2086
	"$BIN/eulernpud" --socket "$TMP/x.sock" --cache "$TMP/x.cache" $flag "$TMP/single" $extra \
		>"$TMP/x.out" 2>"$TMP/x.err"; rc=$?
	expect_eq "world-readable $flag: exit 2" "$rc" 2
	expect_eq "world-readable $flag: three lines" "$(wc -l <"$TMP/x.err")" 3
	expect_match "world-readable $flag: names the file" "$(sed -n 1,2p "$TMP/x.err" | tr "\n" " ")" \
		"E0816.*token file '$TMP/single' is readable or writable by everyone \(mode 0604\)"
	expect_match "world-readable $flag: chmod 600" "$(sed -n 3p "$TMP/x.err")" 'chmod 600'
done
chmod 600 "$TMP/single"
printf '%s superuser\n' "$UTOK" >"$TMP/badrole"
chmod 600 "$TMP/badrole"
"$BIN/eulernpud" --socket "$TMP/x.sock" --cache "$TMP/x.cache" --tokens "$TMP/badrole" \
	>"$TMP/x.out" 2>"$TMP/x.err"; rc=$?
expect_eq "bad role: exit 2" "$rc" 2
expect_match "bad role: names file:line" "$(sed -n 2p "$TMP/x.err")" "badrole:1: role 'superuser'"
expect_eq "bad role: the token is not quoted" "$(grep -c -- "$UTOK" "$TMP/x.err")" 0

# ---- tokens on TCP -------------------------------------------------------------------------
start_daemon a --listen 127.0.0.1:0 --port-file "$TMP/a.port" --tokens "$TMP/tokens" --workers 1 \
	|| { finish; exit 1; }
P=$(cat "$TMP/a.port")
T=http://127.0.0.1:$P
tc() { curl -s --max-time 30 "$@"; }

expect_eq "health needs no token" "$(tc -o /dev/null -w '%{http_code}' $T/v1/health)" 200
expect_eq "no token: 401" "$(tc -o "$TMP/e.json" -w '%{http_code}' $T/v1/backends)" 401
expect_eq "no token: E0814" "$(jget "$TMP/e.json" error.code)" E0814
expect_match "no token: WWW-Authenticate: Bearer" "$(tc -D - -o /dev/null $T/v1/backends | tr -d '\r')" \
	'^WWW-Authenticate: Bearer$'
expect_eq "wrong token: 401" \
	"$(tc -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${UTOK}x" $T/v1/backends)" 401
expect_eq "token prefix: 401" \
	"$(tc -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${UTOK%?}" $T/v1/backends)" 401
expect_eq "not Bearer: 401" \
	"$(tc -o /dev/null -w '%{http_code}' -H "Authorization: Basic $UTOK" $T/v1/backends)" 401
expect_eq "user token, user route: 200" \
	"$(tc -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $UTOK" $T/v1/backends)" 200
expect_eq "user token, admin route: 403" \
	"$(tc -o "$TMP/e.json" -w '%{http_code}' -H "Authorization: Bearer $UTOK" $T/v1/cache/entries)" 403
expect_eq "user token, admin route: E0815" "$(jget "$TMP/e.json" error.code)" E0815
expect_match "403 names the token's name, not the token" "$(jget "$TMP/e.json" error.message)" "token 'alice' has role user"
expect_eq "admin token, admin route: 200" \
	"$(tc -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ATOK" $T/v1/cache/entries)" 200
expect_eq "admin token, user route: 200" \
	"$(tc -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ATOK" $T/v1/backends)" 200
expect_eq "admin route without a token: 401 (not 403)" \
	"$(tc -o /dev/null -w '%{http_code}' -X POST $T/v1/cache/gc)" 401
expect_match "every answer has a request id" "$(tc -D - -o /dev/null $T/v1/health | tr -d '\r')" \
	'^X-Request-Id: [0-9a-f]{16}$'

# ---- Unix socket: file permissions, no tokens -------------------------------------------------
expect_eq "socket mode 0600 by default" "$(stat -c %a "$TMP/a.sock")" 600
expect_eq "socket: admin route without a token 200" "$(dcurl a -o /dev/null -w '%{http_code}' $U/v1/cache/entries)" 200
G=$(id -gn)
start_daemon g --socket-mode 0660 --socket-group "$G" || { finish; exit 1; }
expect_eq "--socket-mode 0660" "$(stat -c %a "$TMP/g.sock")" 660
expect_eq "--socket-group" "$(stat -c %G "$TMP/g.sock")" "$G"
stop_daemon g
"$BIN/eulernpud" --socket "$TMP/y.sock" --socket-group no-such-group-xyz >/dev/null 2>"$TMP/y.err"; rc=$?
expect_eq "unknown --socket-group: exit 2" "$rc" 2
expect_match "--socket-mode 999: usage error" \
	"$("$BIN/eulernpud" --socket "$TMP/y.sock" --socket-mode 999 2>&1 >/dev/null | head -1)" '^error\[E0100\]'

# ---- the client: --token-file > EULERNPU_TOKEN > config file -------------------------------------
printf '%s\n' "$UTOK" >"$TMP/utok"
printf '%s\n' "$ATOK" >"$TMP/atok"
printf 'nope\n' >"$TMP/wtok"
chmod 644 "$TMP/utok"
check_status "client: a group/world-readable --token-file is refused (exit 2)" 2 \
	"$CLI" --server "$T" --token-file "$TMP/utok" backends
expect_match "client: world-readable token file: names it" "$(sed -n 1,2p "$TMP/last.err" | tr "\n" " ")" \
	"E0100.*token file '$TMP/utok' may be read or written by others \(mode 0644\)"
expect_match "client: world-readable token file: chmod 600" "$(sed -n 3p "$TMP/last.err")" 'chmod 600'
chmod 640 "$TMP/utok"
check_status "client: a group-readable --token-file is refused too" 2 \
	"$CLI" --server "$T" --token-file "$TMP/utok" backends
chmod 600 "$TMP/utok" "$TMP/atok" "$TMP/wtok"
check_status "client without a token: exit 2" 2 "$CLI" --server "$T" backends
expect_match "client without a token: E0814" "$(head -1 "$TMP/last.err")" '^error\[E0814\]'
check "client --token-file" "$CLI" --server "$T" --token-file "$TMP/utok" backends
check "client EULERNPU_TOKEN" env EULERNPU_TOKEN="$UTOK" "$CLI" --server "$T" backends
check_status "client with a wrong EULERNPU_TOKEN: exit 2" 2 env EULERNPU_TOKEN=nope "$CLI" --server "$T" backends
expect_eq "the wrong token is not printed" "$(cat "$TMP/last.out" "$TMP/last.err" | grep -c nope)" 0
check "--token-file beats EULERNPU_TOKEN" env EULERNPU_TOKEN=nope "$CLI" --server "$T" --token-file "$TMP/utok" backends
mkdir -p "$TMP/xdg/eulernpu"
printf 'server: %s\ntoken_file: %s\n' "$T" "$TMP/utok" >"$TMP/xdg/eulernpu/config.yaml"
check "config file: server and token_file" "$CLI" backends
check_status "EULERNPU_TOKEN beats the config file" 2 env EULERNPU_TOKEN=nope "$CLI" backends
printf 'server: %s\ntoken: %s\n' "$T" "$UTOK" >"$TMP/xdg/eulernpu/config.yaml"
check "config file: token" "$CLI" backends
printf 'server: %s\ntokn: x\n' "$T" >"$TMP/xdg/eulernpu/config.yaml"
check_status "config file: unknown key exit 2" 2 "$CLI" backends
expect_match "config file: unknown key at file:line:col" "$(sed -n 2p "$TMP/last.err")" 'config.yaml:2:1: unknown setting'
rm -f "$TMP/xdg/eulernpu/config.yaml"

# compile and run over TCP with a user token: the whole path (blobs, compile, jobs)
export EULERNPU_TOKEN=$UTOK
check "compile over TCP with a token" "$CLI" --server "$T" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp"
check "run over TCP with a token" "$CLI" --server "$T" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/o1.npz"
unset EULERNPU_TOKEN

# ---- TLS ------------------------------------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1
chmod 600 "$TMP/key.pem"
start_daemon t --listen 127.0.0.1:0 --port-file "$TMP/t.port" --tokens "$TMP/tokens" --workers 1 \
	--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" || { finish; exit 1; }
S=https://127.0.0.1:$(cat "$TMP/t.port")
expect_eq "TLS: curl --cacert health 200" "$(tc --cacert "$TMP/cert.pem" -o /dev/null -w '%{http_code}' $S/v1/health)" 200
expect_eq "TLS: token still required (401)" "$(tc --cacert "$TMP/cert.pem" -o /dev/null -w '%{http_code}' $S/v1/backends)" 401
expect_eq "TLS: user token 200" \
	"$(tc --cacert "$TMP/cert.pem" -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $UTOK" $S/v1/backends)" 200
expect_eq "TLS: plain http to the TLS port fails" "$(tc -o /dev/null -w '%{http_code}' http://127.0.0.1:$(cat "$TMP/t.port")/v1/health)" 000
check_status "TLS: client without --cacert: exit 2 (retrying cannot help)" 2 "$CLI" --server "$S" --token-file "$TMP/utok" backends
expect_match "TLS: without --cacert: E0820" "$(head -1 "$TMP/last.err")" '^error\[E0820\]: no trusted TLS connection'
expect_match "TLS: without --cacert: says to check --cacert" "$(sed -n 3p "$TMP/last.err")" '--cacert FILE'
check_status "TLS: version without --cacert: exit 2" 2 "$CLI" --server "$S" version
expect_eq "TLS: version without --cacert: the client's version first" "$(head -1 "$TMP/last.out")" \
	"eulernpu $("$CLI" version | sed -n '1s/^eulernpu //p')"
expect_match "TLS: version without --cacert: E0820" "$(head -1 "$TMP/last.err")" '^error\[E0820\]'
check "TLS: version with --cacert: exit 0" "$CLI" --server "$S" --cacert "$TMP/cert.pem" version
expect_match "TLS: version with --cacert: the server's version" "$(sed -n 2p "$TMP/last.out")" \
	"^eulernpud [0-9][^ ]* \($S\)$"
printf 'server: %s\ncacert: %s\n' "$S" "$TMP/cert.pem" >"$TMP/xdg/eulernpu/config.yaml"
check "TLS: version takes the config file's cacert" "$CLI" version
expect_match "TLS: version (config file): the server's version" "$(sed -n 2p "$TMP/last.out")" "^eulernpud [0-9]"
rm -f "$TMP/xdg/eulernpu/config.yaml"
check_status "TLS: a wrong token exits 2" 2 "$CLI" --server "$S" --token-file "$TMP/wtok" --cacert "$TMP/cert.pem" backends
expect_match "TLS: a wrong token: the fix says to check the token" "$(sed -n 3p "$TMP/last.err")" 'check the token: --token-file'
check "TLS: client --cacert" "$CLI" --server "$S" --token-file "$TMP/utok" --cacert "$TMP/cert.pem" backends
check "TLS: client EULERNPU_CACERT" env EULERNPU_CACERT="$TMP/cert.pem" "$CLI" --server "$S" --token-file "$TMP/utok" backends
printf 'server: %s\ntoken_file: %s\ncacert: %s\n' "$S" "$TMP/utok" "$TMP/cert.pem" >"$TMP/xdg/eulernpu/config.yaml"
check "TLS: server, token and cacert from the config file" "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp2"
check "TLS: run over TLS with a token" "$CLI" run --artifact "$TMP/mlp2" --input "$M/input.npz" --out "$TMP/o2.npz"
expect_eq "TLS: same result bytes as plain TCP" "$(cmp -s "$TMP/o1.npz" "$TMP/o2.npz" && echo same)" same
rm -f "$TMP/xdg/eulernpu/config.yaml"
# a lab server reaching a board agent over https with --board-cacert
start_daemon bd --role board --listen 127.0.0.1:0 --port-file "$TMP/bd.port" --token-file "$TMP/atok" \
	--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" --workers 1 || { finish; exit 1; }
BURL=https://127.0.0.1:$(cat "$TMP/bd.port")
start_daemon lab --board "tb=$BURL" --board-cacert "$TMP/cert.pem" --board-token-file "$TMP/atok" \
	--board-health-interval 1 || { finish; exit 1; }
bstate() { dcurl lab $U/v1/boards | jget - boards.0.state; }
for _ in $(seq 100); do [ "$(bstate)" = up ] && break; sleep 0.1; done
expect_eq "https board with --board-cacert: up" "$(bstate)" up
stop_daemon lab
start_daemon lab2 --board "tb=$BURL" --board-token-file "$TMP/atok" --board-health-interval 1 || { finish; exit 1; }
sleep 1.5
expect_eq "https board without the CA: down" "$(dcurl lab2 $U/v1/boards | jget - boards.0.state)" down
stop_daemon lab2
stop_daemon bd
"$BIN/eulernpud" --socket "$TMP/y.sock" --tls-cert "$TMP/cert.pem" >/dev/null 2>"$TMP/y.err"; rc=$?
expect_eq "--tls-cert without --tls-key: exit 2" "$rc" 2

# ---- no token in any log -------------------------------------------------------------------------
stop_daemon a
stop_daemon t
leaks=$(cat "$TMP"/*.log "$TMP"/*.stderr 2>/dev/null | grep -c -e "$UTOK" -e "$ATOK")
expect_eq "tokens never in the logs" "$leaks" 0
expect_match "the 401s were logged (by route, without tokens)" "$(cat "$TMP/a.log")" 'status=401'

expect_eq "no sanitizer reports from the daemons" \
	"$(cat "$TMP"/*.stderr 2>/dev/null | grep -c -e 'runtime error' -e 'Sanitizer')" 0

finish
