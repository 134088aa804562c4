#!/usr/bin/env bash
# remote_tls.sh: the remote cache tier (--remote-cache) where it is not
# nginx on plain http: (a) https with --remote-cache-cacert and a bearer
# token (--remote-cache-token-file): nginx with ssl on 127.0.0.1, a CA and
# a server certificate made here by openssl, 401 without the token; a
# reader with the token gets A's upload, one without it or with another CA
# compiles locally, degraded, and its compile never fails; (b) a remote
# that accepts the connection and never answers, and one that trickles a
# blob (a Python server on 127.0.0.1): the compile is local, within the
# configured bound, health degraded; (c) --remote-cache-queue 1 with the
# remote unreachable: the uploads that do not fit are dropped and counted,
# the compiles succeed. Counters and health are asserted, never a duration.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
U=http://localhost
NGINX=/usr/sbin/nginx
if [ ! -x "$NGINX" ]; then
	skip no-nginx "Debian's nginx-light is not installed (make bench-deps installs it)"
	finish
	exit
fi
health() { dcurl "$1" "$U/v1/health" | jget - "remote_cache.$2"; }
metric() { dcurl "$1" "$U/metrics" | awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "none" }'; }
# compile NAME SPEC WEIGHTS OUT: through daemon NAME
compile() {
	local d=$1; shift
	EULERNPU_SERVER=unix:$TMP/$d.sock "$CLI" compile --spec "$1" --weights "$2" --out "$3" --json \
		>"$TMP/$d.compile.json" 2>"$TMP/$d.compile.err"
}
until_ok() { local n=$1; shift; for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done; return 1; }
C=$EX/tiny_cnn
M=$EX/tiny_mlp

# ---- certificates, token, keys ----------------------------------------------------------------
# a test CA, a server certificate for 127.0.0.1 signed by it, and another
# CA that signed nothing here
mkcert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=eulernpu test CA $1" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$TMP/$1.key" \
		-out "$TMP/$1.pem" 2>>"$TMP/openssl.err"
}
mkcert ca && mkcert otherca &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$TMP/srv.key" -out "$TMP/srv.csr" 2>>"$TMP/openssl.err" &&
	printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$TMP/srv.ext" &&
	openssl x509 -req -in "$TMP/srv.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" \
		-CAcreateserial -days 2 -extfile "$TMP/srv.ext" -out "$TMP/srv.pem" 2>>"$TMP/openssl.err"
check "openssl made a CA and a server certificate for 127.0.0.1" \
	openssl verify -CAfile "$TMP/ca.pem" "$TMP/srv.pem"
TOK=$("$PY" -c 'import secrets; print(secrets.token_hex(16))')
printf '%s\n' "$TOK" >"$TMP/tok" && chmod 600 "$TMP/tok"
printf 'not-%s\n' "$TOK" >"$TMP/badtok" && chmod 600 "$TMP/badtok"
openssl genpkey -algorithm ed25519 -out "$TMP/a.key" 2>/dev/null && chmod 600 "$TMP/a.key"
openssl pkey -in "$TMP/a.key" -pubout -out "$TMP/a.pub" 2>/dev/null
check "sign key made" test -s "$TMP/a.pub"

# ---- nginx: WebDAV over https, the token required -----------------------------------------------
NP=$(free_port)
R=$TMP/remote
mkdir -p "$R/cas" "$R/ac"
chmod 777 "$R" "$R/cas" "$R/ac"   # nginx's workers (another user when root) write here
{ nginx_head "$TMP/nginx"; cat <<EOF; } >"$TMP/nginx.conf"
	server {
		listen 127.0.0.1:$NP ssl;
		ssl_certificate $TMP/srv.pem;
		ssl_certificate_key $TMP/srv.key;
		root $R;
		if (\$http_authorization != "Bearer $TOK") { return 401; }
		dav_methods PUT DELETE;
		create_full_put_path on;
		dav_access user:rw group:rw all:r;
		client_max_body_size 0;
	}
}
EOF
"$NGINX" -c "$TMP/nginx.conf" -p "$TMP/nginx" -g 'daemon off;' </dev/null >/dev/null \
	2>>"$TMP/nginx.err" &
EXTRA_PIDS+=($!)
RU=https://127.0.0.1:$NP
up() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$TMP/ca.pem" "$RU/")" = 401 ]; }
check "nginx serves https on 127.0.0.1:$NP, 401 without the token" until_ok 100 up
expect_eq "nginx: with the token, the request passes (404 for a blob it lacks)" \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$TMP/ca.pem" \
		-H "Authorization: Bearer $TOK" "$RU/cas/0000")" 404

# ---- (a) https and the token ----------------------------------------------------------------------
start_daemon a --remote-cache "$RU" --remote-cache-mode readwrite --remote-cache-sign-key "$TMP/a.key" \
	--remote-cache-cacert "$TMP/ca.pem" --remote-cache-token-file "$TMP/tok" || { finish; exit 1; }
check "A compiles tiny_cnn" compile a "$C/spec.yaml" "$C/weights.npz" "$TMP/a_cnn"
expect_eq "A: not cached" "$(jget "$TMP/a.compile.json" cached)" false
check "A uploads it over https with the token (bounded wait)" until_ok 600 eval \
	'[ "$(metric a '"'"'eulernpu_remote_cache_uploads_total{result="done"}'"'"')" = 1 ]'
expect_eq "A: health ok, no errors" "$(health a state) $(metric a eulernpu_remote_cache_errors_total)" \
	"ok 0"
expect_eq "the remote holds A's entry" "$(find "$R/ac" -type f | wc -l)" 1

start_daemon b --remote-cache "$RU" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-cacert "$TMP/ca.pem" --remote-cache-token-file "$TMP/tok" || { finish; exit 1; }
check "B (the CA, the token) compiles tiny_cnn" compile b "$C/spec.yaml" "$C/weights.npz" "$TMP/b_cnn"
expect_eq "B: cached, from the remote" "$(jget "$TMP/b.compile.json" cached)" true
check "B's artifact is A's" diff -r "$TMP/a_cnn" "$TMP/b_cnn"
expect_eq "B: 1 remote hit, health ok" \
	"$(metric b 'eulernpu_remote_cache_lookups_total{result="hit"}') $(health b state)" "1 ok"
expect_eq "B compiled nothing" "$(grep -c 'compiled artifact=' "$TMP/b.log")" 0

# a reader without the token, one with a wrong token, one with another CA:
# each compiles locally (the same artifact), degraded, never failing
reader_fails() {   # NAME WHAT LAST_ERROR_REGEX [flags]
	local d=$1 what=$2 re=$3; shift 3
	start_daemon "$d" --remote-cache "$RU" --remote-cache-trust "$TMP/a.pub" \
		--remote-cache-backoff 3600 "$@" || return
	check "$d ($what) compiles tiny_cnn" compile "$d" "$C/spec.yaml" "$C/weights.npz" "$TMP/${d}_cnn"
	expect_eq "$d: not cached, A's artifact (its own compile)" \
		"$(jget "$TMP/$d.compile.json" cached artifact)" "false $(jget "$TMP/a.compile.json" artifact)"
	expect_eq "$d: health degraded, no hit" \
		"$(health "$d" state) $(metric "$d" 'eulernpu_remote_cache_lookups_total{result="hit"}')" \
		"degraded 0"
	check "$d: the error counted" test "$(metric "$d" eulernpu_remote_cache_errors_total)" -ge 1
	expect_match "$d: health says why" "$(health "$d" last_error)" "$re"
	check "$d logged the degraded remote" grep -q "remote cache degraded" "$TMP/$d.log"
	stop_daemon "$d"
}
reader_fails c "no token" "401" --remote-cache-cacert "$TMP/ca.pem"
reader_fails d "a wrong token" "401" --remote-cache-cacert "$TMP/ca.pem" \
	--remote-cache-token-file "$TMP/badtok"
reader_fails e "another CA" "[Cc]ertificate|SSL" --remote-cache-cacert "$TMP/otherca.pem" \
	--remote-cache-token-file "$TMP/tok"
check_status "an unreadable --remote-cache-cacert is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "$RU" --remote-cache-cacert "$TMP/nonexistent.pem" --check-config
chmod 644 "$TMP/tok"
check_status "a token file others may read is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "$RU" --remote-cache-token-file "$TMP/tok" --check-config
chmod 600 "$TMP/tok"

# ---- (b) a remote that never answers, and one that trickles a blob ------------------------------------
# mode silent: accepts and reads, never writes; mode trickle: serves the
# files of the directory it is given (nginx's), a zip (the weights) at 64
# bytes every 0.5 s. Either exits by itself after 300 s; the cleanup trap
# kills it before that.
cat >"$TMP/slow.py" <<'PYEOF'
import http.server, os, socket, sys, threading, time
mode, port, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
threading.Timer(300, lambda: os._exit(0)).start()
if mode == "silent":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    open(root + "/silent.ready", "w").close()
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)          # kept open, never answered
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        p = os.path.normpath(root + self.path)
        if not p.startswith(root + "/") or not os.path.isfile(p):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
            return
        data = open(p, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not data.startswith(b"PK"):
            self.wfile.write(data)
            return
        for i in range(0, len(data), 64):
            self.wfile.write(data[i:i + 64]); self.wfile.flush(); time.sleep(0.5)
    do_HEAD = do_GET
http.server.ThreadingHTTPServer.daemon_threads = True
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
open(root + "/trickle.ready", "w").close()
srv.serve_forever()
PYEOF
SP=$(free_port)
"$PY" "$TMP/slow.py" silent "$SP" "$TMP" </dev/null >/dev/null 2>"$TMP/silent.err" &
EXTRA_PIDS+=($!)
check "the silent server listens" until_ok 100 test -e "$TMP/silent.ready"
start_daemon f --remote-cache "http://127.0.0.1:$SP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-timeout 500ms --remote-cache-backoff 3600 || { finish; exit 1; }
check "F (a remote that never answers) compiles tiny_mlp" compile f "$M/spec.yaml" "$M/weights.npz" \
	"$TMP/f_mlp"
expect_eq "F: not cached, health degraded" "$(jget "$TMP/f.compile.json" cached) $(health f state)" \
	"false degraded"
check "F: the timeout counted as an error" test "$(metric f eulernpu_remote_cache_errors_total)" -ge 1
expect_match "F: health says it timed out" "$(health f last_error)" "[Tt]imeout|timed out"
expect_eq "/metrics says degraded" "$(metric f eulernpu_remote_cache_degraded)" 1
check "F again: a local hit while degraded" compile f "$M/spec.yaml" "$M/weights.npz" "$TMP/f_mlp2"
expect_eq "F again: cached" "$(jget "$TMP/f.compile.json" cached)" true
stop_daemon f

TP=$(free_port)
"$PY" "$TMP/slow.py" trickle "$TP" "$R" </dev/null >/dev/null 2>"$TMP/trickle.err" &
EXTRA_PIDS+=($!)
check "the trickling server listens" until_ok 100 test -e "$R/trickle.ready"
start_daemon g --remote-cache "http://127.0.0.1:$TP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-timeout 1 --remote-cache-backoff 3600 || { finish; exit 1; }
check "G (a remote trickling the weights) compiles tiny_cnn" compile g "$C/spec.yaml" \
	"$C/weights.npz" "$TMP/g_cnn"
expect_eq "G: not cached, its own compile of A's artifact" \
	"$(jget "$TMP/g.compile.json" cached artifact)" "false $(jget "$TMP/a.compile.json" artifact)"
expect_eq "G: no hit, health degraded" \
	"$(metric g 'eulernpu_remote_cache_lookups_total{result="hit"}') $(health g state)" "0 degraded"
WD=$(sha256sum "$TMP/a_cnn/weights/cpu_ref.npz" | cut -d' ' -f1)
expect_match "G: health names the weights' transfer, dropped" "$(health g last_error)" "/cas/$WD"
check "G: the entry and the manifest did come (bytes in)" \
	test "$(metric g 'eulernpu_remote_cache_bytes_total{direction="in"}')" -gt 0
stop_daemon g

# ---- (c) the upload queue full, the remote unreachable ---------------------------------------------
DP=$(free_port)   # nothing listens there
start_daemon h --remote-cache "http://127.0.0.1:$DP" --remote-cache-mode readwrite \
	--remote-cache-sign-key "$TMP/a.key" --remote-cache-queue 1 --remote-cache-backoff 3600 ||
	{ finish; exit 1; }
for i in 1 2 3; do
	sed "s/^name: .*/name: mlp_q$i/" "$M/spec.yaml" >"$TMP/q$i.yaml"
	check "H compiles spec $i with the remote unreachable" compile h "$TMP/q$i.yaml" \
		"$M/weights.npz" "$TMP/h_q$i"
	expect_eq "H: spec $i compiled" "$(jget "$TMP/h.compile.json" cached)" false
done
expect_eq "H: one upload waits, two dropped" \
	"$(metric h eulernpu_remote_cache_queue) $(metric h 'eulernpu_remote_cache_uploads_total{result="dropped"}')" \
	"1 2"
expect_eq "H: health degraded, 1 queued" "$(health h state) $(health h queued)" "degraded 1"
expect_eq "H logged the drops" "$(grep -c 'upload queue full' "$TMP/h.log")" 2

for d in a b h; do stop_daemon "$d"; done   # a leak is reported at exit
expect_eq "no sanitizer reports from the daemons" \
	"$(cat "$TMP"/*.stderr 2>/dev/null | grep -c -e 'runtime error' -e 'Sanitizer')" 0
finish
