#!/usr/bin/env bash
# systemd.sh: the units (systemd/), make install, the man pages and the bash
# completion. systemd-analyze verify accepts each unit (installed with a
# PREFIX whose binary exists: verify wants one, and finds the man pages its
# Documentation= names through MANPATH); the units keep their hardening;
# the board agent's and the lab server's command lines start real daemons;
# make install puts exactly the expected files under DESTDIR; the man pages
# render without warnings and name every verb and option of --help; the
# completion offers every verb and option.
. "$(dirname "$0")/lib.sh"

UNIT=$ROOT/systemd/eulernpud-board.service

# The ExecStart line with its continuations joined, program dropped.
exec_args() {
	sed -n '/^ExecStart=/,/[^\\]$/p' "$1" | sed 's/\\$//' | tr -d '\n\t' | sed 's/^ExecStart=[^ ]*//'
}

if command -v systemd-analyze >/dev/null; then
	mkdir -p "$TMP/unit"
	sed "s|^ExecStart=/usr/local/bin/eulernpud|ExecStart=$BIN/eulernpud|" "$UNIT" \
		>"$TMP/unit/eulernpud-board.service"
	out=$(systemd-analyze verify "$TMP/unit/eulernpud-board.service" 2>&1)
	expect_eq "systemd-analyze verify: the unit is clean (exit 0, no warnings)" "$?:$out" "0:"
	# a misspelt key must show up, or the check above would prove nothing
	sed 's/^ProtectSystem=/ProtectSystm=/' "$TMP/unit/eulernpud-board.service" \
		>"$TMP/unit/eulernpud-typo.service"
	expect_match "systemd-analyze verify notices a misspelt key" \
		"$(systemd-analyze verify "$TMP/unit/eulernpud-typo.service" 2>&1)" "Unknown key 'ProtectSystm'"
else
	skip no-systemd-analyze "systemd-analyze is not installed (apt-get install systemd): the board unit was NOT verified"
fi

for d in 'Type=notify' 'NotifyAccess=main' 'DynamicUser=yes' 'CacheDirectory=eulernpu' 'StateDirectory=eulernpu' \
	'ProtectSystem=strict' 'ProtectHome=yes' 'NoNewPrivileges=yes' 'PrivateTmp=yes' \
	'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' 'Restart=on-failure' \
	'LoadCredential=board.token:/etc/eulernpu/board.token' 'WantedBy=multi-user.target'; do
	check "the unit sets $d" grep -qx "$d" "$UNIT"
done
args=$(exec_args "$UNIT")
expect_match "ExecStart runs the board role on port 7878 with the token and a bounded cache" "$args" \
	'--role board --listen 0\.0\.0\.0:7878 --token-file \$\{CREDENTIALS_DIRECTORY\}/board\.token --cache /var/cache/eulernpu --cache-max 2147483648 --pl emulated'

# the same command line, with the paths moved into $TMP and a free port
echo "lab-secret" >"$TMP/board.token"
chmod 600 "$TMP/board.token"
args=${args//0.0.0.0:7878/127.0.0.1:0}
args=${args//'${CREDENTIALS_DIRECTORY}/board.token'/$TMP/board.token}
args=${args//\/var\/cache\/eulernpu/$TMP/board.cache}
args=${args//\/var\/log\/eulernpu\/board.log/$TMP/board.log}
# shellcheck disable=SC2086  # the unit's arguments, split as systemd splits them
"$BIN/eulernpud" $args --port-file "$TMP/board.port" </dev/null >/dev/null 2>"$TMP/board.stderr" &
EXTRA_PIDS+=($!)
pid=$!
port=
for _ in $(seq 200); do
	port=$(cat "$TMP/board.port" 2>/dev/null)
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
health=$(curl -s --max-time 10 "http://127.0.0.1:${port:-1}/v1/health")
expect_match "the unit's command line starts a board agent with the emulated PL" "$health" \
	'"role": ?"board".*"pl": ?"emulated'
expect_eq "the board agent wants the unit's token (GET /v1/backends: 401 without, 200 with)" \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:${port:-1}/v1/backends") $(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H 'Authorization: Bearer lab-secret' "http://127.0.0.1:${port:-1}/v1/backends")" \
	"401 200"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
expect_eq "the board agent stops cleanly on SIGTERM" "$?" 0

# make install DESTDIR=... PREFIX=/opt/enpu: exactly these files
# (-o all: install what is built, build nothing here)
if make -s --no-print-directory -C "$ROOT" -o all install DESTDIR="$TMP/root" \
	PREFIX=/opt/enpu >"$TMP/install.out" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/opt/enpu"
else
	notok "make install"
	sed 's/^/    | /' "$TMP/install.out" | head -10
fi
docs=$(cd "$ROOT" && for f in README.md docs/*.md; do printf './opt/enpu/share/doc/eulernpu/%s\n' "${f#docs/}"; done | sort | tr '\n' ' ')
www=$(cd "$ROOT/server/www" && ls | grep -E '\.(html|css|js|svg|png|ico|txt)$' |
	sed 's|^|./opt/enpu/share/eulernpu/www/|' | sort | tr '\n' ' ')
expect_eq "make install installs programs, man pages, completion, units, sysusers entry, example config, documents, status page" \
	"$(cd "$TMP/root" && find . -type f | sort | tr '\n' ' ')" \
	"./etc/eulernpu/eulernpud.yaml.example ./opt/enpu/bin/eulernpu ./opt/enpu/bin/eulernpud ./opt/enpu/lib/systemd/system/eulernpud-board.service ./opt/enpu/lib/systemd/system/eulernpud.service ./opt/enpu/lib/systemd/system/eulernpud.socket ./opt/enpu/lib/sysusers.d/eulernpu.conf ./opt/enpu/share/bash-completion/completions/eulernpu ${docs}${www}./opt/enpu/share/man/man1/eulernpu.1.gz ./opt/enpu/share/man/man5/eulernpu-spec.5.gz ./opt/enpu/share/man/man8/eulernpud.8.gz "
check "the installed spec format is the repository's" cmp "$TMP/root/opt/enpu/share/doc/eulernpu/spec-format.md" \
	"$ROOT/docs/spec-format.md"
check "it installs eulernpud and eulernpu executable" test -x "$TMP/root/opt/enpu/bin/eulernpud" -a \
	-x "$TMP/root/opt/enpu/bin/eulernpu"
inst=$TMP/root/opt/enpu/lib/systemd/system
for u in eulernpud-board.service eulernpud.service; do
	expect_eq "the installed $u starts /opt/enpu/bin/eulernpud and is otherwise the same" \
		"$(grep -c '^ExecStart=/opt/enpu/bin/eulernpud ' "$inst/$u" 2>/dev/null):$(sed 's|/opt/enpu/bin/|/usr/local/bin/|' "$inst/$u" 2>/dev/null | cmp - "$ROOT/systemd/$u" >/dev/null && echo same)" \
		"1:same"
done
check "the installed socket unit is the source's" cmp "$inst/eulernpud.socket" "$ROOT/systemd/eulernpud.socket"
# a gzip header's bytes 4..7 are the time stamp; gzip -n writes zeros
expect_eq "man pages are gzip -n (no name, no time stamp: reproducible)" \
	"$(od -An -tx1 -j4 -N4 "$TMP/root/opt/enpu/share/man/man8/eulernpud.8.gz" | tr -d ' '):$(gzip -dc "$TMP/root/opt/enpu/share/man/man8/eulernpud.8.gz" | cmp - "$ROOT/server/eulernpud.8" && echo same)" \
	"00000000:same"
# the installed daemon finds its page beside it (../share/eulernpu/www)
"$TMP/root/opt/enpu/bin/eulernpud" --socket "$TMP/inst.sock" --cache "$TMP/inst.cache" \
	--log "$TMP/inst.log" </dev/null >/dev/null 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 200); do
	curl -sf --max-time 2 --unix-socket "$TMP/inst.sock" http://localhost/v1/health >/dev/null 2>&1 && break
	sleep 0.05
done
expect_eq "the installed daemon serves its installed status page at /" \
	"$(curl -s --max-time 5 --unix-socket "$TMP/inst.sock" http://localhost/ | cmp - "$ROOT/server/www/index.html" && echo same)" same
expect_match "... which it found in ../share/eulernpu/www" "$(cat "$TMP/inst.log")" \
	"status page: [0-9]+ files from $TMP/root/opt/enpu/share/eulernpu/www"
kill -TERM "${EXTRA_PIDS[-1]}" 2>/dev/null
check "make install-board still works (the same install)" make -s --no-print-directory -C "$ROOT" -o all \
	install-board DESTDIR="$TMP/root2" PREFIX=/opt/enpu
check "make uninstall removes every installed file" make -s --no-print-directory -C "$ROOT" -o all \
	uninstall DESTDIR="$TMP/root2" PREFIX=/opt/enpu
expect_eq "nothing but directories is left after uninstall" "$(find "$TMP/root2" -type f | wc -l)" 0

# systemd-analyze verify on the three units, installed with a real PREFIX
if command -v systemd-analyze >/dev/null; then
	make -s --no-print-directory -C "$ROOT" -o all install PREFIX="$TMP/prefix" \
		SYSCONFDIR="$TMP/prefix/etc" >"$TMP/install2.out" 2>&1
	for u in eulernpud.service eulernpud.socket eulernpud-board.service; do
		out=$(cd "$TMP/prefix/lib/systemd/system" && MANPATH="$TMP/prefix/share/man" \
			systemd-analyze verify "./$u" 2>&1)
		expect_eq "systemd-analyze verify $u: clean (exit 0, no warnings, its man pages found)" "$?:$out" "0:"
	done
else
	skip no-systemd-analyze "systemd-analyze is not installed (apt-get install systemd): the lab server's units were NOT verified"
fi

# the lab server's units
SVC=$ROOT/systemd/eulernpud.service
SOCK=$ROOT/systemd/eulernpud.socket
for d in 'Type=notify' 'NotifyAccess=main' 'User=eulernpu' 'StateDirectory=eulernpu' 'CacheDirectory=eulernpu' 'LogsDirectory=eulernpu' \
	'ConfigurationDirectory=eulernpu' 'ProtectSystem=strict' 'ProtectHome=yes' 'NoNewPrivileges=yes' \
	'PrivateTmp=yes' 'PrivateDevices=yes' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
	'ExecReload=/bin/kill -HUP $MAINPID' 'KillSignal=SIGTERM' 'TimeoutStopSec=11min' \
	'ExecStart=/usr/local/bin/eulernpud --role server --config /etc/eulernpu/eulernpud.yaml'; do
	check "eulernpud.service sets $d" grep -qxF "$d" "$SVC"
done
for d in 'ListenStream=7878' 'ListenStream=/run/eulernpu/eulernpud.sock' 'SocketGroup=eulernpu' \
	'SocketMode=0660' 'Service=eulernpud.service' 'WantedBy=sockets.target'; do
	check "eulernpud.socket sets $d" grep -qxF "$d" "$SOCK"
done
# the drain must end before systemd's SIGKILL: --drain-timeout (default 600 s) < TimeoutStopSec
expect_eq "TimeoutStopSec (11 min) outlasts the default --drain-timeout (600 s)" \
	"$("$BIN/eulernpud" --help | grep -c -- '--drain-timeout S .*' ):$("$BIN/eulernpud" --help | grep -A1 -- '--drain-timeout' | grep -o 'default 600')" \
	"1:default 600"

# the example config is valid (paths moved into $TMP)
cfg=$TMP/eulernpud.yaml
printf 'tok-user-0123456789 user ci\n' >"$TMP/tokens"
chmod 0640 "$TMP/tokens"
sed -e "s|/etc/eulernpu/tokens|$TMP/tokens|" -e "s|/var/cache/eulernpu|$TMP/lab.cache|" \
	"$ROOT/systemd/eulernpud.yaml.example" >"$cfg"
if ! "$BIN/eulernpud" --help | grep -q -- '--log-level'; then
	echo "# NOTE: this eulernpud has no --log-level yet: checking the example without it"
	sed -i '/^log-level:/d' "$cfg"
fi
check "eulernpud --check-config accepts the example config" "$BIN/eulernpud" --check-config --config "$cfg"

# the lab server as the unit starts it (its --config, flags moved into $TMP)
sed -i -e "s|^listen: .*|listen: 127.0.0.1:0|" "$cfg"
"$BIN/eulernpud" --role server --config "$cfg" --port-file "$TMP/lab.port" \
	</dev/null >/dev/null 2>"$TMP/lab.stderr" &
EXTRA_PIDS+=($!)
pid=$!
port=
for _ in $(seq 200); do
	port=$(cat "$TMP/lab.port" 2>/dev/null)
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
expect_match "the unit's command line starts a lab server" \
	"$(curl -s --max-time 10 "http://127.0.0.1:${port:-1}/v1/health")" '"role": ?"server"'
expect_eq "the lab server wants a token on TCP (401 without, 200 with)" \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:${port:-1}/metrics") $(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H 'Authorization: Bearer tok-user-0123456789' "http://127.0.0.1:${port:-1}/metrics")" \
	"401 200"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
expect_eq "the lab server stops cleanly on SIGTERM" "$?" 0
check "its stderr log has no token" bash -c "! grep -q tok-user-0123456789 '$TMP/lab.stderr'"

# start_notify NAME: a service manager's notification socket, $TMP/NAME.notify
# (a Unix datagram socket, as systemd's NOTIFY_SOCKET); each datagram becomes
# one line of $TMP/NAME.notified, its newlines as "|". When a datagram says
# READY=1 the listener asks GET /v1/health on $TMP/NAME.sock at once and adds
# "answers=yes" or "answers=no": READY must come after the socket answers.
start_notify() {
	cat >"$TMP/notify.py" <<'EOF'
import socket, sys
path, out, daemon = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    while True:
        m = s.recv(65536).decode(errors="replace")
        line = m.replace("\n", "|")
        if "READY=1" in m.split("\n"):
            try:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.settimeout(10)
                c.connect(daemon)
                c.sendall(b"GET /v1/health HTTP/1.0\r\nHost: x\r\n\r\n")
                got = b""
                while b"\r\n" not in got:
                    more = c.recv(256)
                    if not more:
                        break
                    got += more
                c.close()
                first = got.decode(errors="replace").split("\r\n")[0]
                line += " answers=" + ("yes" if " 200 " in first + " " else "no(%s)" % first.replace(" ", "_"))
            except OSError as e:
                line += " answers=no(%s)" % str(e).replace(" ", "_")
        f.write(line + "\n")
EOF
	: >"$TMP/$1.notified"
	"$PY" "$TMP/notify.py" "$TMP/$1.notify" "$TMP/$1.notified" "$TMP/$1.sock" &
	EXTRA_PIDS+=($!)
	for _ in $(seq 100); do [ -S "$TMP/$1.notify" ] && break; sleep 0.05; done
}
notified() { cat "$TMP/$1.notified"; }
# wait_notified NAME N: until NAME's listener has N lines (10 s at most)
wait_notified() {
	for _ in $(seq 200); do
		[ "$(wc -l <"$TMP/$1.notified")" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# Type=notify: READY=1 once the socket answers, RELOADING=1 then READY=1
# around a SIGHUP, STOPPING=1 when SIGTERM starts the drain; each with a
# STATUS= line (systemctl status shows it).
start_notify nd
NOTIFY_SOCKET=$TMP/nd.notify "$BIN/eulernpud" --config none --socket "$TMP/nd.sock" \
	--cache "$TMP/nd.cache" --log "$TMP/nd.log" </dev/null >/dev/null 2>"$TMP/nd.stderr" &
pid=$!
EXTRA_PIDS+=("$pid")
wait_notified nd 1
expect_eq "Type=notify: the first notification is READY=1 with a STATUS line, sent when the socket answers" \
	"$(head -1 "$TMP/nd.notified")" "READY=1|STATUS=serving 0 jobs, 0 queued answers=yes"
kill -HUP "$pid"
wait_notified nd 3
expect_eq "SIGHUP: RELOADING=1 (with STATUS=reloading and MONOTONIC_USEC), then READY=1 again" \
	"$(sed -n '2,3p' "$TMP/nd.notified" | sed 's/MONOTONIC_USEC=[0-9][0-9]*/MONOTONIC_USEC=N/' | tr '\n' ' ')" \
	"RELOADING=1|STATUS=reloading|MONOTONIC_USEC=N READY=1|STATUS=serving 0 jobs, 0 queued answers=yes "
kill -TERM "$pid"
wait "$pid"
expect_eq "the notified daemon stops cleanly on SIGTERM" "$?" 0
wait_notified nd 4
expect_eq "SIGTERM: STOPPING=1 with STATUS=draining (and the job counts)" \
	"$(sed -n 4p "$TMP/nd.notified")" "STOPPING=1|STATUS=draining: 0 running, 0 queued"
wait_notified nd 5
expect_eq "the whole sequence: READY, RELOADING, READY, STOPPING (drain), STOPPING (stopped), nothing else" \
	"$(cut -d'|' -f1 "$TMP/nd.notified" | tr '\n' ' ')|$(tail -1 "$TMP/nd.notified")" \
	"READY=1 RELOADING=1 READY=1 STOPPING=1 STOPPING=1 |STOPPING=1|STATUS=stopping"

# socket activation as eulernpud.socket does it (systemd-socket-activate
# binds, then execs the daemon with LISTEN_FDS when a client connects)
if command -v systemd-socket-activate >/dev/null; then
	start_notify act
	systemd-socket-activate -l "$TMP/act.sock" --fdname=lab -E NOTIFY_SOCKET="$TMP/act.notify" \
		"$BIN/eulernpud" --role server --config none \
		--cache "$TMP/act.cache" </dev/null >/dev/null 2>"$TMP/act.stderr" &
	ap=$!
	EXTRA_PIDS+=("$ap")
	for _ in $(seq 100); do [ -S "$TMP/act.sock" ] && break; sleep 0.05; done
	expect_match "socket-activated: the daemon answers on the socket it was handed" \
		"$(curl -s --max-time 20 --unix-socket "$TMP/act.sock" http://localhost/v1/health)" '"role": ?"server"'
	# the listener asks the socket on READY=1: let it have its answer
	# before the daemon is stopped (else it may see the stop, not READY)
	wait_notified act 1
	kill -TERM "$ap" 2>/dev/null
	wait "$ap"
	expect_eq "the socket-activated daemon stops cleanly on SIGTERM" "$?" 0
	check "it logged that it serves the socket from systemd" grep -q 'socket activation' "$TMP/act.stderr"
	check "it logged the socket's name from LISTEN_FDNAMES (--fdname=lab)" \
		grep -q 'socket activation: serving fd 3 (unix) name=lab$' "$TMP/act.stderr"
	expect_match "socket-activated: READY=1 (answering) then STOPPING=1" \
		"$(notified act | grep -o 'READY=1\|answers=[^ ]*\|STOPPING=1' | tr '\n' ' ')" \
		'^READY=1 answers=yes STOPPING=1 '
else
	skip no-systemd-socket-activate "systemd-socket-activate is not installed (apt-get install systemd): socket activation was NOT tried"
fi

# man pages: render clean, and name every option / verb of --help
for m in "$ROOT/server/eulernpud.8" "$ROOT/client/eulernpu.1"; do
	expect_eq "groff -ww -man renders $(basename "$m") without warnings" \
		"$(groff -ww -z -man "$m" 2>&1)" ""
	if command -v man >/dev/null; then
		expect_eq "man -l renders $(basename "$m") without warnings" \
			"$(MANWIDTH=80 man -l "$m" 2>&1 >/dev/null)" ""
	else
		skip no-man "man is not installed (apt-get install man-db): man -l NOT tried on $(basename "$m")"
	fi
done
# roff writes "-" as "\-": unescape, then look for each option as a word
man_text() { sed 's/\\-/-/g' "$1"; }
missing=
for o in $("$BIN/eulernpud" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
	man_text "$ROOT/server/eulernpud.8" | grep -qE -- "(^|[^a-z-])$o([^a-z0-9-]|$)" || missing="$missing $o"
done
expect_eq "eulernpud.8 describes every option of eulernpud --help" "${missing:-none}" none
verbs=$("$BIN/eulernpu" --help | sed -n '/^verbs:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
expect_match "eulernpu --help lists verbs" "$verbs" compile
missing=
for v in $verbs; do
	grep -qx "\.SS $v" "$ROOT/client/eulernpu.1" || missing="$missing $v"
done
expect_eq "eulernpu.1 has a section for every verb of eulernpu --help" "${missing:-none}" none
missing=
for o in $("$BIN/eulernpu" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
	man_text "$ROOT/client/eulernpu.1" | grep -qE -- "(^|[^a-z-])$o([^a-z0-9-]|$)" || missing="$missing $o"
done
for v in $verbs; do
	for o in $("$BIN/eulernpu" "$v" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		[ "$o" = --help ] && continue
		man_text "$ROOT/client/eulernpu.1" | grep -qE -- "(^|[^a-z-])$o([^a-z0-9-]|$)" || missing="$missing $v:$o"
	done
done
expect_eq "eulernpu.1 describes every option of eulernpu --help and of each VERB --help" "${missing:-none}" none

# bash completion: every verb, and every option of each verb
comp() {   # comp WORD...: the completions of the last word
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _eulernpu
		printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/client/eulernpu.bash" "$@"
}
expect_eq "completion offers exactly the verbs of eulernpu --help" \
	"$(comp "$BIN/eulernpu" "" | sort | tr '\n' ' ')" "$(printf '%s\n' $verbs | sort | tr '\n' ' ')"
missing=
for v in $verbs; do
	got=$(comp "$BIN/eulernpu" "$v" --)
	for o in $("$BIN/eulernpu" "$v" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qx -- "$o" <<<"$got" || missing="$missing $v:$o"
	done
done
expect_eq "completion offers every option of each verb's --help" "${missing:-none}" none
expect_eq "completion of --backend lists the backends" "$(comp "$BIN/eulernpu" compile --backend n)" npu_sim
expect_eq "completion skips the global --server URL to find the verb" \
	"$(comp "$BIN/eulernpu" --server unix:/x compare --exa)" --exact

finish
