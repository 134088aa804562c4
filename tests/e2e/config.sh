#!/usr/bin/env bash
# config.sh: eulernpud's configuration file (applied, overridden by flags,
# --check-config with file:line:col errors, a wrong --www), the limits (each with its
# error and status), SIGHUP (tokens and boards reloaded live), SIGTERM drain
# (a running slow job finishes, new jobs get 503, exit 0; at --drain-timeout
# the jobs left are cancelled, a running one at its next op) and socket
# activation (systemd-socket-activate, and LISTEN_FDS set by hand for TCP).
. "$(dirname "$0")/lib.sh"

M=$EX/tiny_mlp
U=http://localhost
unset EULERNPU_SERVER EULERNPU_TOKEN EULERNPU_CACERT

st() { local n=$1 o=$2; shift 2; dcurl "$n" -o "$o" -w '%{http_code}' "$@"; }
# until_eq DESC WANT CMD...: CMD's output becomes WANT within 10 s (polled)
until_eq() {
	local desc=$1 want=$2 got=; shift 2
	for _ in $(seq 100); do
		got=$("$@" 2>/dev/null)
		[ "$got" = "$want" ] && break
		sleep 0.1
	done
	expect_eq "$desc" "$got" "$want"
}

# ---- --check-config ---------------------------------------------------------------------------
cat >"$TMP/good.yaml" <<EOF
# a lab server
workers: 1
max-queue: 7
conn-timeout: 30
max-json-depth: 16
boards:
  b1: http://127.0.0.1:9
  b2: unix:/run/eulernpu/b2.sock
EOF
out=$("$BIN/eulernpud" --check-config --config "$TMP/good.yaml" 2>&1); rc=$?
expect_eq "--check-config good: exit 0" "$rc" 0
expect_match "--check-config good: says OK" "$out" "configuration OK \\($TMP/good.yaml\\)"

printf 'workers: 1\nmax-queue: 7\nworkerz: 2\n' >"$TMP/bad1.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/bad1.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "unknown key: exit 2" "$rc" 2
expect_eq "unknown key: three lines" "$(wc -l <"$TMP/e")" 3
expect_match "unknown key: E0816" "$(head -1 "$TMP/e")" '^error\[E0816\]: invalid configuration'
expect_match "unknown key: at file:3:1" "$(sed -n 2p "$TMP/e")" "bad1.yaml:3:1: unknown setting 'workerz'"
printf 'workers: 1\nmax-queue: lots\n' >"$TMP/bad2.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/bad2.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "bad value: exit 2" "$rc" 2
expect_match "bad value: at the value, file:2:12" "$(sed -n 2p "$TMP/e")" "bad2.yaml:2:12: option '--max-queue': 'lots' is not a whole number"
printf 'workers: 1\nlisten: [a, b]\n' >"$TMP/bad3.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/bad3.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_match "a list where a value goes: file:2:9" "$(sed -n 2p "$TMP/e")" "bad3.yaml:2:9: option 'listen' takes a single value"
printf 'workers: 1\n  max-queue: 2\n' >"$TMP/bad4.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/bad4.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "bad YAML: exit 2" "$rc" 2
expect_match "bad YAML: file:line:col" "$(sed -n 2p "$TMP/e")" "bad4.yaml:2:[0-9]+: not valid YAML"
printf 'boards:\n  - name: b1\n    url: ftp://x\n' >"$TMP/bad5.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/bad5.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_match "bad board URL: at the board, file:2:5" "$(sed -n 2p "$TMP/e")" "bad5.yaml:2:5: board 'b1'"
printf 'a: &x 1\nworkers: *x\n' >"$TMP/bad6.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/bad6.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_match "aliases refused" "$(sed -n 2p "$TMP/e")" "anchors and aliases are not allowed"
"$BIN/eulernpud" --check-config --config "$TMP/none.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "missing file: exit 2" "$rc" 2
expect_match "missing file: E0816" "$(head -1 "$TMP/e")" '^error\[E0816\]'
out=$("$BIN/eulernpud" --check-config --config none 2>&1); rc=$?
expect_eq "--config none: nothing to read, OK" "$rc $out" "0 eulernpud: configuration OK"
"$BIN/eulernpud" --check-config --config "$TMP/good.yaml" --workers 0 >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "--check-config checks the flags too: exit 2" "$rc" 2
# --www: a directory that is not one, or has no index.html, is E0816
mkdir -p "$TMP/www-empty"
printf 'www: %s\n' "$TMP/www-empty" >"$TMP/www.yaml"
"$BIN/eulernpud" --check-config --config "$TMP/www.yaml" >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "www without index.html: exit 2, three lines" "$rc $(wc -l <"$TMP/e")" "2 3"
expect_match "www without index.html: E0816 naming it" "$(head -2 "$TMP/e" | tr '\n' ' ')" \
	"^error\\[E0816\\]: invalid configuration   --www: '$TMP/www-empty' has no index.html"
"$BIN/eulernpud" --socket "$TMP/w.sock" --cache "$TMP/w.cache" --www "$TMP/none-such" \
	</dev/null >"$TMP/o" 2>"$TMP/e"; rc=$?
expect_eq "--www DIR that is missing: the daemon does not start, exit 2" "$rc" 2
expect_match "... with E0816 naming the directory" "$(cat "$TMP/e")" "--www: cannot read the status page's directory '$TMP/none-such'"
out=$("$BIN/eulernpud" --check-config --www none 2>&1); rc=$?
expect_eq "--www none: OK" "$rc $out" "0 eulernpud: configuration OK"

# ---- the file is applied; flags override it -----------------------------------------------------------
start_daemon c --config "$TMP/good.yaml" || { finish; exit 1; }
st c "$TMP/h.json" $U/v1/health >/dev/null
expect_eq "config applied: workers 1" "$(jget "$TMP/h.json" workers)" 1
st c "$TMP/b.json" $U/v1/boards >/dev/null
expect_eq "config applied: boards b1, b2" "$(jget "$TMP/b.json" 'boards.*.name')" "b1 b2"
stop_daemon c
start_daemon c --config "$TMP/good.yaml" --workers 2 --board b9=http://127.0.0.1:9 || { finish; exit 1; }
st c "$TMP/h.json" $U/v1/health >/dev/null
expect_eq "flag overrides the file: workers 2" "$(jget "$TMP/h.json" workers)" 2
st c "$TMP/b.json" $U/v1/boards >/dev/null
expect_eq "--board replaces the file's boards" "$(jget "$TMP/b.json" 'boards.*.name')" "b9"
stop_daemon c

# ---- limits: each has a setting and a clear error ------------------------------------------------
start_daemon l --max-json-bytes 1000 --max-json-depth 8 --max-spec-bytes 3000 --max-yaml-depth 6 \
	--max-yaml-nodes 200 --max-tensor-elems 100 --max-upload 100000 || { finish; exit 1; }
"$PY" -c "print('{\"digests\":[' + ','.join(['\"a\"']*300) + ']}')" >"$TMP/big.json"
expect_eq "JSON body past --max-json-bytes: 413" \
	"$(st l "$TMP/e.json" -H 'Content-Type: application/json' --data-binary @"$TMP/big.json" $U/v1/blobs/missing)" 413
expect_match "JSON body: E0802 naming the setting" "$(jget "$TMP/e.json" error.code) $(jget "$TMP/e.json" error.message)" \
	'^E0802 .*--max-json-bytes'
"$PY" -c "print('{\"digests\":' + '['*20 + ']'*20 + '}')" >"$TMP/deep.json"
expect_eq "JSON nesting past --max-json-depth: 413" \
	"$(st l "$TMP/e.json" -H 'Content-Type: application/json' --data-binary @"$TMP/deep.json" $U/v1/blobs/missing)" 413
expect_match "JSON nesting: names the setting" "$(jget "$TMP/e.json" error.message)" '--max-json-depth'
head -c 4000 /dev/zero | tr '\0' '#' >"$TMP/bigspec.yaml"
expect_eq "spec past --max-spec-bytes: 413" \
	"$(st l "$TMP/e.json" -H 'Content-Type: application/yaml' --data-binary @"$TMP/bigspec.yaml" $U/v1/validate)" 413
expect_match "spec bytes: names the setting" "$(jget "$TMP/e.json" error.message)" '--max-spec-bytes'
printf 'eulernpu: 1\nname: a\nx: [[[[[[[[[[1]]]]]]]]]]\n' >"$TMP/deepspec.yaml"
expect_eq "YAML nesting past --max-yaml-depth: 413" \
	"$(st l "$TMP/e.json" -H 'Content-Type: application/yaml' --data-binary @"$TMP/deepspec.yaml" $U/v1/validate)" 413
expect_eq "YAML nesting: E0004" "$(jget "$TMP/e.json" error.code)" E0004
printf 'eulernpu: 1\nname: a\na: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b]\n' >"$TMP/bomb.yaml"
expect_eq "alias expansion past --max-yaml-nodes: 413" \
	"$(st l "$TMP/e.json" -H 'Content-Type: application/yaml' --data-binary @"$TMP/bomb.yaml" $U/v1/validate)" 413
expect_match "alias expansion: E0004 naming the alias" "$(jget "$TMP/e.json" error.code) $(jget "$TMP/e.json" error.message)" "^E0004 .*alias"
expect_eq "tensor past --max-tensor-elems: 413" \
	"$(st l "$TMP/e.json" -H 'Content-Type: application/yaml' --data-binary @"$M/spec.yaml" $U/v1/validate)" 413
expect_match "tensor elements: E0004 naming the weight" "$(jget "$TMP/e.json" error.code) $(jget "$TMP/e.json" error.message)" "^E0004 weight 'fc1.w'"
head -c 200000 /dev/zero >"$TMP/big.bin"
expect_eq "upload past --max-upload: 413" \
	"$(st l "$TMP/e.json" -T "$TMP/big.bin" $U/v1/blobs/$(sha256sum "$TMP/big.bin" | cut -d' ' -f1))" 413
stop_daemon l
# npz members and bytes: the weights file of tiny_mlp has 4 members, 800+ bytes
start_daemon n --max-npz-members 3 || { finish; exit 1; }
expect_eq "npz past --max-npz-members: 4xx" \
	"$(st n "$TMP/e.json" -F spec=@"$M/spec.yaml" -F weights=@"$M/weights.npz" $U/v1/compile)" 413
expect_match "npz members: E0004" "$(jget "$TMP/e.json" error.code) $(jget "$TMP/e.json" error.message)" "^E0004 "
stop_daemon n
start_daemon n --max-npz-bytes 300 || { finish; exit 1; }
expect_eq "npz past --max-npz-bytes: 413" \
	"$(st n "$TMP/e.json" -F spec=@"$M/spec.yaml" -F weights=@"$M/weights.npz" $U/v1/compile)" 413
expect_match "npz bytes: E0004" "$(jget "$TMP/e.json" error.code)" "^E0004"
stop_daemon n
start_daemon n --request-timeout 1 || { finish; exit 1; }
# a client that trickles its body: one byte every 0.3 s of 40 announced
out=$("$PY" - "$TMP/n.sock" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(20)
s.sendall(b"PUT /v1/blobs/" + b"0" * 64 + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n")
try:
    for i in range(40):
        s.sendall(b"x"); time.sleep(0.3)
        if i > 10:
            s.settimeout(0.01)
            try:
                if s.recv(1) == b"": print("closed"); break
            except socket.timeout: pass
    else:
        print("not closed")
except (BrokenPipeError, ConnectionResetError):
    print("closed")
EOF
)
expect_eq "a body slower than --request-timeout: connection closed" "$out" closed
expect_match "request timeout logged" "$(cat "$TMP/n.log")" "within --request-timeout 1 s"
stop_daemon n
"$BIN/eulernpud" --max-json-depth 1 >/dev/null 2>"$TMP/e"; rc=$?
expect_eq "a limit out of range: exit 2" "$rc" 2

# ---- SIGHUP: tokens and boards reloaded ----------------------------------------------------------------
printf 'old-token-1234 user ci\n' >"$TMP/tokens"
chmod 600 "$TMP/tokens"
cat >"$TMP/srv.yaml" <<EOF
listen: 127.0.0.1:0
port-file: $TMP/h.port
tokens: $TMP/tokens
boards:
  - b1=http://127.0.0.1:9
EOF
start_daemon h --config "$TMP/srv.yaml" || { finish; exit 1; }
T=http://127.0.0.1:$(cat "$TMP/h.port")
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" $T/v1/backends; }
expect_eq "tokens from the config file: old token 200" "$(code old-token-1234)" 200
expect_eq "new token 401 before the reload" "$(code new-token-5678)" 401
printf 'new-token-5678 admin ops\n' >"$TMP/tokens"
cat >"$TMP/srv.yaml" <<EOF
listen: 127.0.0.1:0
port-file: $TMP/h.port
tokens: $TMP/tokens
boards:
  - {name: b2, url: "http://127.0.0.1:10"}
  - b3=unix:/nonexistent.sock
EOF
kill -HUP "$(daemon_pid h)"
until_eq "SIGHUP: the old token is refused (401)" 401 code old-token-1234
expect_eq "SIGHUP: the new token works" "$(code new-token-5678)" 200
boards() { curl -s -H "Authorization: Bearer new-token-5678" $T/v1/boards |
	jget - 'boards.*.name'; }
until_eq "SIGHUP: boards reloaded (b1 gone, b2 b3 added)" "b2 b3" boards
chmod 644 "$TMP/tokens"
kill -HUP "$(daemon_pid h)"
sleep 0.5
expect_eq "SIGHUP with a world-readable token file: the old table stays" "$(code new-token-5678)" 200
expect_match "the refused reload is logged" "$(cat "$TMP/h.log")" "tokens kept as they were"
expect_eq "no token in the log" "$(grep -c -e old-token-1234 -e new-token-5678 "$TMP/h.log")" 0
stop_daemon h

# ---- SIGTERM drains --------------------------------------------------------------------------------------
# Job 1 is held running (EULERNPUD_HOLD, server/fault.h) until the drain
# has been seen; then both jobs may end.
make_slow_model "$TMP/slow"
hold
EULERNPUD_HOLD=$HOLD start_daemon d --workers 1 || { finish; exit 1; }
st d "$TMP/c.json" -F spec=@"$TMP/slow/spec.yaml" -F weights=@"$TMP/slow/weights.npz" $U/v1/compile >/dev/null
A=$(jget "$TMP/c.json" artifact)
st d "$TMP/j1.json" -F artifact=$A -F input=@"$TMP/slow/input.npz" $U/v1/jobs >/dev/null
st d "$TMP/j2.json" -F artifact=$A -F input=@"$TMP/slow/input.npz" $U/v1/jobs >/dev/null
J1=$(jget "$TMP/j1.json" id)
J2=$(jget "$TMP/j2.json" id)
until_eq "slow job 1 is running" running jstate d "$J1"
# a long-poll for job 2 that must see it finish although the daemon is stopping
# (slow jobs under ASan on a busy machine take a minute each: no 60 s cap)
dcurl d --max-time 330 -o "$TMP/w2.json" "$U/v1/jobs/$J2?wait=300" &
W=$!
DP=$(daemon_pid d)
kill -TERM "$DP"
expect_eq "draining: a new job gets 503" \
	"$(st d "$TMP/e.json" -F artifact=$A -F input=@"$TMP/slow/input.npz" $U/v1/jobs)" 503
expect_match "draining: the 503 says the server is shutting down" "$(jget "$TMP/e.json" error.message)" "shutting down"
expect_match "draining: reads still work (job 1: 200 or 202 while running)" "$(st d /dev/null $U/v1/jobs/$J1)" '^20[02]$' 
# job 2 is queued behind the slow job 1 (one worker), so the drain is still
# going on: health says so with a 503 (a load balancer stops sending work)
health_status() { st d "$TMP/hd.json" $U/v1/health >/dev/null; jget "$TMP/hd.json" status; }
until_eq "draining: health's status is draining" draining health_status
expect_eq "draining: health answers 503" "$(st d "$TMP/hd.json" $U/v1/health)" 503
expect_eq "draining: health's 503 is its own body, not an error" "$(jget "$TMP/hd.json" role)" local
expect_eq "draining: job 1 is still running" "$(jstate d "$J1")" running
release
wait "$DP"; rc=$?
unset "T_PIDS[d]"
expect_eq "drained: the daemon exits 0" "$rc" 0
wait "$W"
expect_eq "drained: the waiting client saw job 2 succeed" "$(jget "$TMP/w2.json" state)" succeeded
expect_match "drained: the log says so" "$(cat "$TMP/d.log")" "drained: no jobs left"
expect_eq "drained: the socket is removed" "$([ -e "$TMP/d.sock" ] && echo there || echo gone)" gone

# ---- --drain-timeout bounds running jobs too -------------------------------------------------------
# Job 1 is held running and the gate stays closed to the end: only the
# drain's deadline (1 s) can stop it; job 2 is queued behind it.
hold
EULERNPUD_HOLD=$HOLD start_daemon t --workers 1 --drain-timeout 1 || { finish; exit 1; }
st t "$TMP/tc.json" -F spec=@"$M/spec.yaml" -F weights=@"$M/weights.npz" $U/v1/compile >/dev/null
TA=$(jget "$TMP/tc.json" artifact)
st t "$TMP/t1.json" -F artifact=$TA -F input=@"$M/input.npz" $U/v1/jobs >/dev/null
st t "$TMP/t2.json" -F artifact=$TA -F input=@"$M/input.npz" $U/v1/jobs >/dev/null
T1=$(jget "$TMP/t1.json" id)
T2=$(jget "$TMP/t2.json" id)
tstate() { dcurl t "$U/v1/jobs/$1" | jget - state; }
until_eq "drain-timeout: job 1 is held running" running tstate "$T1"
dcurl t --max-time 120 -o "$TMP/tw1.json" "$U/v1/jobs/$T1?wait=100" &
TW1=$!
dcurl t --max-time 120 -o "$TMP/tw2.json" "$U/v1/jobs/$T2?wait=100" &
TW2=$!
TP=$(daemon_pid t)
kill -TERM "$TP"
for _ in $(seq 600); do kill -0 "$TP" 2>/dev/null || break; sleep 0.1; done
expect_eq "drain-timeout: the daemon exits although job 1 was still held" \
	"$(kill -0 "$TP" 2>/dev/null && echo running || echo exited)" exited
kill -KILL "$TP" 2>/dev/null
wait "$TP"; rc=$?
unset "T_PIDS[t]"
expect_eq "drain-timeout: exit 0" "$rc" 0
wait "$TW1" "$TW2"
expect_eq "drain-timeout: the running job ends cancelled" "$(jget "$TMP/tw1.json" state)" cancelled
expect_match "drain-timeout: its error says the drain timed out while it ran" \
	"$(jget "$TMP/tw1.json" error.message)" "drain timed out \(--drain-timeout 1 s\) while job '$T1' ran"
expect_eq "drain-timeout: the queued job ends cancelled" "$(jget "$TMP/tw2.json" state)" cancelled
expect_match "drain-timeout: its error says so, before it started" \
	"$(jget "$TMP/tw2.json" error.message)" "drain timed out \(--drain-timeout 1 s\) before job '$T2' started"
expect_match "drain-timeout: the log says when the deadline came" "$(cat "$TMP/t.log")" \
	"drain timeout \(1 s\): the queued jobs are cancelled"
expect_match "drain-timeout: the log says why it stopped" "$(cat "$TMP/t.log")" \
	"drain timed out: the jobs left were cancelled"
expect_eq "drain-timeout: the gate was never opened" "$([ -e "$HOLD" ] && echo closed || echo open)" closed
release

# ---- socket activation ------------------------------------------------------------------------------------
if command -v systemd-socket-activate >/dev/null; then
	systemd-socket-activate -l "$TMP/act.sock" "$BIN/eulernpud" --cache "$TMP/act.cache" \
		--log "$TMP/act.log" </dev/null >/dev/null 2>"$TMP/act.stderr" &
	AP=$!
	EXTRA_PIDS+=("$AP")
	for _ in $(seq 100); do [ -S "$TMP/act.sock" ] && break; sleep 0.05; done
	expect_eq "systemd-socket-activate (Unix): health 200" \
		"$(curl -s --max-time 20 --unix-socket "$TMP/act.sock" -o /dev/null -w '%{http_code}' $U/v1/health)" 200
	expect_match "activation: the daemon served the handed socket" "$(cat "$TMP/act.log")" "socket activation: serving fd 3 \\(unix\\)"
	kill -TERM "$AP"; wait "$AP"
	expect_eq "activation: the socket file is systemd's, left in place" "$([ -S "$TMP/act.sock" ] && echo kept)" kept
else
	skip no-systemd-socket-activate "systemd-socket-activate is not installed (apt-get install systemd): socket activation (Unix) NOT tried"
fi
# TCP, LISTEN_FDS set by hand: a listening socket on fd 3, then exec (same pid)
"$PY" - "$BIN/eulernpud" "$TMP" <<'EOF' &
import os, socket, sys
b, tmp = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0)); s.listen(16)
open(tmp + "/tcpact.port", "w").write(str(s.getsockname()[1]))
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
os.execve(b, [b, "--cache", tmp + "/tcpact.cache", "--log", tmp + "/tcpact.log"], env)
EOF
TP=$!
EXTRA_PIDS+=("$TP")
for _ in $(seq 100); do [ -s "$TMP/tcpact.port" ] && break; sleep 0.05; done
expect_eq "LISTEN_FDS by hand (TCP): health 200" \
	"$(curl -s --max-time 20 -o /dev/null -w '%{http_code}' http://127.0.0.1:$(cat "$TMP/tcpact.port")/v1/health)" 200
expect_match "LISTEN_FDS by hand: the log names the tcp socket" "$(cat "$TMP/tcpact.log")" "serving fd 3 \\(tcp\\)"
expect_eq "LISTEN_FDS: no default Unix socket made" "$(grep -c 'listening on /' "$TMP/tcpact.log")" 0
kill -TERM "$TP"; wait "$TP"; rc=$?
expect_eq "activated daemon: SIGTERM exit 0" "$rc" 0

expect_eq "no sanitizer reports from the daemons" \
	"$(cat "$TMP"/*.stderr 2>/dev/null | grep -c -e 'runtime error' -e 'Sanitizer')" 0

finish
