#!/usr/bin/env bash
# metrics.sh: GET /metrics and the request log against a real daemon. The
# counters move by exactly what known requests should move them by (health
# calls, a compile miss then hit, a finished job); histograms are cumulative
# with _count equal to the +Inf bucket; the page is valid text format 0.0.4;
# every request logs one logfmt line with a level and its request id; a
# bearer token never reaches the log.
. "$(dirname "$0")/lib.sh"

MLP=$EX/tiny_mlp
U=http://localhost

scrape() { dcurl "$1" "$U/metrics"; }
# val PAGE 'name{labels}': the sample's value (0 when absent)
val() {
	local v
	v=$(awk -v k="$2" '$1 == k {print $2; exit}' <<<"$1")
	echo "${v:-0}"
}

start_daemon m --workers 1 || { finish; exit 1; }

# ---- the page itself ---------------------------------------------------------------------------
page=$(scrape m)
expect_eq "GET /metrics 200 text/plain; version=0.0.4" \
	"$(dcurl m -o /dev/null -w '%{http_code} %{content_type}' "$U/metrics")" \
	"200 text/plain; version=0.0.4; charset=utf-8"
for m in eulernpu_http_requests_total eulernpu_http_request_duration_seconds eulernpu_jobs_total \
	eulernpu_queue_depth eulernpu_jobs_running eulernpu_job_queue_seconds eulernpu_job_run_seconds \
	eulernpu_cache_bytes eulernpu_cache_entries eulernpu_cache_hits_total eulernpu_cache_misses_total \
	eulernpu_cache_evictions_total eulernpu_boards eulernpu_boards_busy eulernpu_build_info; do
	check "$m has # HELP and # TYPE" grep -q "^# TYPE $m [a-z]*$" <<<"$page"
done
# Every sample line is NAME{labels} VALUE with quoted label values, and
# every family's samples follow its # TYPE line (the text format's rules).
printf '%s\n' "$page" >"$TMP/page1.txt"
bad=$("$PY" - "$TMP/page1.txt" <<'EOF'
import re, sys
types, cur, bad = {}, None, []
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$')
for line in open(sys.argv[1]).read().splitlines():
    if line.startswith('# HELP '):
        continue
    if line.startswith('# TYPE '):
        _, _, name, t = line.split(' ', 3)
        if name in types: bad.append('family twice: ' + name)
        types[name] = t; cur = name
        continue
    m = sample.match(line)
    if not m:
        bad.append('bad line: ' + line); continue
    n = m.group(1)
    base = re.sub(r'_(bucket|sum|count)$', '', n) if types.get(re.sub(r'_(bucket|sum|count)$', '', n)) == 'histogram' else n
    if base != cur: bad.append('sample outside its family: ' + line)
print('\n'.join(bad[:5]) or 'none')
EOF
)
expect_eq "the page is valid Prometheus text format" "$bad" none
expect_match "build_info names the version" "$page" '^eulernpu_build_info\{version="[0-9]+\.[0-9]+\.[0-9]+"\} 1$'

# ---- N health calls: exactly +N ------------------------------------------------------------------
H='eulernpu_http_requests_total{route="/v1/health",method="GET",status="200"}'
before=$(val "$(scrape m)" "$H")
for _ in 1 2 3 4 5 6 7; do dcurl m -o /dev/null "$U/v1/health"; done
after=$(val "$(scrape m)" "$H")
expect_eq "7 health calls: requests_total{route=/v1/health,status=200} +7" "$((after - before))" 7
dcurl m -o /dev/null "$U/v1/jobs/0123456789abcdef"
dcurl m -o /dev/null "$U/no/such/path?token=x"
page=$(scrape m)
expect_match "a 404 of a job counts under the route pattern, not the raw path" "$page" \
	'^eulernpu_http_requests_total\{route="/v1/jobs/\*",method="GET",status="404"\} 1$'
expect_match "a path no route matches counts as route=unmatched" "$page" \
	'^eulernpu_http_requests_total\{route="unmatched",method="GET",status="404"\} 1$'
expect_eq "no raw path becomes a label" "$(grep -c -e 0123456789abcdef -e /no/such <<<"$page")" 0

# ---- histograms: cumulative, _count = +Inf -------------------------------------------------------
printf '%s\n' "$page" >"$TMP/page2.txt"
hist_ok=$("$PY" - "$TMP/page2.txt" <<'EOF'
import re, sys, collections
b = collections.defaultdict(list); cnt = {}
for line in open(sys.argv[1]).read().splitlines():
    m = re.match(r'^(\w+)_bucket\{(.*),le="([^"]+)"\} (\d+)$', line)
    if m:
        b[(m.group(1), m.group(2))].append((m.group(3), int(m.group(4)))); continue
    m = re.match(r'^(\w+)_count\{(.*)\} (\d+)$', line)
    if m: cnt[(m.group(1), m.group(2))] = int(m.group(3))
errs = []
want = ['0.001', '0.005', '0.01', '0.05', '0.1', '0.5', '1', '5', '+Inf']
for k, v in b.items():
    if [le for le, _ in v] != want: errs.append('%s buckets %s' % (k, [le for le, _ in v]))
    if any(v[i][1] > v[i + 1][1] for i in range(len(v) - 1)): errs.append('%s not cumulative' % (k,))
    if cnt.get(k) != v[-1][1]: errs.append('%s _count %s != +Inf %s' % (k, cnt.get(k), v[-1][1]))
print('none' if b and not errs else '; '.join(errs[:3]) or 'no histogram')
EOF
)
expect_eq "histograms: buckets .001 .. 5 +Inf, cumulative, _count = +Inf bucket" "$hist_ok" none
hc=$(val "$page" 'eulernpu_http_request_duration_seconds_count{route="/v1/health"}')
expect_eq "the latency histogram of /v1/health counted every health call" "$hc" \
	"$(val "$page" "$H")"

# ---- compile: a miss, then a hit -----------------------------------------------------------------
p0=$(scrape m)
dcurl m -o "$TMP/c1.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" "$U/v1/compile"
p1=$(scrape m)
dcurl m -o "$TMP/c2.json" -F spec=@"$MLP/spec.yaml" -F weights=@"$MLP/weights.npz" "$U/v1/compile"
p2=$(scrape m)
expect_eq "compiles: the first cached false, the second true" \
	"$(jget "$TMP/c1.json" cached) $(jget "$TMP/c2.json" cached)" "false true"
AM='eulernpu_cache_misses_total{cache="ac"}'
AH='eulernpu_cache_hits_total{cache="ac"}'
expect_eq "first compile: action-cache misses +1, hits +0" \
	"$(($(val "$p1" "$AM") - $(val "$p0" "$AM"))) $(($(val "$p1" "$AH") - $(val "$p0" "$AH")))" "1 0"
expect_eq "second compile: action-cache hits +1, misses +0" \
	"$(($(val "$p2" "$AH") - $(val "$p1" "$AH"))) $(($(val "$p2" "$AM") - $(val "$p1" "$AM")))" "1 0"
expect_eq "the cache holds one artifact" "$(val "$p2" 'eulernpu_cache_entries{kind="artifact"}')" 1
check "cache_bytes grew with the uploads" test "$(val "$p2" eulernpu_cache_bytes)" -gt \
	"$(stat -c %s "$MLP/weights.npz")"

# ---- a finished job: jobs_total{cpu_ref,succeeded} +1 ---------------------------------------------
ID=$(jget "$TMP/c2.json" artifact)
JS='eulernpu_jobs_total{backend="cpu_ref",state="succeeded"}'
RC='eulernpu_job_run_seconds_count{backend="cpu_ref"}'
QC='eulernpu_job_queue_seconds_count{backend="cpu_ref"}'
p0=$(scrape m)
dcurl m -o "$TMP/j1.json" -F artifact="$ID" -F input=@"$MLP/input.npz" "$U/v1/jobs?wait=60"
expect_eq "the job succeeded" "$(jget "$TMP/j1.json" state)" succeeded
p1=$(scrape m)
expect_eq "a finished job: jobs_total{backend=cpu_ref,state=succeeded} +1" \
	"$(($(val "$p1" "$JS") - $(val "$p0" "$JS")))" 1
expect_eq "... and one observation in each of the queue and run histograms" \
	"$(($(val "$p1" "$QC") - $(val "$p0" "$QC"))) $(($(val "$p1" "$RC") - $(val "$p0" "$RC")))" "1 1"
expect_eq "nothing queued or running afterwards" \
	"$(val "$p1" eulernpu_queue_depth) $(val "$p1" eulernpu_jobs_running)" "0 0"
expect_eq "no boards on a local daemon" \
	"$(val "$p1" 'eulernpu_boards{state="up"}') $(val "$p1" 'eulernpu_boards{state="down"}') $(val "$p1" eulernpu_boards_busy)" \
	"0 0 0"

# ---- the log: one logfmt line per request, with level and request id ---------------------------
stop_daemon m
n_req=$(grep -c ' method=[A-Z]* route=' "$TMP/m.log")
expect_match "request lines are logfmt with ts, level, req id, method, route, status, bytes, ms" \
	"$(grep ' route=/v1/health ' "$TMP/m.log" | head -1)" \
	'^ts=[0-9T:.-]+Z level=info req=[0-9a-f]{16} method=GET route=/v1/health status=200 bytes=[0-9]+ ms=[0-9.]+$'
check "at least the 7 health calls, 2 compiles and the job were logged" test "$n_req" -ge 10
expect_eq "every log line has a level" "$(grep -cv '^ts=[^ ]* level=\(error\|warn\|info\|debug\) ' "$TMP/m.log")" 0
expect_eq "request ids are unique" \
	"$(grep ' method=[A-Z]* route=' "$TMP/m.log" | grep -o ' req=[0-9a-f]*' | sort | uniq -d | wc -l)" 0
check "the raw path of a request is not a route label in the log" \
	bash -c "grep -q 'route=unmatched status=404' '$TMP/m.log' && ! grep -q 'route=/no/such' '$TMP/m.log'"

# ---- journald: no timestamp, a <N> priority prefix ----------------------------------------------
# JOURNAL_STREAM names stderr's device:inode, as systemd sets it
"$BIN/eulernpud" --socket "$TMP/j.sock" --cache "$TMP/j.cache" </dev/null >/dev/null 2>"$TMP/j.stderr" &
jp=$!
EXTRA_PIDS+=("$jp")
for _ in $(seq 200); do
	curl -sf --max-time 2 --unix-socket "$TMP/j.sock" $U/v1/health >/dev/null 2>&1 && break
	sleep 0.05
done
kill -TERM "$jp"; wait "$jp"
JS_ID=$(stat -c '%d:%i' "$TMP/j.stderr")
JOURNAL_STREAM=$JS_ID "$BIN/eulernpud" --socket "$TMP/j.sock" --cache "$TMP/j.cache" \
	</dev/null >/dev/null 2>>"$TMP/j.stderr" &
jp=$!
EXTRA_PIDS+=("$jp")
for _ in $(seq 200); do
	curl -sf --max-time 2 --unix-socket "$TMP/j.sock" $U/v1/health >/dev/null 2>&1 && break
	sleep 0.05
done
kill -TERM "$jp"; wait "$jp"
expect_match "stderr not the journal: lines start with ts=" "$(head -1 "$TMP/j.stderr")" '^ts=[0-9T:.-]+Z level=info '
expect_match "stderr is the journal (JOURNAL_STREAM): <6>level=info, no timestamp" \
	"$(grep ' route=/v1/health ' "$TMP/j.stderr" | tail -1)" '^<6>level=info req=[0-9a-f]{16} method=GET route=/v1/health '

# ---- tokens never reach the log ------------------------------------------------------------------
USER_TOK=metrics-user-token-5f2b9c
BAD_TOK=wrong-token-77d1e0
printf '%s user ci\n' "$USER_TOK" >"$TMP/tokens"
chmod 0600 "$TMP/tokens"
"$BIN/eulernpud" --socket "$TMP/t.sock" --listen 127.0.0.1:0 --port-file "$TMP/t.port" \
	--cache "$TMP/t.cache" --tokens "$TMP/tokens" --log "$TMP/t.log" </dev/null >/dev/null 2>"$TMP/t.stderr" &
tp=$!
EXTRA_PIDS+=("$tp")
port=
for _ in $(seq 200); do
	port=$(cat "$TMP/t.port" 2>/dev/null)
	[ -n "$port" ] && break
	kill -0 "$tp" 2>/dev/null || break
	sleep 0.05
done
T=http://127.0.0.1:${port:-1}
expect_eq "with the token 200, a wrong one 401, in the query string 401" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $USER_TOK" "$T/metrics") $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $BAD_TOK" "$T/v1/backends") $(curl -s -o /dev/null -w '%{http_code}' "$T/v1/backends?token=$BAD_TOK")" \
	"200 401 401"
pt=$(curl -s -H "Authorization: Bearer $USER_TOK" "$T/metrics")
expect_match "the 401s are counted" "$pt" \
	'^eulernpu_http_requests_total\{route="/v1/backends",method="GET",status="401"\} 2$'
kill -TERM "$tp"; wait "$tp"
check "the log has the requests" grep -q 'route=/v1/backends status=401' "$TMP/t.log"
check "neither token appears in the log or on stderr" \
	bash -c "! grep -q -e '$USER_TOK' -e '$BAD_TOK' '$TMP/t.log' '$TMP/t.stderr'"

finish
