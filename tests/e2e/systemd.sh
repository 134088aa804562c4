#!/usr/bin/env bash
# systemd.sh: the board agent's unit (systemd/eulernpud-board.service).
# systemd-analyze verify accepts it (a copy whose ExecStart points at this
# build's daemon: verify wants an existing binary), it keeps its hardening,
# and its ExecStart command line starts a real board agent.
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
	echo "# SKIP: systemd-analyze is not installed (apt-get install systemd): the unit was NOT verified"
fi

for d in 'DynamicUser=yes' 'CacheDirectory=eulernpu' 'StateDirectory=eulernpu' \
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

# make install-board: the programs and the unit, ExecStart following PREFIX
# (-o all: install what is built, build nothing here)
if make -s --no-print-directory -C "$ROOT" -o all install-board DESTDIR="$TMP/root" \
	PREFIX=/opt/enpu >"$TMP/install.out" 2>&1; then
	ok "make install-board DESTDIR=... PREFIX=/opt/enpu"
else
	notok "make install-board"
	sed 's/^/    | /' "$TMP/install.out" | head -10
fi
check "it installs eulernpud and eulernpu" test -x "$TMP/root/opt/enpu/bin/eulernpud" -a \
	-x "$TMP/root/opt/enpu/bin/eulernpu"
inst=$TMP/root/etc/systemd/system/eulernpud-board.service
expect_eq "the installed unit starts /opt/enpu/bin/eulernpud and is otherwise the same" \
	"$(grep -c '^ExecStart=/opt/enpu/bin/eulernpud ' "$inst" 2>/dev/null):$(sed 's|/opt/enpu/bin/|/usr/local/bin/|' "$inst" 2>/dev/null | cmp - "$UNIT" >/dev/null && echo same)" \
	"1:same"

finish
