#!/usr/bin/env bash
# private.sh: private state and the private daemon's life (issue 12, points
# 2 and 4). A second local user (created here, removed at exit) plants a
# cache directory and owns a runtime directory: the daemon refuses both with
# E0816. Cache files are 0600/0700 whatever the umask; one daemon per cache.
# The client tells a live daemon by its pid file's lock: a stale pid file
# naming a live process or a zombie does not wedge it; a daemon exiting for
# idleness while a client loops never fails a call; a daemon that dies at
# start-up is reported with its first error line (exit 2 for a bad cache);
# `eulernpu daemon status|stop`; a daemon of another version is restarted.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
D=$BIN/eulernpud
M=$EX/tiny_mlp
VER=$("$CLI" version --json | sed -n 's/.*"client": *"\([^"]*\)".*/\1/p')
umask 022

# priv RT XC ARGS...: the client with no server configured, runtime
# directory RT, cache XDG_CACHE_HOME XC.
priv() {
	local rt=$1 xc=$2; shift 2
	env -u EULERNPU_SERVER -u EULERNPU_IDLE_EXIT XDG_RUNTIME_DIR="$rt" XDG_CACHE_HOME="$xc" \
		timeout 20 "$CLI" "$@"
}
# rt_pid RT: the pid of the daemon in runtime directory RT into RPID,
# remembered for cleanup.
rt_pid() {
	RPID=$(cat "$1/eulernpu/eulernpud.pid" 2>/dev/null)
	[ -n "$RPID" ] && EXTRA_PIDS+=("$RPID")
}
# stale WHAT PID: a pid file in $RT naming PID, whose lock nobody holds: a
# call starts a fresh daemon at once (its pid into RPID).
stale() {
	echo "$2" >"$RT/eulernpu/eulernpud.pid"
	priv "$RT" "$TMP/xc1" backends >/dev/null 2>&1
	expect_eq "stale pid file naming $1: the call succeeds" "$?" 0
	rt_pid "$RT"
	check "  ...a fresh daemon was started (pid $RPID, not $2)" test -n "$RPID" -a "$RPID" != "$2"
}

# gone PID: no such process, or a zombie (its parent, maybe not us, has
# not reaped it yet)
gone() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
	[ -z "$st" ] || [ "$st" = Z ]
}

# ---- a second local user ------------------------------------------------------------------------------------------
ATK=enpuatk$$
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && command -v runuser >/dev/null; then
	trap 'userdel "$ATK" >/dev/null 2>&1; cleanup' EXIT
	useradd -M -d /nonexistent -s /bin/sh "$ATK" 2>"$TMP/useradd.err" ||
		{ notok "useradd $ATK: $(cat "$TMP/useradd.err")"; finish; exit 1; }
	chmod 711 "$TMP"
	SH=$TMP/shared
	mkdir -m 1777 "$SH"
	me=$(id -u)
	# the attacker pre-creates the victim's fallback cache directory 0777
	# and plants an action-cache entry in it
	runuser -u "$ATK" -- sh -c "mkdir -m 0777 '$SH/eulernpu-cache-$me' && mkdir -m 0777 \
'$SH/eulernpu-cache-$me/ac' && echo planted >'$SH/eulernpu-cache-$me/ac/x'"
	expect_eq "the attacker owns the planted directory" \
		"$(stat -c %U "$SH/eulernpu-cache-$me" 2>/dev/null)" "$ATK"
	env -u HOME -u XDG_CACHE_HOME TMPDIR="$SH" timeout 10 "$D" --socket "$TMP/v.sock" \
		</dev/null >/dev/null 2>"$TMP/v.err"; rc=$?
	expect_eq "HOME unset, fallback cache planted by another user: exit 2" "$rc" 2
	expect_match "  ...the three-line error" "$(sed -n 1p "$TMP/v.err")" '^error\[E0816\]'
	expect_match "  ...naming the path and its owner" "$(sed -n 2p "$TMP/v.err")" \
		"^  $SH/eulernpu-cache-$me: the directory belongs to uid [0-9]+, not to the daemon's uid $me"
	expect_match "  ...and the fix" "$(sed -n 3p "$TMP/v.err")" '^  fix: remove it .*--cache DIR'
	check "  ...the victim's socket was never made" test ! -e "$TMP/v.sock"

	# a socket directory owned by the other user
	mkdir "$TMP/rtx" && chown "$ATK" "$TMP/rtx"
	timeout 10 "$D" --socket "$TMP/rtx/s.sock" --cache "$TMP/rtx.cache" </dev/null >/dev/null \
		2>"$TMP/rtx.err"; rc=$?
	expect_eq "socket directory owned by another user: exit 2" "$rc" 2
	expect_match "  ...E0816 naming it" "$(sed -n 1,2p "$TMP/rtx.err" | tr '\n' ' ')" \
		"^error\[E0816\].* $TMP/rtx: the directory belongs to uid"
	check "  ...no socket was bound in it" test ! -e "$TMP/rtx/s.sock"
	# ...and the client's runtime directory too
	mkdir -p "$TMP/rty/eulernpu" && chown "$ATK" "$TMP/rty/eulernpu"
	priv "$TMP/rty" "$TMP/rty.xc" backends >/dev/null 2>"$TMP/rty.err"; rc=$?
	expect_eq "client runtime directory owned by another user: exit 2" "$rc" 2
	expect_match "  ...naming it" "$(sed -n 2p "$TMP/rty.err")" "$TMP/rty/eulernpu: .*belongs to uid"
else
	skip private-no-root "not root (or no useradd/runuser): the second-user checks did NOT run"
fi

# a world-writable socket directory, and a world-writable cache
mkdir -m 0777 "$TMP/rtw"
timeout 10 "$D" --socket "$TMP/rtw/s.sock" --cache "$TMP/rtw.cache" </dev/null >/dev/null \
	2>"$TMP/rtw.err"; rc=$?
expect_eq "world-writable socket directory: exit 2" "$rc" 2
expect_match "  ...E0816, writable by everyone" "$(sed -n 2p "$TMP/rtw.err")" \
	"$TMP/rtw: the directory is writable by everyone"
mkdir -m 0770 "$TMP/gw.cache"
timeout 10 "$D" --socket "$TMP/gw.sock" --cache "$TMP/gw.cache" </dev/null >/dev/null \
	2>"$TMP/gw.err"; rc=$?
expect_eq "group-writable cache without --socket-group: exit 2" "$rc" 2
expect_match "  ...the fix names --socket-group" "$(sed -n 3p "$TMP/gw.err")" "chmod go-w .*--socket-group"

# ---- modes under umask 022 ----------------------------------------------------------------------------------------
start_daemon u || { finish; exit 1; }
EULERNPU_SERVER=unix:$TMP/u.sock timeout 60 "$CLI" compile --spec "$M/spec.yaml" \
	--weights "$M/weights.npz" --out "$TMP/u.art" >/dev/null 2>&1
EULERNPU_SERVER=unix:$TMP/u.sock timeout 60 "$CLI" run --artifact "$TMP/u.art" \
	--input "$M/input.npz" --out "$TMP/u.npz" >/dev/null 2>&1
n=$(find "$TMP/u.cache" -type f | wc -l)
check "umask 022: the cache holds files after a compile and a run ($n)" test "$n" -ge 5
expect_eq "umask 022: every cache file is 0600" \
	"$(find "$TMP/u.cache" -type f ! -perm 0600 -printf '%m %p\n')" ""
expect_eq "umask 022: every cache directory is 0700" \
	"$(find "$TMP/u.cache" -type d ! -perm 0700 -printf '%m %p\n')" ""
stop_daemon u
G=$(id -gn)
start_daemon g --socket-group "$G" --socket-mode 0660 || { finish; exit 1; }
EULERNPU_SERVER=unix:$TMP/g.sock timeout 60 "$CLI" compile --spec "$M/spec.yaml" \
	--weights "$M/weights.npz" --out "$TMP/g.art" >/dev/null 2>&1
expect_eq "--socket-group: cache files 0640" \
	"$(find "$TMP/g.cache" -type f ! -perm 0640 -printf '%m %p\n')" ""
expect_eq "--socket-group: cache directories 0750 (tmp/ stays 0700)" \
	"$(find "$TMP/g.cache" -path "$TMP/g.cache/tmp" -prune -o -type d ! -perm 0750 -printf '%m %p\n')" ""

# ---- one daemon per cache directory ---------------------------------------------------------------------------------
timeout 10 "$D" --socket "$TMP/g2.sock" --cache "$TMP/g.cache" </dev/null >/dev/null \
	2>"$TMP/g2.err"; rc=$?
expect_eq "a second daemon on the same cache: exit 2" "$rc" 2
expect_match "  ...naming the first's pid" "$(sed -n 2p "$TMP/g2.err")" \
	"another eulernpud \(pid $(daemon_pid g)\) is using this cache directory"
stop_daemon g

# ---- stale pid files ----------------------------------------------------------------------------------------------
RT=$TMP/rt1
mkdir -p -m 0700 "$RT/eulernpu"
sleep 100 &
SP=$!
EXTRA_PIDS+=("$SP")
stale "a live process" "$SP"
kill "$SP" 2>/dev/null
priv "$RT" "$TMP/xc1" daemon stop >/dev/null
# a zombie: a child its parent never reaps
/usr/bin/python3 -c 'import os, time
p = os.fork()
if p == 0:
    os._exit(0)
print(p, flush=True)
time.sleep(100)' >"$TMP/zombie" &
ZP=$!
EXTRA_PIDS+=("$ZP")
for _ in $(seq 100); do [ -s "$TMP/zombie" ] && break; sleep 0.05; done
Z=$(cat "$TMP/zombie")
for _ in $(seq 100); do [ "$(ps -o stat= -p "$Z" 2>/dev/null | cut -c1)" = Z ] && break; sleep 0.05; done
expect_eq "the planted pid is a zombie" "$(ps -o stat= -p "$Z" 2>/dev/null | cut -c1)" Z
stale "a zombie" "$Z"
p2=$RPID
kill "$ZP" 2>/dev/null

# ---- eulernpu daemon status | stop ------------------------------------------------------------------------------------
out=$(priv "$RT" "$TMP/xc1" daemon status); rc=$?
expect_eq "daemon status: exit 0" "$rc" 0
expect_match "daemon status: pid" "$(echo "$out" | grep '^pid')" "^pid +$p2$"
expect_match "daemon status: socket" "$out" "socket +$RT/eulernpu/eulernpud.sock"
expect_match "daemon status: version" "$out" "version +$VER"
expect_match "daemon status: uptime" "$out" "uptime +[0-9]+ s"
expect_match "daemon status: cache" "$out" "cache +$TMP/xc1/eulernpu"
expect_match "daemon status --json" "$(priv "$RT" "$TMP/xc1" daemon status --json | tr -d ' \n')" \
	"\"running\":true,\"pid\":$p2,"
out=$(priv "$RT" "$TMP/xc1" daemon stop); rc=$?
expect_eq "daemon stop: exit 0" "$rc" 0
expect_eq "daemon stop: says so" "$out" "eulernpud stopped (pid $p2)"
check "daemon stop: the daemon is gone when it returns" gone "$p2"
out=$(priv "$RT" "$TMP/xc1" daemon status); rc=$?
expect_eq "daemon status with none running: exit 1" "$rc" 1
expect_match "  ...says not running" "$out" "^eulernpud: not running"
expect_eq "daemon stop with none running: exit 0" "$(priv "$RT" "$TMP/xc1" daemon stop >/dev/null; echo $?)" 0

# ---- version mismatch ----------------------------------------------------------------------------------------------
EULERNPUD_TEST_VERSION=0.0.0-fake "$D" --socket "$RT/eulernpu/eulernpud.sock" \
	--pid-file "$RT/eulernpu/eulernpud.pid" --log "$RT/eulernpu/eulernpud.log" \
	--cache "$TMP/xc1/eulernpu" </dev/null >/dev/null 2>&1 &
FP=$!
EXTRA_PIDS+=("$FP")
for _ in $(seq 200); do
	curl -sf --unix-socket "$RT/eulernpu/eulernpud.sock" http://x/v1/health 2>/dev/null |
		grep -q 0.0.0-fake && break
	sleep 0.05
done
expect_match "a daemon of another version answers" \
	"$(curl -s --unix-socket "$RT/eulernpu/eulernpud.sock" http://x/v1/health)" '"version": ?"0.0.0-fake"'
out=$(priv "$RT" "$TMP/xc1" backends 2>&1); rc=$?
expect_eq "version mismatch: the call succeeds" "$rc" 0
rt_pid "$RT"
check "  ...the old daemon was stopped" gone "$FP"
check "  ...a new one runs (pid $RPID, not $FP)" test -n "$RPID" -a "$RPID" != "$FP"
expect_match "  ...of the client's version" "$(priv "$RT" "$TMP/xc1" daemon status)" "version +$VER"
priv "$RT" "$TMP/xc1" daemon stop >/dev/null

# ---- a daemon that dies at start-up ------------------------------------------------------------------------------------
mkdir -p "$TMP/badxc/eulernpu" && chmod 0777 "$TMP/badxc/eulernpu"
priv "$TMP/rt2" "$TMP/badxc" backends >/dev/null 2>"$TMP/bad.err"; rc=$?
expect_eq "bad cache directory: the client exits 2" "$rc" 2
expect_match "  ...with E0816" "$(sed -n 1p "$TMP/bad.err")" '^error\[E0816\]'
expect_match "  ...and the daemon's first error line" "$(sed -n 2p "$TMP/bad.err")" \
	"the private daemon did not start: $TMP/badxc/eulernpu: the directory is writable by everyone"
expect_match "  ...and its fix" "$(sed -n 3p "$TMP/bad.err")" "fix: chmod go-w"

# ---- idle exits while a client loops ----------------------------------------------------------------------------------
RT=$TMP/rt3
fails=0
for i in $(seq 300); do
	# every 25th call waits 0.5 s, far past the 30 ms: the daemon has
	# surely exited then (on a loaded machine calls alone may never leave
	# it idle that long); the calls between race its exits
	[ $((i % 25)) = 0 ] && sleep 0.5
	env -u EULERNPU_SERVER XDG_RUNTIME_DIR="$RT" XDG_CACHE_HOME="$TMP/xc3" EULERNPU_IDLE_EXIT=30ms \
		timeout 20 "$CLI" backends >/dev/null 2>>"$TMP/loop.err" || fails=$((fails + 1))
done
expect_eq "300 calls while the daemon exits for idleness (30 ms): no failure" "$fails" 0
n=$(grep -c 'level=info idle for' "$RT/eulernpu/eulernpud.log")
check "  ...the daemon did exit for idleness during the loop ($n times)" test "$n" -ge 2
rt_pid "$RT"
priv "$RT" "$TMP/xc3" daemon stop >/dev/null

finish
