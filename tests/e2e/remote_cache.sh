#!/usr/bin/env bash
# remote_cache.sh: the remote cache tier (--remote-cache) against nginx
# WebDAV on 127.0.0.1, as a lab server (A, readwrite, signing) and a CI
# runner (B, read only, another cache directory) would use it: A compiles
# tiny_cnn and a spec with 64 MiB of weights and uploads them; B gets
# cached: true for both without compiling, the client uploading no weights
# and the daemon fetching only the files it lacks; a tampered entry (a
# wrong signature, an untrusted signer, an entry pointing at other weights)
# is ignored, counted, and B compiles itself; nginx stopped mid-run makes
# compiles local only with health "degraded", and they recover when it
# returns. Prints B's remote hit vs a local compile of the 64 MiB spec,
# and the bytes transferred.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
U=http://localhost
NGINX=/usr/sbin/nginx
if [ ! -x "$NGINX" ]; then
	skip no-nginx "Debian's nginx-light is not installed (make bench-deps installs it)"
	finish
	exit
fi

# ---- nginx WebDAV: the remote ----------------------------------------------------------------
NP=$(free_port)
R=$TMP/remote
mkdir -p "$R/cas" "$R/ac"
chmod 777 "$R" "$R/cas" "$R/ac"   # nginx's workers (another user when root) write here
{ nginx_head "$TMP/nginx"; cat <<EOF; } >"$TMP/nginx.conf"
	server {
		listen 127.0.0.1:$NP;
		root $R;
		dav_methods PUT DELETE;
		create_full_put_path on;
		dav_access user:rw group:rw all:r;
		client_max_body_size 0;
	}
}
EOF
NGINX_PID=
start_nginx() {
	"$NGINX" -c "$TMP/nginx.conf" -p "$TMP/nginx" -g 'daemon off;' </dev/null >/dev/null \
		2>>"$TMP/nginx.err" &
	NGINX_PID=$!
	EXTRA_PIDS+=("$NGINX_PID")
	for _ in $(seq 100); do
		curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$NP/" && return 0
		sleep 0.05
	done
	return 1
}
stop_nginx() {
	kill -TERM "$NGINX_PID" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.05; done
	kill -KILL "$NGINX_PID" 2>/dev/null
	wait "$NGINX_PID" 2>/dev/null
}
start_nginx || { notok "nginx did not start: $(cat "$TMP/nginx.err")"; finish; exit 1; }
ok "nginx WebDAV serves the remote on 127.0.0.1:$NP"

# ---- keys and inputs ---------------------------------------------------------------------------
openssl genpkey -algorithm ed25519 -out "$TMP/a.key" 2>/dev/null && chmod 600 "$TMP/a.key"
openssl pkey -in "$TMP/a.key" -pubout -out "$TMP/a.pub" 2>/dev/null
openssl genpkey -algorithm ed25519 -out "$TMP/evil.key" 2>/dev/null && chmod 600 "$TMP/evil.key"
check "keys made" test -s "$TMP/a.pub" -a -s "$TMP/evil.key"

# big: one matmul, 4096 x 4096 float32 weights (64 MiB), deterministic values
mkdir -p "$TMP/big"
cat >"$TMP/big/spec.yaml" <<'EOF'
eulernpu: 1
name: big_fc
backend: cpu_ref
inputs:
  - {name: x, dtype: float32, shape: [1, 4096]}
outputs: [y]
weights:
  - {name: w, dtype: float32, shape: [4096, 4096]}
components:
  - name: main
    ops:
      - {name: fc, op: matmul, in: [x, w], out: y}
EOF
"$PY" -c 'import numpy as np, sys
w = (np.arange(4096 * 4096, dtype=np.uint32) % 251).astype("<f4").reshape(4096, 4096) / 251
np.savez(sys.argv[1] + "/weights.npz", w=w)
np.savez(sys.argv[1] + "/weights2.npz", w=w + 1)' "$TMP/big"
WBYTES=$(stat -c %s "$TMP/big/weights.npz")
check "64 MiB weights made" test "$WBYTES" -gt $((64 << 20))

# A: the lab server, readwrite, signing
start_daemon a --remote-cache "http://127.0.0.1:$NP/" --remote-cache-mode readwrite \
	--remote-cache-sign-key "$TMP/a.key" --remote-cache-backoff 1 || { finish; exit 1; }
# B: a CI runner, read only, trusting A's key, its own cache directory
start_daemon b --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-backoff 1 || { finish; exit 1; }

health() { dcurl "$1" "$U/v1/health" | jget - "remote_cache.$2"; }
metric() { dcurl "$1" "$U/metrics" | awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "none" }'; }
# compile NAME SPEC WEIGHTS OUT [extra]: through daemon NAME
compile() {
	local d=$1; shift
	EULERNPU_SERVER=unix:$TMP/$d.sock "$CLI" compile --spec "$1" --weights "$2" --out "$3" --json \
		>"$TMP/$d.compile.json" 2>"$TMP/$d.compile.err"
}
# until_ok N CMD...: CMD passes within N tenths of a second
until_ok() { local n=$1; shift; for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done; return 1; }
uploaded() { [ "$(metric a 'eulernpu_remote_cache_uploads_total{result="done"}')" = "$1" ]; }

expect_eq "health: A ok, readwrite" "$(health a state) $(health a mode)" "ok readwrite"
expect_eq "health: B ok, read" "$(health b state) $(health b mode)" "ok read"

# ---- A compiles and uploads ----------------------------------------------------------------------
C=$EX/tiny_cnn
check "A compiles tiny_cnn" compile a "$C/spec.yaml" "$C/weights.npz" "$TMP/a_cnn"
expect_eq "A: not cached" "$(jget "$TMP/a.compile.json" cached)" false
T0=$(date +%s.%N)
check "A compiles the 64 MiB spec" compile a "$TMP/big/spec.yaml" "$TMP/big/weights.npz" "$TMP/a_big"
T1=$(date +%s.%N)
LOCAL_S=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')
expect_eq "A: not cached" "$(jget "$TMP/a.compile.json" cached)" false
BIG_ID=$(jget "$TMP/a.compile.json" artifact)
check "A uploads both (bounded wait)" until_ok 600 uploaded 2
AC_N=$(find "$R/ac" -type f | wc -l)
expect_eq "the remote holds 2 action-cache entries" "$AC_N" 2
check "the remote holds the big artifact's manifest and weights" \
	test -n "$(find "$R/cas" -type f -size +60M)"

# ---- B: a remote hit, no weights uploaded, nothing compiled ----------------------------------------
RX0=$(dcurl b "$U/v1/health" | jget - blobs_bytes_received)
IN0=$(metric b 'eulernpu_remote_cache_bytes_total{direction="in"}')
check "B compiles tiny_cnn" compile b "$C/spec.yaml" "$C/weights.npz" "$TMP/b_cnn"
expect_eq "B: cached (from the remote)" "$(jget "$TMP/b.compile.json" cached)" true
check "B's tiny_cnn artifact is A's" diff -r "$TMP/a_cnn" "$TMP/b_cnn"
T0=$(date +%s.%N)
check "B compiles the 64 MiB spec" compile b "$TMP/big/spec.yaml" "$TMP/big/weights.npz" "$TMP/b_big"
T1=$(date +%s.%N)
HIT_S=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')
expect_eq "B: cached, A's artifact" "$(jget "$TMP/b.compile.json" cached artifact)" "true $BIG_ID"
check "B's big artifact is A's" diff -r "$TMP/a_big" "$TMP/b_big"
RX1=$(dcurl b "$U/v1/health" | jget - blobs_bytes_received)
IN1=$(metric b 'eulernpu_remote_cache_bytes_total{direction="in"}')
CLIENT_BYTES=$((RX1 - RX0))
REMOTE_BYTES=$((IN1 - IN0))
check "the client uploaded no weights to B (< 64 KiB in all)" test "$CLIENT_BYTES" -lt 65536
expect_eq "B compiled nothing" "$(grep -c 'compiled artifact=' "$TMP/b.log")" 0
expect_eq "B: 2 remote hits" "$(metric b 'eulernpu_remote_cache_lookups_total{result="hit"}')" 2
ART_BYTES=$(du -sb --apparent-size "$TMP/a_big" | cut -f1)
check "B fetched the big artifact from the remote, no more than its files and a few KiB" \
	test "$REMOTE_BYTES" -ge "$WBYTES" -a "$REMOTE_BYTES" -le $((ART_BYTES + 65536))
check "B again: a local hit" compile b "$TMP/big/spec.yaml" "$TMP/big/weights.npz" "$TMP/b_big2"
IN2=$(metric b 'eulernpu_remote_cache_bytes_total{direction="in"}')
# the client still sends no weights: the remote's entry (and manifest) say
# that the artifact may be answered; no blob comes again
expect_eq "B again: cached" "$(jget "$TMP/b.compile.json" cached)" true
check "B again: only the entry and the manifest from the remote (< 64 KiB)" \
	test $((IN2 - IN1)) -lt 65536

# ---- tampered entries are ignored, B compiles itself -----------------------------------------------
KEY_OF() { grep -l "\"artifact_id\":\"$1\"" "$R"/ac/* | head -1; }
ENT=$(KEY_OF "$BIG_ID")
check "the big spec's entry is on the remote" test -n "$ENT"
cp "$ENT" "$TMP/ent.orig"
start_daemon c --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-backoff 1 || { finish; exit 1; }
# (1) a wrong signature: one hex digit of it changed
"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1])); s = d["signature"]
d["signature"] = ("0" if s[0] != "0" else "1") + s[1:]
open(sys.argv[1], "w").write(json.dumps(d))' "$ENT"
check "C (wrong signature): compiles" compile c "$TMP/big/spec.yaml" "$TMP/big/weights.npz" "$TMP/c1"
expect_eq "C: not cached, compiled itself" "$(jget "$TMP/c.compile.json" cached)" false
expect_eq "C: the entry counted as untrusted" "$(metric c eulernpu_remote_cache_untrusted_total)" 1
stop_daemon c
rm -rf "$TMP/c.cache"
# (2) signed by a key C does not trust: an entry made with evil.key
start_daemon e --remote-cache "http://127.0.0.1:$NP/" --remote-cache-mode readwrite \
	--remote-cache-sign-key "$TMP/evil.key" --remote-cache-backoff 1 || { finish; exit 1; }
check "E (evil) compiles the big spec with other weights" \
	compile e "$TMP/big/spec.yaml" "$TMP/big/weights2.npz" "$TMP/e_big"
EVIL_ID=$(jget "$TMP/e.compile.json" artifact)
check "E uploads it" until_ok 600 eval '[ "$(metric e '"'"'eulernpu_remote_cache_uploads_total{result="done"}'"'"')" = 1 ]'
EVIL_ENT=$(KEY_OF "$EVIL_ID")
check "E's entry is on the remote" test -n "$EVIL_ENT"
cp "$EVIL_ENT" "$ENT"   # the big spec's key now names E's artifact, signed by E
start_daemon c --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-backoff 1 || { finish; exit 1; }
check "C (untrusted signer, another key's entry): compiles" \
	compile c "$TMP/big/spec.yaml" "$TMP/big/weights.npz" "$TMP/c2"
expect_eq "C: not cached, its own artifact (A's id)" \
	"$(jget "$TMP/c.compile.json" cached artifact)" "false $BIG_ID"
expect_eq "C: counted as untrusted" "$(metric c eulernpu_remote_cache_untrusted_total)" 1
stop_daemon c
rm -rf "$TMP/c.cache"
# (3) signed by a trusted key, but pointing at other weights: C trusts
# E too; the entry under the big spec's key names E's artifact, built from
# weights2. Its manifest gives another key: refused.
"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1])); d["key"] = sys.argv[2]
open(sys.argv[3], "w").write(json.dumps(d))' "$EVIL_ENT" "$(basename "$ENT")" "$TMP/relabel.json"
openssl pkey -in "$TMP/evil.key" -pubout -out "$TMP/evil.pub" 2>/dev/null
# re-sign the relabelled entry with E's key, as a trusted but malicious writer would
"$PY" - "$TMP/relabel.json" "$TMP/evil.key" "$ENT" <<'PYEOF'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
msg = "eulernpu-ac-v1\n%s\n%s\n%s\n" % (d["key"], d["artifact_id"], d["manifest"])
open(sys.argv[1] + ".msg", "w").write(msg)
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", sys.argv[2], "-rawin", "-in",
                      sys.argv[1] + ".msg"], capture_output=True, check=True).stdout
d["signature"] = sig.hex()
open(sys.argv[3], "w").write(json.dumps(d))
PYEOF
start_daemon c --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-trust "$TMP/evil.pub" --remote-cache-backoff 1 || { finish; exit 1; }
check "C (a trusted signature over other weights): compiles" \
	compile c "$TMP/big/spec.yaml" "$TMP/big/weights.npz" "$TMP/c3"
expect_eq "C: not cached, A's artifact id (its own compile)" \
	"$(jget "$TMP/c.compile.json" cached artifact)" "false $BIG_ID"
expect_eq "C: counted as untrusted" "$(metric c eulernpu_remote_cache_untrusted_total)" 1
check "C logged why" grep -q "of other inputs" "$TMP/c.log"
stop_daemon c
stop_daemon e
cp "$TMP/ent.orig" "$ENT"

# ---- the remote stopped mid-run ---------------------------------------------------------------------
stop_nginx
sed 's/fc, op: matmul/fc2, op: matmul/' "$TMP/big/spec.yaml" >"$TMP/big/spec2.yaml"
T0=$(date +%s.%N)
check "remote down: A compiles a new spec locally" \
	compile a "$TMP/big/spec2.yaml" "$TMP/big/weights.npz" "$TMP/a_down"
T1=$(date +%s.%N)
expect_eq "A: not cached" "$(jget "$TMP/a.compile.json" cached)" false
expect_eq "A: health degraded" "$(health a state)" degraded
expect_eq "A: the upload waits in the queue" "$(health a queued)" 1
check "remote down: B compiles it locally" \
	compile b "$TMP/big/spec2.yaml" "$TMP/big/weights.npz" "$TMP/b_down"
expect_eq "B: not cached, health degraded" "$(jget "$TMP/b.compile.json" cached) $(health b state)" \
	"false degraded"
expect_eq "/metrics says degraded" "$(metric a eulernpu_remote_cache_degraded)" 1
start_nginx || notok "nginx did not start again"
check "A recovers: health ok (bounded wait)" until_ok 300 eval '[ "$(health a state)" = ok ]'
check "A's queued upload resumes" until_ok 600 uploaded 3
expect_eq "the remote holds 4 action-cache entries (A's 3, E's 1)" "$(find "$R/ac" -type f | wc -l)" 4
check "B recovers: health ok (bounded wait)" until_ok 300 eval '[ "$(health b state)" = ok ]'
rm -rf "$TMP/b_down"
# B's own compile of spec2 is local; a fresh runner (D) gets it from the remote
start_daemon d --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	|| { finish; exit 1; }
check "D gets the spec compiled while the remote was down" \
	compile d "$TMP/big/spec2.yaml" "$TMP/big/weights.npz" "$TMP/d_down"
expect_eq "D: cached" "$(jget "$TMP/d.compile.json" cached)" true

# ---- --remote-cache-miss-ttl: a compile's retry with the weights asks again or not ------------------
# tiny_mlp is on no remote: the first request (no weights) misses, the
# client uploads them, the second misses the local cache; with a ttl the
# remote is not asked again for it, with 0 it is.
M=$EX/tiny_mlp
start_daemon f --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-miss-ttl 0 || { finish; exit 1; }
start_daemon g --remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/a.pub" \
	--remote-cache-miss-ttl 3600 || { finish; exit 1; }
check "F (miss ttl 0) compiles tiny_mlp" compile f "$M/spec.yaml" "$M/weights.npz" "$TMP/f_mlp"
check "G (miss ttl 3600) compiles tiny_mlp" compile g "$M/spec.yaml" "$M/weights.npz" "$TMP/g_mlp"
expect_eq "F and G compiled it themselves" \
	"$(jget "$TMP/f.compile.json" cached) $(jget "$TMP/g.compile.json" cached)" "false false"
expect_eq "F asked the remote at both requests" \
	"$(metric f 'eulernpu_remote_cache_lookups_total{result="miss"}')" 2
expect_eq "G asked it once" "$(metric g 'eulernpu_remote_cache_lookups_total{result="miss"}')" 1
check "G again (no weights needed now, a local hit): cached" compile g "$M/spec.yaml" \
	"$M/weights.npz" "$TMP/g_mlp2"
expect_eq "G: cached, the remote not asked" \
	"$(jget "$TMP/g.compile.json" cached) $(metric g 'eulernpu_remote_cache_lookups_total{result="miss"}')" \
	"true 1"
stop_daemon f
stop_daemon g
check_status "a negative --remote-cache-miss-ttl is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "http://127.0.0.1:$NP" --remote-cache-miss-ttl -1 --check-config
printf 'remote-cache: http://127.0.0.1:%s\nremote-cache-miss-ttl: 0\n' "$NP" >"$TMP/ttl.yaml"
check "remote-cache-miss-ttl in a config file" "$BIN/eulernpud" --config "$TMP/ttl.yaml" --check-config

# ---- configuration errors -----------------------------------------------------------------------------
chmod 644 "$TMP/a.key"
check_status "a sign key readable by everyone is refused" 2 "$BIN/eulernpud" --config none \
	--cache "$TMP/x.cache" --socket "$TMP/x.sock" --remote-cache "http://127.0.0.1:$NP" \
	--remote-cache-mode readwrite --remote-cache-sign-key "$TMP/a.key" --check-config
chmod 600 "$TMP/a.key"
check_status "readwrite without a sign key is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "http://127.0.0.1:$NP" --remote-cache-mode readwrite --check-config
check_status "a public key as the sign key is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "http://127.0.0.1:$NP" --remote-cache-mode readwrite \
	--remote-cache-sign-key "$TMP/a.pub" --check-config
check_status "a trust file that is no key is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "http://127.0.0.1:$NP" --remote-cache-trust "$TMP/big/spec.yaml" --check-config
check_status "a URL that is not http(s) is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache "ftp://127.0.0.1/" --check-config
check_status "--remote-cache-* without --remote-cache is refused" 2 "$BIN/eulernpud" --config none \
	--remote-cache-trust "$TMP/a.pub" --check-config
printf 'remote-cache: http://127.0.0.1:%s\nremote-cache-trust:\n  - %s\n  - %s\n' "$NP" \
	"$TMP/a.pub" "$TMP/evil.pub" >"$TMP/rc.yaml"
check "a config file with a list of trusted keys" "$BIN/eulernpud" --config "$TMP/rc.yaml" --check-config

for d in a b d; do stop_daemon "$d"; done   # a leak is reported at exit
expect_eq "no sanitizer reports from the daemons" \
	"$(cat "$TMP"/*.stderr 2>/dev/null | grep -c -e 'runtime error' -e 'Sanitizer')" 0

echo "# 64 MiB weights: local compile (A, client upload included) ${LOCAL_S}s; remote hit (B) ${HIT_S}s"
echo "# bytes client->B $CLIENT_BYTES; remote->B $REMOTE_BYTES (artifact files $ART_BYTES; weights.npz $WBYTES)"
finish
