#!/usr/bin/env bash
# cache.sh: cache management against real daemons: stats after known
# requests, eviction under a small --cache-max while jobs run, corrupted
# blobs and artifacts detected on read, dropped, counted and recovered,
# `eulernpu cache ls|rm|gc`, and a restart that keeps the cache and its index.
. "$(dirname "$0")/lib.sh"

CLI=$BIN/eulernpu
M=$EX/tiny_mlp
U=http://localhost
export EULERNPU_SERVER=unix:$TMP/a.sock

# stat NAME FIELD: one field of GET /v1/cache
cstat() { dcurl "$1" "$U/v1/cache" | jget - "$2"; }
compile() { "$CLI" compile --spec "$M/spec.yaml" --weights "$M/weights.npz" --out "$1"; }
# flip one byte in the middle of a file, in place
flip() { "$PY" -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x5a
f = open(p, "r+b"); f.write(b); f.close()' "$1"; }
blobpath() { echo "$TMP/$1.cache/cas/${2:0:2}/$2"; }

start_daemon a || { finish; exit 1; }

# ---- stats after known requests -------------------------------------------------------------
expect_eq "fresh cache: no lookups" "$(cstat a ac_hits) $(cstat a ac_misses) $(cstat a cas_hits)" "0 0 0"
expect_eq "fresh cache: hit rate null" "$(cstat a ac_hit_rate)" null
check "compile (a miss)" compile "$TMP/mlp"
expect_eq "after one compile: ac_misses 1, ac_hits 0" "$(cstat a ac_misses) $(cstat a ac_hits)" "1 0"
expect_eq "after one compile: 2 CAS misses (spec, weights)" "$(cstat a cas_misses) $(cstat a cas_hits)" "2 0"
check "compile again (a hit)" compile "$TMP/mlp2"
expect_eq "after the second: ac_misses 1, ac_hits 1" "$(cstat a ac_misses) $(cstat a ac_hits)" "1 1"
expect_eq "after the second: 2 CAS hits" "$(cstat a cas_hits)" "2"
expect_eq "entries: 1 artifact, 1 action-cache entry" "$(cstat a artifacts) $(cstat a ac_entries)" "1 1"
check "same artifact files" diff -r "$TMP/mlp" "$TMP/mlp2"
expect_eq "a compile and a hit load no artifact (the manifest says enough)" "$(cstat a artifact_loads)" 0
ID=$(jget "$TMP/mlp/manifest.json" id)
IN=$(sha256sum "$M/input.npz" | cut -c1-64)
check "run" "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r1.npz"
expect_eq "the job's worker loaded it, once" "$(cstat a artifact_loads)" 1
check "run again" "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r1.npz"
expect_eq "a second job: the submission reads the manifest, the worker the loaded handle" \
	"$(cstat a artifact_loads)" 1
check "cache stats" "$CLI" cache stats
out=$(cat "$TMP/last.out")
expect_match "stats: action cache line with a percentage" "$out" '^action cache +1 entry, 1 hit, 1 miss \(50\.0% hit rate\)$'
expect_match "stats: blobs with bytes" "$out" '^blobs +[0-9]+ \([0-9.]+ KiB, no --cache-max\)$'
expect_match "stats: integrity failures 0" "$out" '^integrity failures +0$'
check "cache stats --json" "$CLI" cache stats --json
expect_eq "stats --json: ac_hit_rate" "$(jget "$TMP/last.out" ac_hit_rate)" "0.5"
B0=$(cstat a blobs)
# A hit answers from the artifact's manifest (its summary) and loads
# nothing: a summary edited in the cache (the files intact) is what it says.
MAN=$TMP/a.cache/artifacts/${ID:0:2}/$ID/manifest.json
cp "$MAN" "$TMP/man.orig"
"$PY" -c 'import json, sys
m = json.load(open(sys.argv[1])); m["summary"]["operators"] = 99
json.dump(m, open(sys.argv[2], "w"))' "$MAN" "$TMP/man.new"
mv "$TMP/man.new" "$MAN"
SD=$(sha256sum "$M/spec.yaml" | cut -c1-64); WD=$(sha256sum "$M/weights.npz" | cut -c1-64)
expect_eq "a hit answers from the manifest's summary" "$(dcurl a -H 'Content-Type: application/json' \
	-d "{\"spec\":\"$SD\",\"weights\":\"$WD\"}" "$U/v1/compile" | jget - operators)" 99
cp "$TMP/man.orig" "$TMP/man.new" && mv "$TMP/man.new" "$MAN"

# ---- ls, rm ----------------------------------------------------------------------------------
check "cache ls" "$CLI" cache ls
expect_match "ls: a header" "$(head -1 "$TMP/last.out")" '^KIND +ID +BYTES +LAST USE +ARTIFACT$'
expect_match "ls: the artifact" "$(cat "$TMP/last.out")" "^artifact +$ID "
expect_match "ls: the action-cache entry names it" "$(cat "$TMP/last.out")" "^ac +[0-9a-f]{64} +- +[^ ]+ +${ID:0:12}$"
expect_eq "ls: one row per entry" "$(($(wc -l <"$TMP/last.out") - 1))" "$((B0 + 2))"
check "cache ls --kind blob --limit 2 --json" "$CLI" cache ls --kind blob --limit 2 --json
expect_eq "ls --limit 2: two entries, total all blobs" "$(jget "$TMP/last.out" entries.1.kind) $(jget "$TMP/last.out" total)" "blob $B0"
expect_match "ls --limit 2: a cursor for the next page" "$(jget "$TMP/last.out" next)" '^[0-9]+\.[0-9]{9}\.0\.[0-9a-f]{64}$'
# every page by its cursor: each entry once, in the order of one big page
check "ls --json (all, one page)" "$CLI" cache ls --json
jget "$TMP/last.out" 'entries.*.id' | tr ' ' '\n' >"$TMP/ls.all"
expect_eq "ls: the last page has no next" "$(jexpr "$TMP/last.out" '"next" in d')" false
: >"$TMP/ls.paged"; cur=; pages=0
while [ $pages -lt 50 ]; do
	"$CLI" cache ls --limit 3 --json ${cur:+--cursor "$cur"} >"$TMP/page.json" || break
	jget "$TMP/page.json" 'entries.*.id' | tr ' ' '\n' >>"$TMP/ls.paged"
	pages=$((pages + 1))
	cur=$(jexpr "$TMP/page.json" 'd.get("next", "")')
	[ -z "$cur" ] && break
done
expect_eq "ls by pages of 3: the same entries in the same order" "$(cat "$TMP/ls.paged")" "$(cat "$TMP/ls.all")"
expect_eq "ls by pages: $(wc -l <"$TMP/ls.all") entries in $pages pages" "$pages" "$(( ($(wc -l <"$TMP/ls.all") + 2) / 3 ))"
check "cache ls --limit 1: for people" "$CLI" cache ls --limit 1
expect_match "ls --limit 1: says how to get the next page" "$(tail -1 "$TMP/last.out")" \
	"^\(1 of $((B0 + 2)) entries; --limit N shows more, --cursor [0-9.a-f]+ the next page\)$"
expect_eq "a cursor that is none: 400" \
	"$(dcurl a -o "$TMP/bad.json" -w '%{http_code}' "$U/v1/cache/entries?cursor=12.34.5.zz")" 400
expect_match "which names it" "$(jget "$TMP/bad.json" error.message)" "query 'cursor'"
check_status "ls --cursor with a quote: usage error" 2 "$CLI" cache ls --cursor "1'2"
check_status "ls --kind bogus: usage error" 2 "$CLI" cache ls --kind bogus
check_status "rm without ID: usage error" 2 "$CLI" cache rm
check_status "rm of an unknown id: 404 (exit 2)" 2 "$CLI" cache rm 0000000000000000000000000000000000000000000000000000000000000000
expect_match "rm unknown: says so" "$(head -1 "$TMP/last.err")" '^error\[E0800\]'
check "rm the artifact" "$CLI" cache rm "$ID"
expect_eq "rm: prints what went" "$(cat "$TMP/last.out")" "Removed  artifact $ID (and its action-cache entries)"
expect_eq "rm: artifact and its entry gone" "$(cstat a artifacts) $(cstat a ac_entries)" "0 0"
check "compile after rm: compiles again" compile "$TMP/mlp3"
expect_eq "that was a miss" "$(cstat a ac_misses)" "2"
check "rm a blob (the input)" "$CLI" cache rm "$IN"
expect_eq "rm blob: gone" "$(dcurl a -o /dev/null -w '%{http_code}' "$U/v1/blobs/$IN")" 404
check "run after rm: uploads the input again" "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r2.npz"
check "same result" cmp "$TMP/r1.npz" "$TMP/r2.npz"

# ---- a corrupted blob: detected on read, dropped, counted, re-uploaded -------------------------
flip "$(blobpath a "$IN")"
st=$(dcurl a -o /dev/null -w '%{http_code}' "$U/v1/blobs/$IN")
expect_eq "GET of a corrupted blob: 404, as if missing" "$st" 404
expect_eq "it was counted" "$(cstat a integrity_failures)" 1
check "it was dropped" test ! -e "$(blobpath a "$IN")"
check "the log says so" grep -q "blob $IN does not hash to its name: dropped" "$TMP/a.log"
check "run again: uploads it again" "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r3.npz"
check "same result after recovery" cmp "$TMP/r1.npz" "$TMP/r3.npz"
flip "$(blobpath a "$IN")"
check "corrupted again: the client's next run re-uploads (blobs/missing verifies)" \
	"$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r4.npz"
check "same result" cmp "$TMP/r1.npz" "$TMP/r4.npz"
expect_eq "two integrity failures" "$(cstat a integrity_failures)" 2

# ---- a corrupted artifact file: compile recompiles, run re-imports -------------------------------
big=$(ls -S "$TMP/a.cache/artifacts/${ID:0:2}/$ID"/weights/* | head -1)
flip "$big"
miss0=$(cstat a ac_misses)
check "compile with a corrupted artifact: succeeds" compile "$TMP/mlp4"
expect_eq "it was a miss (recompiled)" "$(cstat a ac_misses)" "$((miss0 + 1))"
# the artifact's weights file is a hard link to its blob, which is also
# the uploaded weights (the same bytes): both are found corrupt, both counted
expect_eq "counted (the artifact, and the blob its file shares)" "$(cstat a integrity_failures)" 4
check "the recompiled files are intact" diff -r "$TMP/mlp" "$TMP/mlp4"
check "the log names the artifact" grep -q "artifact $ID failed its integrity check" "$TMP/a.log"
big=$(ls -S "$TMP/a.cache/artifacts/${ID:0:2}/$ID"/weights/* | head -1)
flip "$big"
st=$(dcurl a -o "$TMP/j.json" -w '%{http_code}' -d "{\"artifact\":\"$ID\",\"input\":\"$IN\"}" "$U/v1/jobs")
expect_eq "a run of the corrupted artifact id: 404" "$st" 404
expect_match "which says why" "$(jget "$TMP/j.json" error.message)" "failed its integrity check"
flip "$big" 2>/dev/null   # (gone with the directory)
check "run --artifact DIR: re-imports and succeeds" "$CLI" run --artifact "$TMP/mlp" --input "$M/input.npz" --out "$TMP/r5.npz"
check "same result" cmp "$TMP/r1.npz" "$TMP/r5.npz"

# ---- gc ----------------------------------------------------------------------------------------
touch "$TMP/a.cache/tmp/stale.up" && touch -d '2 hours ago' "$TMP/a.cache/tmp/stale.up"
touch "$TMP/a.cache/tmp/fresh.up"
W=$(jget "$TMP/mlp/manifest.json" files.0.sha256)
rm -f "$(blobpath a "$W")"      # a blob an artifact lists goes missing
check "cache gc" "$CLI" cache gc --json
expect_eq "gc: dropped the artifact that lost a blob" "$(jget "$TMP/last.out" artifacts_dropped)" 1
expect_eq "gc: removed the stale temp file only" "$(jget "$TMP/last.out" tmp_removed)" 1
check "gc: the fresh temp file stays" test -e "$TMP/a.cache/tmp/fresh.up"
expect_eq "gc: no artifact left" "$(cstat a artifacts)" 0
expect_eq "gc: entries naming it went with it" "$(cstat a ac_entries)" 0
S=$(sha256sum "$M/spec.yaml" | cut -c1-64)
flip "$(blobpath a "$S")"
check "cache gc --verify" "$CLI" cache gc --verify
expect_match "gc --verify: reports the bad blob" "$(cat "$TMP/last.out")" '^verified +[0-9]+ blobs, 1 bad \(dropped\)$'
check "compile after gc: recompiles and succeeds" compile "$TMP/mlp5"
check "same files" diff -r "$TMP/mlp" "$TMP/mlp5"

# ---- restart keeps the cache and its index --------------------------------------------------------
declare -A before
for f in blobs blob_bytes artifacts ac_entries ac_hits integrity_failures; do before[$f]=$(cstat a $f); done
stop_daemon a
start_daemon a || { finish; exit 1; }
for f in blobs blob_bytes artifacts ac_entries; do
	expect_eq "restart: $f unchanged" "$(cstat a $f)" "${before[$f]}"
done
expect_eq "restart: counters kept (saved at shutdown)" "$(cstat a ac_hits) $(cstat a integrity_failures)" \
	"${before[ac_hits]} ${before[integrity_failures]}"
check "compile after restart" compile "$TMP/mlp6"
expect_eq "restart: the compile is a cache hit" "$(cstat a ac_hits)" "$((before[ac_hits] + 1))"
expect_eq "restart: no new entries" "$(cstat a blobs) $(cstat a artifacts) $(cstat a ac_entries)" \
	"${before[blobs]} ${before[artifacts]} ${before[ac_entries]}"
check "run by id after restart" "$CLI" run --artifact "$ID" --input "$M/input.npz" --out "$TMP/r6.npz"
check "same result" cmp "$TMP/r1.npz" "$TMP/r6.npz"

# ---- eviction under a small --cache-max while jobs run --------------------------------------------
# tiny_mlp's artifact with its spec and weights is ~9 KiB of blobs; each job adds an input,
# a result and a report (~850 B): 24 concurrent jobs hold ~30 KiB at most. Twenty old
# 1000-byte blobs push the cache past a 32000-byte bound, so the jobs' stores evict (least
# recently used first) while they run, and never what a queued or running job needs.
"$PY" - "$TMP" <<'PYEOF'
import sys, numpy as np
for i in range(24):
    np.savez(f"{sys.argv[1]}/in{i}.npz", x=np.full((1, 8), i, "<f4"))
for i in range(20):
    open(f"{sys.argv[1]}/fill{i}", "wb").write(bytes([i]) * 1000)
PYEOF
start_daemon b --cache-max 32000 --workers 2 || { finish; exit 1; }
export EULERNPU_SERVER=unix:$TMP/b.sock
for i in $(seq 0 19); do
	d=$(sha256sum "$TMP/fill$i" | cut -c1-64)
	dcurl b -o /dev/null -X PUT --data-binary @"$TMP/fill$i" "$U/v1/blobs/$d"
done
expect_eq "b: 20 blobs under the bound" "$(cstat b blobs) $(cstat b evictions)" "20 0"
for d in "$TMP"/b.cache/cas/*/*; do touch -d '1 hour ago' "$d"; done
check "b: compile" compile "$TMP/mlpb"
pids=()
for i in $(seq 0 23); do
	"$CLI" run --artifact "$TMP/mlpb" --input "$TMP/in$i.npz" --out "$TMP/out$i.npz" \
		>"$TMP/run$i.out" 2>"$TMP/run$i.err" &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
expect_eq "b: all 24 concurrent runs succeed under the bound" "$fails" 0
[ "$fails" = 0 ] || { cat "$TMP"/run*.err | sort | uniq -c | head -10; tail -20 "$TMP/b.log"; }
ev=$(cstat b evictions)
check "b: evictions happened ($ev)" test "$ev" -gt 0
jget "$TMP/mlpb/manifest.json" 'files.*.sha256' >"$TMP/arts.txt"
gone=0
for d in $(cat "$TMP/arts.txt"); do [ -e "$(blobpath b "$d")" ] || gone=$((gone + 1)); done
expect_eq "b: the artifact's blobs (needed by every job) were not evicted" "$gone" 0
check "b: held <= max after the runs" test "$(cstat b blob_bytes)" -le 32000
check "b: evicted bytes counted" test "$(cstat b evicted_bytes)" -gt 0
check "b: the log reports evictions" grep -q "cache: evicted" "$TMP/b.log"
"$PY" - "$TMP" <<'PYEOF' >"$TMP/chk.out" 2>&1
import sys, numpy as np
t = sys.argv[1]
for i in range(24):
    a = np.load(f"{t}/out{i}.npz")
    assert list(a.keys()) and all(np.isfinite(a[k]).all() for k in a), i
print("ok")
PYEOF
expect_eq "b: every result is a readable npz" "$(cat "$TMP/chk.out")" ok
check "b: blob bytes back under the bound after a gc" "$CLI" cache gc --json
check "b: held <= max" test "$(jget "$TMP/last.out" blob_bytes)" -le 32000
# what the evictions took out is off the disk once gc answers: nothing
# pending for the reclaimer, no ".rm" left in tmp/
expect_eq "b: nothing left to reclaim after a gc" "$(cstat b reclaiming)" 0
expect_eq "b: no evicted path left in tmp/ after a gc" "$(find "$TMP/b.cache/tmp" -name '*.rm' | wc -l)" 0
check "b: a run after the evictions still succeeds" "$CLI" run --artifact "$TMP/mlpb" --input "$M/input.npz" --out "$TMP/rb.npz"
check "b: same result as a" cmp "$TMP/r1.npz" "$TMP/rb.npz"

finish
