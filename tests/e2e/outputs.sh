#!/usr/bin/env bash
# outputs.sh: what the client writes never destroys data (issue 12, point
# 5, and `jobs result` / `compare --junit` of point 7): compile --out
# refuses a directory of other files and swaps a finished artifact into
# place (a failed compile leaves nothing); an output that names another
# output or an input is a usage error; outputs follow the umask; a local
# write failure is the user's disk (E0003), not the server's (E0810);
# `jobs result` fetches a finished job's files; `compare --junit` writes a
# JUnit report, parsed here, whether the comparison passes or fails.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp
export EULERNPU_SERVER=unix:$TMP/a.sock
EULERNPUD_HOLD=$HOLD start_daemon a || { finish; exit 1; }

sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# litter DIR: the temporary or set-aside siblings left beside DIR
litter() { ls -A "$(dirname "$1")" | grep -E "^\.$(basename "$1")\.(tmp|old)\." || true; }

# ---- compile --out ----------------------------------------------------------
# A directory of someone else's files named manifest.json and weights/.
mkdir -p "$TMP/proj/weights"
echo '{"name": "my web app", "version": "1.0.0"}' >"$TMP/proj/manifest.json"
echo precious >"$TMP/proj/weights/model.bin"
before=$(sums "$TMP/proj")
check_status "compile --out into a directory of other files: exit 2" 2 \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/proj"
expect_eq "  a usage error" "$(sed -n 1p "$TMP/last.err")" "error[E0100]: usage error"
expect_match "  naming the directory" "$(cat "$TMP/last.err")" "proj' holds files that are not an eulernpu artifact"
expect_match "  ... and says what to do" "$(cat "$TMP/last.err")" "give a new or empty directory"
expect_eq "  nothing in it was touched" "$(sums "$TMP/proj")" "$before"
expect_eq "  nothing left beside it" "$(litter "$TMP/proj")" ""
touch "$TMP/afile"
check_status "compile --out naming a file: exit 2" 2 \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/afile"

mkdir "$TMP/empty"
check "compile --out into an empty directory" \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/empty"
check "  it holds the artifact" test -s "$TMP/empty/manifest.json" -a -s "$TMP/empty/weights/cpu_ref.npz"
check "compile --out a new directory" \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp"
id1=$(jget "$TMP/mlp/manifest.json" id)

# Recompiling into an artifact directory replaces it whole (a stray file
# of the old one goes too).
"$PY" -c 'import sys, numpy as np
w = dict(np.load(sys.argv[1])); k = list(w)[0]; w[k] = w[k] * 2
np.savez(sys.argv[2], **w)' "$M/weights.npz" "$TMP/weights2.npz"
echo stray >"$TMP/mlp/stray.txt"
check "compile into an existing artifact directory" \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/weights2.npz" --out "$TMP/mlp"
id2=$(jget "$TMP/mlp/manifest.json" id)
check "  the manifest is the new artifact's" test "$id1" != "$id2"
check "  the old directory's stray file is gone" test ! -e "$TMP/mlp/stray.txt"
expect_eq "  no temporary or old copy left beside it" "$(litter "$TMP/mlp")" ""
check "  run uses the replaced artifact" \
	"$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r2.npz"
check "recompile into it spelled with a trailing slash" \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/weights2.npz" --out "$TMP/mlp/"
expect_eq "  the same artifact, nothing beside it" "$(jget "$TMP/mlp/manifest.json" id)$(litter "$TMP/mlp")" "$id2"
ln -s "$TMP/mlp" "$TMP/mlp.link"
check_status "compile --out a symbolic link: exit 2 (it would replace the link)" 2 \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/weights2.npz" --out "$TMP/mlp.link"
check "  the link is still a link" test -L "$TMP/mlp.link"

# A compile that fails midway, during the downloads: a server whose
# weights file arrives damaged (a proxy flips its last byte; the digest
# check refuses it) after the other files went well. No DIR and no
# temporary directory are left; an existing artifact stays as it was.
"$PY" "$ROOT/tests/e2e/tools/unix_proxy.py" --to "$TMP/a.sock" --listen "$TMP/bad.sock" \
	--corrupt '/files/weights/|/result$' 2>"$TMP/proxy.err" &
EXTRA_PIDS+=($!)
for _ in $(seq 100); do [ -S "$TMP/bad.sock" ] && break; sleep 0.05; done
BAD=unix:$TMP/bad.sock
check_status "a compile whose download fails: exit 2 (digest)" 2 env EULERNPU_SERVER=$BAD \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/half"
expect_match "  the digest error" "$(sed -n 1p "$TMP/last.err")" '^error\[E0[0-9]+\]'
expect_eq "  no OK line" "$(cat "$TMP/last.out")" ""
check "  no half-written DIR" test ! -e "$TMP/half"
expect_eq "  no temporary directory beside it" "$(litter "$TMP/half")" ""
check_status "a failing recompile into an artifact directory" 2 env EULERNPU_SERVER=$BAD \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/mlp"
expect_eq "  leaves the old artifact as it was" "$(jget "$TMP/mlp/manifest.json" id)" "$id2"
expect_eq "  and nothing beside it" "$(litter "$TMP/mlp")" ""

# A run whose result download fails leaves no file and no temporary one;
# an existing file of that name keeps its bytes.
check_status "a run whose result arrives damaged: exit 2" 2 env EULERNPU_SERVER=$BAD \
	"$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/dmg.npz"
check "  no result file" test ! -e "$TMP/dmg.npz"
expect_eq "  no temporary file" "$(litter "$TMP/dmg.npz")" ""
echo keep >"$TMP/keep.npz"
check_status "  into an existing file: exit 2" 2 env EULERNPU_SERVER=$BAD \
	"$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/keep.npz"
expect_eq "  the existing file keeps its bytes" "$(cat "$TMP/keep.npz")" keep

# ---- what a compile need not download -----------------------------------------
# From its own daemon (a Unix socket the user owns) the client takes each
# file from the daemon's cache, not over the socket; through a server that
# is not its own (a proxy: it gives no such paths) it takes what --out
# already holds with the listed digest and downloads only the rest.
"$PY" "$ROOT/tests/e2e/tools/unix_proxy.py" --to "$TMP/a.sock" --listen "$TMP/far.sock" \
	--corrupt '^$' 2>"$TMP/proxy2.err" &
EXTRA_PIDS+=($!)
for _ in $(seq 100); do [ -S "$TMP/far.sock" ] && break; sleep 0.05; done
FAR=unix:$TMP/far.sock
fetches() { grep -c 'method=GET route=/v1/artifacts/\*/files/' "$TMP/a.log"; }
n0=$(fetches)
check "own daemon: compile into a new DIR" \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/own"
expect_eq "  no file was downloaded" "$(fetches)" "$n0"
check "  the artifact runs" "$CLI" run --artifact "$TMP/own" --input "$M/input.npz" --out "$TMP/own.npz"
(umask 027; "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/own027" >/dev/null)
expect_eq "  its files' modes follow the umask (027: 640)" \
	"$(find "$TMP/own027" -type f ! -perm 0640 -printf '%m %p\n')" ""
check "another server: compile into a new DIR" env EULERNPU_SERVER=$FAR \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/far"
expect_eq "  every file downloaded (4)" "$(( $(fetches) - n0 ))" 4
check "  the same files as from the cache" diff -r "$TMP/own" "$TMP/far"
n1=$(fetches)
check "another server: the same compile into that DIR again" env EULERNPU_SERVER=$FAR \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/far"
expect_eq "  nothing downloaded: DIR held every file" "$(fetches)" "$n1"
changed=$("$PY" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
old = {f["path"]: f["sha256"] for f in a["files"]}
print(1 + sum(old.get(f["path"]) != f["sha256"] for f in b["files"]))' "$TMP/far/manifest.json" "$TMP/mlp/manifest.json")
check "another server: other weights into that DIR" env EULERNPU_SERVER=$FAR \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$TMP/weights2.npz" --out "$TMP/far"
expect_eq "  only the files that changed were downloaded ($changed, the manifest among them)" \
	"$(( $(fetches) - n1 ))" "$changed"
check "  which match the cache's" diff -r "$TMP/mlp" "$TMP/far"

# ---- outputs that name another output or an input ---------------------------
cp "$M/input.npz" "$TMP/in.npz"
insum=$(sha256sum <"$TMP/in.npz")
check_status "run --out X --report X: exit 2" 2 \
	"$CLI" run --artifact "$TMP/mlp" --input "$TMP/in.npz" --out "$TMP/x.npz" --report "$TMP/x.npz"
expect_match "  says they name the same file" "$(cat "$TMP/last.err")" "'--out' and '--report' name the same file"
check "  and wrote nothing" test ! -e "$TMP/x.npz"
check_status "run --out X --report ./sub/../X (the same file spelled otherwise): exit 2" 2 \
	"$CLI" run --artifact "$TMP/mlp" --input "$TMP/in.npz" --out "$TMP/x.npz" --report "$TMP/empty/../x.npz"
check_status "run --out equal to --input: exit 2" 2 \
	"$CLI" run --artifact "$TMP/mlp" --input "$TMP/in.npz" --out "$TMP/in.npz"
expect_match "  says it would destroy the input" "$(cat "$TMP/last.err")" "'--out' names the input .* of '--input'"
ln -s "$TMP/in.npz" "$TMP/in.link"
check_status "run --out a symlink to --input: exit 2" 2 \
	"$CLI" run --artifact "$TMP/mlp" --input "$TMP/in.npz" --out "$TMP/in.link"
expect_eq "  the input is untouched" "$(sha256sum <"$TMP/in.npz")" "$insum"
check_status "run --out naming a directory: exit 2 before any job" 2 \
	"$CLI" run --artifact "$TMP/mlp" --input "$TMP/in.npz" --out "$TMP/empty"
expect_match "  says to give a file name" "$(cat "$TMP/last.err")" "'--out' names the directory"
check_status "compile --out equal to --spec: exit 2" 2 \
	"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$M/spec.yaml"
check_status "compare --junit equal to --got: exit 2" 2 \
	"$CLI" compare --got "$TMP/in.npz" --expected "$M/input.npz" --junit "$TMP/in.npz"
expect_eq "  the input is untouched" "$(sha256sum <"$TMP/in.npz")" "$insum"

# ---- modes follow the umask -------------------------------------------------
mode() { stat -c %a "$1"; }
(umask 022; "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/m022.npz" \
	--report "$TMP/m022.json" >/dev/null)
expect_eq "umask 022: the result is 644" "$(mode "$TMP/m022.npz")" 644
expect_eq "umask 022: the report is 644" "$(mode "$TMP/m022.json")" 644
(umask 027; "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/m027.npz" >/dev/null)
expect_eq "umask 027: the result is 640" "$(mode "$TMP/m027.npz")" 640
(umask 002; "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$TMP/m002" >/dev/null)
expect_eq "umask 002: compile's directory is 775" "$(mode "$TMP/m002")" 775
expect_eq "umask 002: its weights/ is 775" "$(mode "$TMP/m002/weights")" 775
expect_eq "umask 002: its manifest is 664" "$(mode "$TMP/m002/manifest.json")" 664

# ---- a local write failure is the user's disk ---------------------------------
# As root (CI) a full 64 KiB tmpfs; as another user a directory it cannot
# write (root could); as root unable to mount, a path under a file. Either way E0003 naming the local path, exit 2.
# write_into DIR HOW: run and compile writing into DIR; their stderr into
# err and cerr.
write_into() {
	check_status "run --out into $2: exit 2" 2 \
		"$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$1/r.npz"
	err=$(cat "$TMP/last.err")
	check_status "compile --out into $2: exit 2" 2 \
		"$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$1/art"
	cerr=$(cat "$TMP/last.err")
}
if [ "$(id -u)" = 0 ] && mkdir -p "$TMP/full" && mount -t tmpfs -o size=64k tmpfs "$TMP/full"; then
	dd if=/dev/zero of="$TMP/full/filler" bs=4k 2>/dev/null
	write_into "$TMP/full" "a full filesystem"
	rm -f "$TMP/full/filler"
	expect_eq "  nothing left behind" "$(ls -A "$TMP/full")" ""
	umount "$TMP/full"
elif [ "$(id -u)" != 0 ]; then
	mkdir -p "$TMP/ro"
	chmod 0555 "$TMP/ro"
	write_into "$TMP/ro" "a directory the user cannot write"
	expect_eq "  nothing left behind" "$(ls -A "$TMP/ro")" ""
else   # root in a container that may not mount: a parent that is a file
	write_into "$TMP/afile" "a path under a regular file"
	check "  the file is as it was" test -f "$TMP/afile" -a ! -s "$TMP/afile"
fi
expect_eq "  run: E0003, not the server's storage (E0810)" "$(sed -n 1p <<<"$err")" \
	"error[E0003]: cannot read or write a file"
expect_match "  run: names the local path" "$err" "r\.npz"
expect_match "  run: the fix is about your disk" "$err" "fix: .*your disk"
expect_eq "  compile: E0003" "$(sed -n 1p <<<"$cerr")" "error[E0003]: cannot read or write a file"
expect_match "  compile: the fix is about your disk" "$cerr" "fix: .*your disk"

# ---- jobs result ID --out F [--report F] ---------------------------------------
J=$("$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --detach)
check "jobs wait for a detached job" "$CLI" jobs wait "$J"
"$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/ref.npz" --report "$TMP/ref.json" >/dev/null
out=$("$CLI" jobs result "$J" --out "$TMP/jr.npz" --report "$TMP/jr.json"); rc=$?
expect_eq "jobs result: exit 0" "$rc" 0
expect_eq "jobs result: says what it wrote" "$out" "$J: result written to $TMP/jr.npz, report to $TMP/jr.json"
check "jobs result: the result's bytes are run's" cmp "$TMP/jr.npz" "$TMP/ref.npz"
check "jobs result: the report parses" "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/jr.json"
check "jobs result: only --out" "$CLI" jobs result "$J" --out "$TMP/jr2.npz"
check "  the same bytes" cmp "$TMP/jr2.npz" "$TMP/ref.npz"
check_status "jobs result without --out: exit 2" 2 "$CLI" jobs result "$J"
check_status "jobs result --out X --report X: exit 2" 2 "$CLI" jobs result "$J" --out "$TMP/y" --report "$TMP/y"
check "  and wrote nothing" test ! -e "$TMP/y"
check_status "jobs show --out (not result's): exit 2" 2 "$CLI" jobs show "$J" --out "$TMP/z"
check_status "jobs result of an unknown id: exit 2" 2 "$CLI" jobs result 0123456789abcdef --out "$TMP/u.npz"
expect_match "  the server's 404 error" "$(sed -n 1p "$TMP/last.err")" '^error\[E0[0-9]+\]: .*(not found|unknown|no such)'
check "  nothing written" test ! -e "$TMP/u.npz"
check_status "jobs result of a damaged download: exit 2" 2 env EULERNPU_SERVER=$BAD \
	"$CLI" jobs result "$J" --out "$TMP/jd.npz"
check "  nothing written" test ! -e "$TMP/jd.npz"

# A job still queued or running (held: lib.sh's hold) says its state; a
# cancelled one its error.
make_slow_model "$TMP/slow"
"$CLI" compile --spec "$TMP/slow/spec.yaml" --weights "$TMP/slow/weights.npz" --out "$TMP/slow/art" >/dev/null
hold
S=$("$CLI" run --artifact "$TMP/slow/art" --input "$TMP/slow/input.npz" --detach)
check_status "jobs result of an unfinished job: exit 2" 2 "$CLI" jobs result "$S" --out "$TMP/s.npz"
expect_eq "  E0817" "$(sed -n 1p "$TMP/last.err")" "error[E0817]: conflicts with a job's state"
expect_match "  says its state" "$(cat "$TMP/last.err")" "job '$S' is (queued|running): it has no result yet"
check "  nothing written" test ! -e "$TMP/s.npz"
"$CLI" jobs cancel "$S" >/dev/null
"$CLI" jobs wait "$S" --timeout 60 >/dev/null 2>&1
release
check_status "jobs result of a cancelled job: exit 1" 1 "$CLI" jobs result "$S" --out "$TMP/s.npz"
expect_match "  its error" "$(sed -n 1,2p "$TMP/last.err")" "cancel"
check "  nothing written" test ! -e "$TMP/s.npz"

# ---- compare --junit ---------------------------------------------------------
# Tensor names with XML's special characters; a pass, a difference in one
# tensor, and a comparison that cannot be made each give a report that
# parses, with what each tensor did.
"$PY" - "$TMP" <<'PYEOF'
import sys, numpy as np
t = sys.argv[1]
a = np.arange(6, dtype="<f4").reshape(2, 3)
b = np.ones((4,), "<f4")
names = ["a<b&\"c'd", "plain"]
np.savez(t + "/jg.npz", **{names[0]: a, names[1]: b})
b2 = b.copy(); b2[3] += 0.5
np.savez(t + "/je_off.npz", **{names[0]: a, names[1]: b2})
np.savez(t + "/je_key.npz", other=a)
PYEOF
# junit FILE: "suite tests failures errors skipped | name:verdict ..." from
# the XML (xml.etree fails on anything that is not well-formed)
junit() {
	"$PY" - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
s = root.find("testsuite")
out = [s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped")]
float(s.get("time"))
cases = []
for c in s.findall("testcase"):
    float(c.get("time"))
    v = "pass"
    for k in ("failure", "error", "skipped"):
        el = c.find(k)
        if el is not None:
            v = k + ("[" + el.get("message") + "]" if k == "failure" else "")
    cases.append(c.get("name") + ":" + v)
print(" ".join(out) + " | " + " ; ".join(cases))
PYEOF
}
check "compare --junit on a pass: exit 0" "$CLI" compare --got "$TMP/jg.npz" --expected "$TMP/jg.npz" --junit "$TMP/pass.xml"
expect_eq "  the report: two passed testcases" "$(junit "$TMP/pass.xml")" \
	"eulernpu compare 2 0 0 0 | a<b&\"c'd:pass ; plain:pass"
check_status "compare --junit on a difference: exit 1" 1 \
	"$CLI" compare --got "$TMP/jg.npz" --expected "$TMP/je_off.npz" --junit "$TMP/fail.xml"
r=$(junit "$TMP/fail.xml")
expect_match "  the report: one failure, on the tensor that differs" "$r" \
	"^eulernpu compare 2 1 0 1 \| a<b&\"c'd:skipped ; plain:failure\[tensor 'plain' differs at \(3,\): "
check_status "compare --junit when not comparable: exit 2" 2 \
	"$CLI" compare --got "$TMP/jg.npz" --expected "$TMP/je_key.npz" --junit "$TMP/err.xml"
expect_match "  the report: an error" "$(junit "$TMP/err.xml")" "^eulernpu compare 1 0 1 0 \| other:error$"
check "  the error carries the code" grep -q 'type="E0601"' "$TMP/err.xml"
expect_eq "  nothing else left beside the reports" "$(litter "$TMP/pass.xml")$(litter "$TMP/fail.xml")" ""
check_status "compare --junit into a missing directory: exit 2" 2 \
	"$CLI" compare --got "$TMP/jg.npz" --expected "$TMP/jg.npz" --junit "$TMP/nodir/j.xml"
expect_match "  a local error naming it" "$(cat "$TMP/last.err")" "E0003.*|nodir/j\.xml"

# ---- bash completion knows the new words (it reads --help) ---------------------
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_eulernpu; printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/client/eulernpu.bash" "$@"
}
expect_match "completion: jobs r<TAB> offers result" "$(comp "$CLI" jobs r)" "^result$"
expect_match "completion: jobs result ID --<TAB> offers --out and --report" \
	"$(comp "$CLI" jobs result "$J" --)" "--report"
expect_match "completion: compare --ju<TAB> offers --junit" "$(comp "$CLI" compare --ju)" "^--junit$"
finish
