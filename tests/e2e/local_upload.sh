#!/bin/bash
# local_upload.sh: PUT /v1/blobs/{sha256} with X-Eulernpu-Local-File (the
# daemon's own user names a file, the daemon copies it and checks the
# copy's digest), who may, the errors, and the CLI taking that path to its
# own daemon; then a compile whose weights file is the uploaded blob
# itself (all members stored) against one that is re-packed (deflated).
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp
start_daemon a || exit 1
U=http://localhost
sha() { sha256sum "$1" | cut -d' ' -f1; }
health() { dcurl a -o "$TMP/h.json" "$U/v1/health"; jget "$TMP/h.json" "$1"; }
# lput DIGEST PATH [curl args]: the status; the body in $TMP/put.json
lput() {
	local d=$1 p=$2; shift 2
	dcurl a -o "$TMP/put.json" -w '%{http_code}' -X PUT -H "X-Eulernpu-Local-File: $p" "$@" \
		"$U/v1/blobs/$d"
}

# files for the vouched digests below: their change times must be more
# than two seconds old by then
head -c 2000000 /dev/urandom >"$TMP/old.bin"
head -c 2000000 /dev/urandom >"$TMP/old2.bin"
"$PY" - "$TMP/oldw" <<'PYEOF'
import os, sys, numpy as np
os.makedirs(sys.argv[1])
w = np.random.default_rng(2).standard_normal((80, 4096), dtype=np.float32)
np.savez(sys.argv[1] + "/weights.npz", w=w)    # for big/spec.yaml, below
PYEOF

head -c 3000000 /dev/urandom >"$TMP/f.bin"
D=$(sha "$TMP/f.bin")
expect_eq "a file of the daemon's user: 201" "$(lput "$D" "$TMP/f.bin")" 201
expect_eq "  its digest and size" "$(jget "$TMP/put.json" sha256) $(jget "$TMP/put.json" bytes)" \
	"$D 3000000"
dcurl a -o "$TMP/back.bin" "$U/v1/blobs/$D"
check "  the blob is the file's bytes" cmp "$TMP/f.bin" "$TMP/back.bin"
expect_eq "  counted as received, and as local" "$(health blobs_received) $(health blobs_local)" "1 1"
expect_eq "the same again: 200" "$(lput "$D" "$TMP/f.bin")" 200
expect_eq "  not counted again" "$(health blobs_local)" 1

: >"$TMP/empty"
expect_eq "an empty file: 201" "$(lput "$(sha "$TMP/empty")" "$TMP/empty")" 201

head -c 100000 /dev/urandom >"$TMP/g.bin"
expect_eq "a digest the file does not hash to: 422" "$(lput "$D" "$TMP/g.bin")" 422
expect_eq "  E0805, as for a body of those bytes" "$(jget "$TMP/put.json" error.code)" \
	"$(dcurl a -X PUT --data-binary @"$TMP/g.bin" "$U/v1/blobs/$D" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')"
check "  nothing left in tmp/" test -z "$(find "$TMP/a.cache/tmp" -name '*.up')"
G=$(sha "$TMP/g.bin")
expect_eq "a relative path: 400" "$(lput "$G" g.bin)" 400
expect_match "  says why" "$(jget "$TMP/put.json" error.message)" "not an absolute path"
expect_eq "a missing file: 400" "$(lput "$G" "$TMP/nope")" 400
expect_match "  says why" "$(jget "$TMP/put.json" error.message)" "No such file"
expect_eq "a directory: 400" "$(lput "$G" "$TMP")" 400
expect_match "  says why" "$(jget "$TMP/put.json" error.message)" "not a regular file"
expect_eq "the header and a body: 400" "$(lput "$G" "$TMP/g.bin" --data-binary @"$TMP/g.bin")" 400
expect_eq "  the blob was not stored" "$(dcurl a -o /dev/null -w '%{http_code}' "$U/v1/blobs/$G")" 404

# a bound: --max-upload holds for a named file as for a body
start_daemon small --max-upload 1000 || exit 1
st=$(dcurl small -o "$TMP/put.json" -w '%{http_code}' -X PUT \
	-H "X-Eulernpu-Local-File: $TMP/g.bin" "$U/v1/blobs/$G")
expect_eq "a file over --max-upload: 413" "$st" 413
expect_match "  names the flag" "$(jget "$TMP/put.json" error.message)" "max-upload"

# over TCP nobody is the daemon's own user
PORT=$(free_port)
start_daemon tcp --listen "127.0.0.1:$PORT" || exit 1
st=$(curl -s --max-time 60 -o "$TMP/put.json" -w '%{http_code}' -X PUT \
	-H "X-Eulernpu-Local-File: $TMP/g.bin" "http://127.0.0.1:$PORT/v1/blobs/$G")
expect_eq "over TCP: 403" "$st" 403
expect_eq "  E0815" "$(jget "$TMP/put.json" error.code)" E0815
expect_eq "  nothing stored" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v1/blobs/$G")" 404

# ---- the CLI names its files to its own daemon ---------------------------------
export EULERNPU_SERVER=unix:$TMP/a.sock
n0=$(health blobs_local)
check "compile through the own socket" "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/own"
expect_eq "  spec and weights named, not sent" "$(( $(health blobs_local) - n0 ))" 2
check "  the artifact runs" "$CLI" run --artifact "$TMP/own" --input "$M/input.npz" --out "$TMP/own.npz"
check "  its result is the golden one" "$CLI" compare --got "$TMP/own.npz" --expected "$M/golden.npz"

# ---- the weights file: the blob itself, or re-packed --------------------------------
"$PY" - "$M/weights.npz" "$TMP" <<'EOF'
import sys, zipfile, numpy as np
w = dict(np.load(sys.argv[1]))
np.savez(sys.argv[2] + "/stored.npz", **w)
np.savez_compressed(sys.argv[2] + "/deflated.npz", **w)
EOF
check "numpy's stored npz compiles" "$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/stored.npz" --out "$TMP/st"
expect_eq "  the artifact's weights file is those very bytes" \
	"$(sha "$TMP/st/weights/cpu_ref.npz")" "$(sha "$TMP/stored.npz")"
B=$TMP/a.cache/cas/$(sha "$TMP/stored.npz" | cut -c1-2)/$(sha "$TMP/stored.npz")
check "  and in the cache one file: the blob, hard-linked" test "$(stat -c %h "$B")" -ge 2
ID=$(jget "$TMP/st/manifest.json" id)
expect_eq "  the artifact's weights directory holds that one link, nothing beside it" \
	"$(ls "$TMP/a.cache/artifacts/${ID:0:2}/$ID/weights")" cpu_ref.npz
check "a deflated npz compiles" "$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/deflated.npz" --out "$TMP/df"
check "  its weights file is re-packed (not the upload)" \
	test "$(sha "$TMP/df/weights/cpu_ref.npz")" != "$(sha "$TMP/deflated.npz")"
for a in st df; do
	check "  $a: runs to the golden result" "$CLI" run --artifact "$TMP/$a" --input "$M/input.npz" --out "$TMP/$a.npz"
	check "  $a: compare" "$CLI" compare --got "$TMP/$a.npz" --expected "$M/golden.npz"
done
# a stored member with a flipped data byte: the CRC check fails the compile
"$PY" - "$TMP/stored.npz" "$TMP/bad.npz" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.index(b"NUMPY") + 200     # inside the first member's data
b[i] ^= 0x01
open(sys.argv[2], "wb").write(b)
EOF
check_status "a stored member with a bad byte: the compile fails, exit 2" 2 \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/bad.npz" --out "$TMP/bad"
expect_match "  a CRC mismatch, E0400" "$(tr "\n" " " <"$TMP/last.err")" "E0400.*CRC mismatch"
check "  no artifact directory left" test ! -e "$TMP/bad/manifest.json"

# ---- big weights: copied into --out while the server works ----------------------
# The artifact's weights file of stored members is the weights file: the
# client's copy of it, made meanwhile, is used and nothing is fetched, even
# from a server that is not its own (a proxy, which gives no cache paths).
"$PY" - "$TMP/big" <<'PYEOF'
import os, sys, numpy as np
d = sys.argv[1]
os.makedirs(d)
open(d + "/spec.yaml", "w").write("""eulernpu: 1
name: big_weights
backend: cpu_ref
inputs:
  - {name: x, dtype: float32, shape: [1, 80]}
outputs: [y]
weights:
  - {name: w, dtype: float32, shape: [80, 4096]}
components:
  - name: only
    ops:
      - {name: mm, op: matmul, in: [x, w], out: y}
""")
w = np.random.default_rng(1).standard_normal((80, 4096), dtype=np.float32)
np.savez(d + "/weights.npz", w=w)
np.savez_compressed(d + "/deflated.npz", w=w)
np.savez(d + "/input.npz", x=np.ones((1, 80), np.float32))
PYEOF
"$PY" "$ROOT/tests/e2e/tools/unix_proxy.py" --to "$TMP/a.sock" --listen "$TMP/far.sock" \
	--corrupt '^$' 2>"$TMP/proxy.err" &
EXTRA_PIDS+=($!)
for _ in $(seq 100); do [ -S "$TMP/far.sock" ] && break; sleep 0.05; done
fetches() { grep -c 'method=GET route=/v1/artifacts/\*/files/' "$TMP/a.log"; }
n0=$(fetches)
check "big stored weights through a proxy" env EULERNPU_SERVER=unix:$TMP/far.sock \
	"$CLI" compile --spec "$TMP/big/spec.yaml" --weights "$TMP/big/weights.npz" --out "$TMP/bigfar"
expect_eq "  three files fetched, not the weights" "$(( $(fetches) - n0 ))" 3
check "  the weights file is the weights" cmp "$TMP/big/weights.npz" "$TMP/bigfar/weights/cpu_ref.npz"
expect_eq "  nothing else in --out" "$(cd "$TMP/bigfar" && find . -type f | sort | tr '\n' ' ')" \
	"./graph.json ./manifest.json ./plan.json ./weights/cpu_ref.npz "
check "  it runs" "$CLI" run --artifact "$TMP/bigfar" --input "$TMP/big/input.npz" --out "$TMP/bigfar.npz"
n0=$(fetches)
check "big deflated weights through a proxy" env EULERNPU_SERVER=unix:$TMP/far.sock \
	"$CLI" compile --spec "$TMP/big/spec.yaml" --weights "$TMP/big/deflated.npz" --out "$TMP/bigdf"
expect_eq "  all four files fetched (the copy does not serve)" "$(( $(fetches) - n0 ))" 4
expect_eq "  and the copy is not left in --out" "$(cd "$TMP/bigdf" && find . -name '.*' -type f)" ""
check "  the same result" "$CLI" run --artifact "$TMP/bigdf" --input "$TMP/big/input.npz" --out "$TMP/bigdf.npz"
check "  byte for byte" cmp "$TMP/bigfar.npz" "$TMP/bigdf.npz"
check "big stored weights to the own daemon" \
	"$CLI" compile --spec "$TMP/big/spec.yaml" --weights "$TMP/big/weights.npz" --out "$TMP/bigown"
check "  the weights file is the weights" cmp "$TMP/big/weights.npz" "$TMP/bigown/weights/cpu_ref.npz"
check "  a copy, not the cache's file" test "$(stat -c %i "$TMP/bigown/weights/cpu_ref.npz")" != \
	"$(stat -c %i "$TMP/a.cache/cas/$(sha "$TMP/big/weights.npz" | cut -c1-2)/$(sha "$TMP/big/weights.npz")")"

# ---- a digest vouched for: the daemon's own user's record (X-Eulernpu-Local-Stat) ----
# "DEV INO SIZE MTIME CTIME" of a file, as the client sends it
ident() { stat -c '%d %i %s %.9Y %.9Z' "$1"; }
vouched() { health blobs_local_vouched; }
for f in old.bin old2.bin; do   # a bounded wait for a condition, not a timing
	for _ in $(seq 100); do
		[ $(( $(date +%s) - $(stat -c %Z "$TMP/$f") )) -gt 3 ] && break
		sleep 0.1
	done
done
O=$(sha "$TMP/old.bin") O2=$(sha "$TMP/old2.bin")
n0=$(vouched)
expect_eq "a file named with its identity: 201" \
	"$(lput "$O" "$TMP/old.bin" -H "X-Eulernpu-Local-Stat: $(ident "$TMP/old.bin")")" 201
expect_eq "  taken as vouched for (not hashed)" "$(( $(vouched) - n0 ))" 1
dcurl a -o "$TMP/back.bin" "$U/v1/blobs/$O"
check "  the blob is the file's bytes" cmp "$TMP/old.bin" "$TMP/back.bin"
expect_eq "another file's identity and digest: 422 (hashed, and not its digest)" \
	"$(lput "$O" "$TMP/old2.bin" -H "X-Eulernpu-Local-Stat: $(ident "$TMP/old.bin")")" 422
expect_eq "  E0805" "$(jget "$TMP/put.json" error.code)" E0805
a=($(ident "$TMP/old2.bin"))
for k in 0 1 2 3 4; do   # each field counts: one of them off by one
	b=("${a[@]}")
	case $k in
	3 | 4) b[$k]=${a[$k]%.*}.$(printf '%09d' $(( 10#${a[$k]#*.} ^ 1 ))) ;;
	*) b[$k]=$(( a[k] + 1 )) ;;
	esac
	expect_eq "  field $k of the identity off: 422, hashed" \
		"$(lput "$D" "$TMP/old2.bin" -H "X-Eulernpu-Local-Stat: ${b[*]}")" 422
done
expect_eq "an identity with more after it: 201, hashed" \
	"$(lput "$O2" "$TMP/old2.bin" -H "X-Eulernpu-Local-Stat: $(ident "$TMP/old2.bin") 0")" 201
expect_eq "  not vouched" "$(( $(vouched) - n0 ))" 1
head -c 2000000 /dev/urandom >"$TMP/new.bin"
N=$(sha "$TMP/new.bin")
expect_eq "a file changed within two seconds, with its identity: 201" \
	"$(lput "$N" "$TMP/new.bin" -H "X-Eulernpu-Local-Stat: $(ident "$TMP/new.bin")")" 201
expect_eq "  hashed, not vouched" "$(( $(vouched) - n0 ))" 1
expect_eq "  nor with a wrong digest: 422" \
	"$(lput "$D" "$TMP/new.bin" -H "X-Eulernpu-Local-Stat: $(ident "$TMP/new.bin")")" 422
st=$(curl -s --max-time 60 -o "$TMP/put.json" -w '%{http_code}' -X PUT \
	-H "X-Eulernpu-Local-File: $TMP/old.bin" -H "X-Eulernpu-Local-Stat: $(ident "$TMP/old.bin")" \
	"http://127.0.0.1:$PORT/v1/blobs/$O")
expect_eq "the identity over TCP: still 403" "$st" 403

# The CLI sends the identity its record holds the digest under (files of
# 1 MiB or more, unchanged for two seconds): the weights are vouched for.
export XDG_CACHE_HOME=$TMP/xdg
cp "$TMP/big/spec.yaml" "$TMP/oldw/spec.yaml"
for _ in $(seq 100); do
	[ $(( $(date +%s) - $(stat -c %Z "$TMP/oldw/weights.npz") )) -gt 3 ] && break
	sleep 0.1
done
n0=$(vouched) r0=$(health blobs_local)
check "compile of weights two seconds old" "$CLI" compile --spec "$TMP/oldw/spec.yaml" \
	--weights "$TMP/oldw/weights.npz" --out "$TMP/vw"
expect_eq "  the weights named (the spec is stored), and vouched for" \
	"$(( $(health blobs_local) - r0 )) $(( $(vouched) - n0 ))" "1 1"
check "  recorded" grep -q "$TMP/oldw/weights.npz" "$TMP/xdg/eulernpu-client/digests"
check "  runs" "$CLI" run --artifact "$TMP/vw" --input "$TMP/big/input.npz" --out "$TMP/vw.npz"
check "  its weights file is the weights" cmp "$TMP/oldw/weights.npz" "$TMP/vw/weights/cpu_ref.npz"
"$PY" - "$TMP/oldw" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
w = dict(np.load(d + "/weights.npz"))
w["w"][0, 0] += 1
np.savez(d + "/weights.npz", **w)
PYEOF
n0=$(vouched)
check "the weights rewritten: compiles" "$CLI" compile --spec "$TMP/oldw/spec.yaml" \
	--weights "$TMP/oldw/weights.npz" --out "$TMP/vw2"
expect_eq "  hashed, not vouched" "$(( $(vouched) - n0 ))" 0
check "  its weights file is the new one" cmp "$TMP/oldw/weights.npz" "$TMP/vw2/weights/cpu_ref.npz"
unset XDG_CACHE_HOME

finish
