#!/usr/bin/env bash
# hostile.sh: hostile inputs end to end (issue 6, part 2): through eulernpu
# (exit code + the three-line error) and raw HTTP (status + error JSON) to a
# daemon with small limits and timeouts. Raw-socket clients (short and long
# bodies, slow clients) are tests/data/hostile/rawhttp.py; the files gen.py's.
. "$(dirname "$0")/lib.sh"

HD=$ROOT/tests/data/hostile
MLP=$EX/tiny_mlp
U=http://localhost
RAW=("$PY" "$HD/rawhttp.py" "$TMP/h.sock")

# jget FILE KEY.PATH: a JSON value (strings bare)
sha() { sha256sum "$1" | cut -d' ' -f1; }

# three DESC CODE EXIT CMD...: CMD exits EXIT with the three-line error of CODE
# on stderr (error[CODE]: title / detail / fix ... See: eulernpu explain CODE).
three() {
	local desc=$1 code=$2 want=$3 rc n first last; shift 3
	timeout 60 "$@" >"$TMP/t.out" 2>"$TMP/t.err"; rc=$?
	n=$(wc -l <"$TMP/t.err"); first=$(head -1 "$TMP/t.err"); last=$(tail -1 "$TMP/t.err")
	if [ "$rc" = "$want" ] && [ "$n" = 3 ] && [[ $first == "error[$code]: "* ]] &&
	   [[ $last == *"See: eulernpu explain $code" ]]; then
		ok "$desc"
	else
		notok "$desc (exit $rc, want $want and $code)"
		sed 's/^/    | /' "$TMP/t.err" | head -6
	fi
}

# http DESC STATUS CODE CURL-ARGS...: the daemon answers STATUS with the
# error JSON of CODE, whose "see" names it (the three lines' last).
http() {
	local desc=$1 want=$2 code=$3 st; shift 3
	st=$(dcurl h -o "$TMP/h.json" -w '%{http_code}' "$@")
	if [ "$st" = "$want" ] && [ "$(jget "$TMP/h.json" error.code)" = "$code" ] &&
	   [ "$(jget "$TMP/h.json" error.see)" = "eulernpu explain $code" ] &&
	   [ -n "$(jget "$TMP/h.json" error.message)" ]; then
		ok "$desc"
	else
		notok "$desc (status $st, want $want and $code)"
		head -c 400 "$TMP/h.json" | sed 's/^/    | /'; echo
	fi
}

blobs() { dcurl h $U/v1/cache -o "$TMP/c.json" && jget "$TMP/c.json" blobs; }
njobs() { dcurl h "$U/v1/jobs?limit=1000" | jget - 'jobs.#'; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$(daemon_pid h)/status"; }

start_daemon h --workers 1 --conn-timeout 2 --request-timeout 3 --conn-limit 8 \
	--max-npz-bytes 4000000 || { finish; exit 1; }
export EULERNPU_SERVER=unix:$TMP/h.sock
CLI=$BIN/eulernpu
check "tiny_mlp compiles under the test limits" "$CLI" compile --spec "$MLP/spec.yaml" \
	--weights "$MLP/weights.npz" --out "$TMP/art"

# ---- YAML: alias bombs and deep nesting ---------------------------------------------------
for f in spec_bomb spec_deep_seq spec_deep_map spec_deep_alias; do
	three "validate $f: E0004" E0004 2 "$CLI" validate "$HD/$f.yaml"
done
three "validate alias bomb names max_yaml_nodes" E0004 2 "$CLI" validate "$HD/spec_bomb.yaml"
expect_match "... in its fix line" "$(tail -1 "$TMP/t.err")" "max_yaml_nodes"
three "validate deep nesting" E0004 2 "$CLI" validate "$HD/spec_deep_seq.yaml"
expect_match "... names max_yaml_depth" "$(tail -1 "$TMP/t.err")" "max_yaml_depth"
http "POST /v1/validate alias bomb: 413 E0004" 413 E0004 --data-binary @"$HD/spec_bomb.yaml" $U/v1/validate
for f in target_bomb target_deep; do
	three "compile --target $f: E0004" E0004 2 "$CLI" compile --spec "$MLP/spec.yaml" \
		--weights "$MLP/weights.npz" --backend npu_sim --target "$HD/$f.yaml" --out "$TMP/o_$f"
done
for f in config_bomb config_deep; do
	three "eulernpud --check-config $f: E0816" E0816 2 "$BIN/eulernpud" --check-config --config "$HD/$f.yaml"
done
for f in spec_badutf8_name spec_badutf8_op spec_badutf8_comment; do
	three "validate $f (non-UTF-8 bytes): E0200" E0200 2 "$CLI" validate "$HD/$f.yaml"
done
# Bytes from a request that reach a reply are UTF-8 (jget's json.load is strict).
http "GET /v1/jobs?state=%ff%fe: 400 E0803 in valid UTF-8 JSON" 400 E0803 "$U/v1/jobs?state=%ff%fe"
expect_match "... the bad bytes shown as U+FFFD" "$(cat "$TMP/h.json")" $'\xef\xbf\xbd'
http "POST /v1/jobs JSON with a non-UTF-8 string: 400 E0803" 400 E0803 \
	-H 'Content-Type: application/json' --data-binary $'{"backend": "\xff"}' "$U/v1/jobs"
http "POST /v1/jobs multipart field not UTF-8: 400 E0803" 400 E0803 \
	-F $'backend=\xff' -F "input=@$MLP/input.npz" "$U/v1/jobs"

# ---- huge declared shapes --------------------------------------------------------------------
for f in spec_shape_overflow spec_shape_elems spec_shape_dim64 spec_wshape_overflow; do
	three "validate $f: E0004" E0004 2 "$CLI" validate "$HD/$f.yaml"
done
expect_match "... names max_tensor_elems" "$(cat "$TMP/t.err")" "max_tensor_elems"
for t in overflow:E0400 elems:E0004 bigdim:E0400; do
	three "compile, weights .npy header ${t%:*}: ${t#*:}" "${t#*:}" 2 "$CLI" compile \
		--spec "$MLP/spec.yaml" --weights "$HD/weights_hdr_${t%:*}.npz" --out "$TMP/o_w"
	three "run, input .npy header ${t%:*}: ${t#*:}" "${t#*:}" 2 "$CLI" run --artifact "$TMP/art" \
		--input "$HD/input_hdr_${t%:*}.npz" --out "$TMP/r.npz"
done

# ---- zip bombs (limit 4 MB) --------------------------------------------------------------------
three "run, 10 KB npz of 10 MiB: E0004" E0004 2 "$CLI" run --artifact "$TMP/art" \
	--input "$HD/bomb.npz" --out "$TMP/r.npz"
expect_match "... names max_npz_bytes" "$(cat "$TMP/t.err")" "max_npz_bytes"
three "run, npz whose headers lie about the size: E0400" E0400 2 "$CLI" run --artifact "$TMP/art" \
	--input "$HD/bomb_lie.npz" --out "$TMP/r.npz"
three "compile, weights member inflating to 10 MiB: E0004" E0004 2 "$CLI" compile \
	--spec "$MLP/spec.yaml" --weights "$HD/weights_bomb.npz" --out "$TMP/o_wb"
# 100 MiB of zeros in ~100 KB, honest and lying: the daemon's peak RSS must
# not grow by anything like the expansion
"$PY" - "$TMP" <<'PYEOF'
import struct, sys, zipfile, io
import numpy as np
from numpy.lib import format as npf
n = 25 << 20                                   # float32s: 100 MiB
b = io.BytesIO()
npf.write_array_header_1_0(b, {'descr': '<f4', 'fortran_order': False, 'shape': (1, n)})
hdr = b.getvalue()
for name in ('big_bomb', 'big_lie'):
    path = '%s/%s.npz' % (sys.argv[1], name)
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:
        zi = zipfile.ZipInfo('x.npy', (1980, 1, 1, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        with z.open(zi, 'w') as f:
            f.write(hdr)
            chunk = bytes(1 << 20)
            for _ in range(n * 4 >> 20):
                f.write(chunk)
    if name == 'big_lie':
        data = bytearray(open(path, 'rb').read())
        real = struct.pack('<I', len(hdr) + n * 4)
        assert data.count(real) == 2
        open(path, 'wb').write(bytes(data).replace(real, struct.pack('<I', 4096)))
PYEOF
h0=$(hwm_kb)
three "run, 100 KB npz of 100 MiB: E0004" E0004 2 "$CLI" run --artifact "$TMP/art" \
	--input "$TMP/big_bomb.npz" --out "$TMP/r.npz"
three "run, 100 KB npz of 100 MiB claiming 4 KB: E0400" E0400 2 "$CLI" run --artifact "$TMP/art" \
	--input "$TMP/big_lie.npz" --out "$TMP/r.npz"
h1=$(hwm_kb)
echo "# daemon peak RSS: ${h0} KiB before the 100 MiB bombs, ${h1} KiB after"
expect_eq "daemon peak RSS grew by less than 32 MiB over 2 x 100 MiB bombs" \
	"$(( h1 - h0 < 32768 ))" 1
expect_eq "the bombs are small files" "$(( $(stat -c %s "$TMP/big_bomb.npz") < 200000 ))" 1

# ---- member names ------------------------------------------------------------------------------
for t in dotdot subdir abs backslash dotdotbs txt noext empty dup badutf8 overlong nul; do
	three "run, npz member name '$t': E0400" E0400 2 "$CLI" run --artifact "$TMP/art" \
		--input "$HD/name_$t.npz" --out "$TMP/r.npz"
done
three "compile, weights member '../fc1.b.npy': E0400" E0400 2 "$CLI" compile \
	--spec "$MLP/spec.yaml" --weights "$HD/weights_name_dotdot.npz" --out "$TMP/o_n"
expect_eq "no x.npy / b.npy written anywhere under the test dir or /etc" \
	"$(find "$TMP" /etc -maxdepth 6 \( -name x.npy -o -name b.npy \) 2>/dev/null | wc -l)" 0

# ---- truncation (a few prefixes end to end; every prefix is test_hostile's) --------------------
for f in weights input; do
	len=$(stat -c %s "$MLP/$f.npz")
	for n in 0 1 30 $((len / 2)) $((len - 1)); do
		head -c "$n" "$MLP/$f.npz" >"$TMP/cut.npz"
		if [ "$f" = weights ]; then
			three "compile, weights.npz cut at $n: E0400" E0400 2 "$CLI" compile \
				--spec "$MLP/spec.yaml" --weights "$TMP/cut.npz" --out "$TMP/o_cut"
		else
			three "run, input.npz cut at $n: E0400" E0400 2 "$CLI" run --artifact "$TMP/art" \
				--input "$TMP/cut.npz" --out "$TMP/r.npz"
		fi
	done
done
len=$(stat -c %s "$MLP/spec.yaml")
for n in 0 40 200 $((len / 2)) $((len - 10)); do
	head -c "$n" "$MLP/spec.yaml" >"$TMP/cut.yaml"
	"$CLI" validate "$TMP/cut.yaml" >"$TMP/v.out" 2>"$TMP/v.err"; rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l <"$TMP/v.err")" = 3 ] &&
	   grep -Eq '^error\[E02[0-9][0-9]\]' "$TMP/v.err" && grep -q 'See: eulernpu explain E02' "$TMP/v.err"; then
		ok "validate spec.yaml cut at $n: a three-line E02xx error"
	else
		notok "validate spec.yaml cut at $n (exit $rc)"; sed 's/^/    | /' "$TMP/v.err" "$TMP/v.out"
	fi
done
echo "eulernpu: 1" >"$TMP/v1.yaml"
three "validate a spec with only 'eulernpu: 1': E0201" E0201 2 "$CLI" validate "$TMP/v1.yaml"
len=$(stat -c %s "$TMP/art/manifest.json")
for n in 0 1 $((len / 2)) $((len - 2)); do
	rm -rf "$TMP/cutart"; cp -r "$TMP/art" "$TMP/cutart"
	head -c "$n" "$TMP/art/manifest.json" >"$TMP/cutart/manifest.json"
	three "run --artifact with manifest.json cut at $n: E0700" E0700 2 "$CLI" run \
		--artifact "$TMP/cutart" --input "$MLP/input.npz" --out "$TMP/r.npz"
done

# ---- artifacts pointing outside themselves ------------------------------------------------------
AID=$(jget "$TMP/art/manifest.json" id)
for p in ../../etc/passwd /etc/passwd 'weights/../../x' 'a\\b' ./graph.json; do
	"$PY" - "$TMP/art/manifest.json" "$p" "$TMP/evil.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
m['files'][0]['path'] = sys.argv[2]
json.dump(m, open(sys.argv[3], 'w'))
m['id'] = '0' * 64          # an id the server lacks: the client must check the files
json.dump(m, open(sys.argv[3] + '.local', 'w'))
PYEOF
	http "PUT /v1/artifacts with a file at '$p': 422 E0700" 422 E0700 -X PUT \
		--data-binary @"$TMP/evil.json" "$U/v1/artifacts/$AID"
	rm -rf "$TMP/evilart"; cp -r "$TMP/art" "$TMP/evilart"; cp "$TMP/evil.json.local" "$TMP/evilart/manifest.json"
	three "run --artifact DIR with a file at '$p': E0700" E0700 2 "$CLI" run \
		--artifact "$TMP/evilart" --input "$MLP/input.npz" --out "$TMP/r.npz"
done
expect_eq "GET /v1/artifacts/ID/files/../../etc/passwd: 404" \
	"$(dcurl h --path-as-is -o /dev/null -w '%{http_code}' "$U/v1/artifacts/$AID/files/../../etc/passwd")" 404

# ---- digests ---------------------------------------------------------------------------------------
printf 'hello' >"$TMP/hello"
H=$(sha "$TMP/hello")
b0=$(blobs)
http "PUT /v1/blobs/abc: 400 E0803" 400 E0803 -T "$TMP/hello" $U/v1/blobs/abc
http "PUT /v1/blobs/<65 hex>: 400 E0803" 400 E0803 -T "$TMP/hello" "$U/v1/blobs/${H}0"
http "PUT /v1/blobs/<uppercase>: 400 E0803" 400 E0803 -T "$TMP/hello" "$U/v1/blobs/${H^^}"
http "PUT /v1/blobs/<non-hex>: 400 E0803" 400 E0803 -T "$TMP/hello" "$U/v1/blobs/${H//a/g}"
http "PUT /v1/blobs/<digest>%00junk: 400 E0803" 400 E0803 -T "$TMP/hello" "$U/v1/blobs/$H%00junk"
http "PUT /v1/blobs/<digest>%00: 400 E0803" 400 E0803 -T "$TMP/hello" "$U/v1/blobs/$H%00"
http "HEAD-like GET /v1/blobs/<digest>%00: 400 E0803" 400 E0803 "$U/v1/blobs/$H%00"
expect_eq "PUT /v1/blobs/../../etc/passwd: 404 (no route)" \
	"$(dcurl h --path-as-is -T "$TMP/hello" -o /dev/null -w '%{http_code}' "$U/v1/blobs/../../etc/passwd")" 404
expect_eq "PUT /v1/blobs/..%2f..%2fx: 404 (no route)" \
	"$(dcurl h -T "$TMP/hello" -o /dev/null -w '%{http_code}' "$U/v1/blobs/..%2f..%2fx")" 404
http "PUT with another content's digest: 422 E0805" 422 E0805 -T "$TMP/hello" "$U/v1/blobs/$(printf x | sha256sum | cut -c1-64)"
J='Content-Type: application/json'
http "compile {spec: '../../etc/passwd'}: 400 E0803" 400 E0803 -H "$J" \
	-d "{\"spec\":\"../../etc/passwd\",\"weights\":\"$H\"}" $U/v1/compile
http "compile {spec: <uppercase>}: 400 E0803" 400 E0803 -H "$J" \
	-d "{\"spec\":\"${H^^}\",\"weights\":\"$H\"}" $U/v1/compile
http "compile {spec: <digest>\\u0000junk}: 400 E0803" 400 E0803 -H "$J" \
	-d "{\"spec\":\"$H\\u0000junk\",\"weights\":\"$H\"}" $U/v1/compile
http "compile {spec: 12}: 400 E0803" 400 E0803 -H "$J" -d "{\"spec\":12,\"weights\":\"$H\"}" $U/v1/compile
http "validate {spec: <63 hex>}: 400 E0803" 400 E0803 -H "$J" -d "{\"spec\":\"${H:1}\"}" $U/v1/validate
http "jobs {artifact: 'zz'}: 400 E0803" 400 E0803 -H "$J" -d "{\"artifact\":\"zz\",\"input\":\"$H\"}" $U/v1/jobs
http "jobs {input: '/etc/passwd'}: 400 E0803" 400 E0803 -H "$J" \
	-d "{\"artifact\":\"$AID\",\"input\":\"/etc/passwd\"}" $U/v1/jobs
http "jobs {artifact: <digest>\\u0000}: 400 E0803" 400 E0803 -H "$J" \
	-d "{\"artifact\":\"$AID\\u0000\",\"input\":\"$H\"}" $U/v1/jobs
http "compare {got: '../x'}: 400 E0803" 400 E0803 -H "$J" -d "{\"got\":\"../x\",\"expected\":\"$H\"}" $U/v1/compare
http "blobs/missing {digests: [<digest>\\u0000x]}: 400 E0803" 400 E0803 -H "$J" \
	-d "{\"digests\":[\"$H\\u0000x\"]}" $U/v1/blobs/missing
http "PUT /v1/artifacts/<not hex>: 400 E0803" 400 E0803 -X PUT --data-binary @"$TMP/art/manifest.json" \
	"$U/v1/artifacts/${AID^^}"
expect_eq "no blob stored by any of these" "$(blobs)" "$b0"
expect_eq "HEAD /v1/blobs/<hello>: 404" "$(dcurl h -I -o /dev/null -w '%{http_code}' "$U/v1/blobs/$H")" 404

# ---- bodies shorter or longer than Content-Length ----------------------------------------------------
printf 'hello world, this is the body' >"$TMP/body"
HB=$(sha "$TMP/body")
head -c 10 "$TMP/body" >"$TMP/part"
b0=$(blobs)
j0=$(njobs)
"${RAW[@]}" short PUT "/v1/blobs/$HB" 29 "$TMP/part" close >"$TMP/raw.out"
expect_eq "PUT 10 of 29 bytes, client closes: no blob" \
	"$(dcurl h -I -o /dev/null -w '%{http_code}' "$U/v1/blobs/$HB")" 404
"${RAW[@]}" short PUT "/v1/blobs/$HB" 29 "$TMP/part" stall >"$TMP/raw.out"
expect_match "PUT 10 of 29 bytes, client stalls: the daemon closes it" "$(cat "$TMP/raw.out")" "end=eof"
expect_eq "... within a bound (--conn-timeout 2)" "$(sed -n 's/^seconds=//p' "$TMP/raw.out" | awk '{print ($1 <= 15)}')" 1
expect_eq "... and no blob" "$(dcurl h -I -o /dev/null -w '%{http_code}' "$U/v1/blobs/$HB")" 404
"${RAW[@]}" long PUT "/v1/blobs/$HB" 5 "$TMP/body" >"$TMP/raw.out"
expect_match "PUT 29 bytes with Content-Length 5 under the 29-byte digest: 422" "$(cat "$TMP/raw.out")" "^statuses=422"
expect_match "... E0805 on the 5 bytes" "$(cat "$TMP/raw.out")" '"code":"E0805".*5 bytes received'
expect_eq "... no blob" "$(dcurl h -I -o /dev/null -w '%{http_code}' "$U/v1/blobs/$HB")" 404
printf '{"artifact":"%s","input":"%s"}' "$AID" "$H" >"$TMP/job.json"
"${RAW[@]}" short POST /v1/jobs 500 "$TMP/job.json" close >"$TMP/raw.out"
"${RAW[@]}" short POST /v1/jobs 500 "$TMP/job.json" stall >"$TMP/raw.out"
expect_match "POST /v1/jobs short body, client stalls: closed, no answer" "$(cat "$TMP/raw.out")" "end=eof"
printf '{"artifact":"zz"}GARBAGE GARBAGE\r\n\r\n' >"$TMP/junk.json"
"${RAW[@]}" long POST /v1/jobs 17 "$TMP/junk.json" >"$TMP/raw.out"
expect_match "POST /v1/jobs with bytes past Content-Length: the body alone is judged (400)" \
	"$(cat "$TMP/raw.out")" "^statuses=400"
expect_eq "cache blob count unchanged" "$(blobs)" "$b0"
expect_eq "no jobs were created" "$(njobs)" "$j0"
expect_eq "the daemon still serves" "$(dcurl h -o /dev/null -w '%{http_code}' $U/v1/health)" 200

# ---- oversized request heads: the JSON error, never libmicrohttpd's HTML page ------------------------
# The daemon's bounds (8 KiB of path and query, 16 KiB of headers) sit below
# the 32 KiB libmicrohttpd reads a head into, so it answers them itself.
long=$(head -c 20000 /dev/zero | tr '\0' a)
http "a 20 kB URL: 414 E0818 as JSON" 414 E0818 "$U/v1/jobs/$long"
http "a 20 kB query: 414 E0818 as JSON" 414 E0818 "$U/v1/health?x=$long"
for i in $(seq 20); do printf 'X-Filler-%d: %s\n' "$i" "${long:0:1000}"; done >"$TMP/headers.txt"
http "20 kB of headers: 431 E0819 as JSON" 431 E0819 -H @"$TMP/headers.txt" $U/v1/health
expect_match "... with Content-Type application/json" \
	"$(dcurl h -o /dev/null -w '%{content_type}' -H @"$TMP/headers.txt" $U/v1/health)" '^application/json'
# at the bounds: 15.6 kB of headers and a 7.9 kB query
for i in $(seq 15); do printf 'X-Filler-%d: %s\n' "$i" "${long:0:1000}"; done >"$TMP/headers.txt"
printf 'X-Filler-last: %s\n' "${long:0:500}" >>"$TMP/headers.txt"
expect_eq "15.6 kB of headers and a 7.9 kB query are still served" \
	"$(dcurl h -o /dev/null -w '%{http_code}' -H @"$TMP/headers.txt" "$U/v1/health?x=${long:0:7900}")" 200

# ---- slow clients --------------------------------------------------------------------------------------
# 3 clients sending a header byte a second, 3 a body byte a second; a
# normal request meanwhile is answered (bounded, generous), every slow one is
# cut within the bound of --conn-timeout 2 / --request-timeout 3.
"${RAW[@]}" slow 3 30 header >"$TMP/slow_h.out" & sp1=$!
"${RAW[@]}" slow 3 30 body "/v1/blobs/$HB" >"$TMP/slow_b.out" & sp2=$!
EXTRA_PIDS+=("$sp1" "$sp2")
sleep 1
expect_eq "health answered while 6 slow clients are connected" \
	"$(curl -s --max-time 20 --unix-socket "$TMP/h.sock" -o /dev/null -w '%{http_code}' $U/v1/health)" 200
check "eulernpu run works meanwhile" "$CLI" run --artifact "$TMP/art" --input "$MLP/input.npz" \
	--out "$TMP/r_ok.npz"
wait "$sp1" "$sp2"
expect_match "slow headers: all 3 cut" "$(cat "$TMP/slow_h.out")" "^ended=3$"
expect_eq "... within 15 s" "$(sed -n 's/^max_seconds=//p' "$TMP/slow_h.out" | awk '{print ($1 >= 0 && $1 <= 15)}')" 1
expect_match "slow bodies: all 3 cut" "$(cat "$TMP/slow_b.out")" "^ended=3$"
expect_eq "... within 15 s" "$(sed -n 's/^max_seconds=//p' "$TMP/slow_b.out" | awk '{print ($1 >= 0 && $1 <= 15)}')" 1
expect_eq "no blob from the slow bodies" "$(dcurl h -I -o /dev/null -w '%{http_code}' "$U/v1/blobs/$HB")" 404
expect_match "the daemon logged the cut headers" "$(cat "$TMP/h.log")" "headers did not arrive within 2 s"

# More slow clients than --conn-limit 8: a connection past the limit waits in
# the listen backlog (libmicrohttpd stops accepting at the limit) until the
# cut of a slow one frees a slot, so it is served within about --conn-timeout.
"${RAW[@]}" slow 10 30 header >"$TMP/slow_l.out" & sp3=$!
EXTRA_PIDS+=("$sp3")
sleep 1
t0=$(date +%s)
expect_eq "health past --conn-limit is answered once slots free" \
	"$(curl -s --max-time 30 --unix-socket "$TMP/h.sock" -o /dev/null -w '%{http_code}' $U/v1/health)" 200
echo "# health past the limit answered after $(( $(date +%s) - t0 )) s (conn-timeout 2)"
check "eulernpu run past the limit succeeds" "$CLI" run --artifact "$TMP/art" \
	--input "$MLP/input.npz" --out "$TMP/r_ok.npz"
wait "$sp3"
expect_match "all 10 slow clients cut" "$(cat "$TMP/slow_l.out")" "^ended=10$"
expect_eq "the daemon still serves" "$(dcurl h -o /dev/null -w '%{http_code}' $U/v1/health)" 200
check "the daemon is alive" kill -0 "$(daemon_pid h)"
stop_daemon h
expect_eq "no sanitizer report from the daemon (SAN build)" \
	"$(grep -c 'Sanitizer\|runtime error' "$TMP/h.stderr" 2>/dev/null || true)" 0
finish
