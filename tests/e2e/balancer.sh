#!/usr/bin/env bash
# balancer.sh: two lab servers behind one address (examples/lab-balancer/):
# eulernpud --node-id n1 and n2 (TCP on 127.0.0.1, tokens, caches of their
# own) and nginx in front with the example's configuration, filled in here.
# A compile through the balancer runs on both nodes (the other imports it);
# 16 clients at once compile and run tiny_mlp and tiny_cnn with `eulernpu
# run` and with curl POST /v1/jobs?wait, every result.npz byte-equal to the
# one a separate daemon makes, the jobs on both nodes; a job's id routes its
# GET, `jobs wait` and event stream to its node; health and /metrics per
# node under /node/NAME/; an id of an unknown node answers 404 E0822.
. "$(dirname "$0")/lib.sh"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
	skip no-nginx "nginx is not installed (package nginx-light: make bench-deps)"
	finish; exit
fi
CLI=$BIN/eulernpu
N=16
unset EULERNPU_SERVER EULERNPU_TOKEN EULERNPU_CACERT
export XDG_CONFIG_HOME=$TMP/xdg

# ---- a node id is checked at start-up -----------------------------------------------------
"$BIN/eulernpud" --socket "$TMP/x.sock" --cache "$TMP/x.cache" --node-id N-1 \
	</dev/null >"$TMP/x.out" 2>"$TMP/x.err"; rc=$?
expect_eq "--node-id N-1: exit 2" "$rc" 2
expect_match "--node-id N-1: says which ids it takes" "$(cat "$TMP/x.err")" \
	"option '--node-id': 'N-1' is not a node id \(1-16 of \[a-z0-9\]\)"

# ---- two lab servers, nginx in front --------------------------------------------------------
TOK=u-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s user lab\n' "$TOK" >"$TMP/tokens"
chmod 600 "$TMP/tokens"
export EULERNPUD_HOLD=$HOLD   # the job gate (lib.sh): closed until `hold`
for n in n1 n2; do
	start_daemon "$n" --role server --node-id "$n" --listen 127.0.0.1:0 --port-file "$TMP/$n.port" \
		--tokens "$TMP/tokens" --workers 2 || { finish; exit 1; }
done
unset EULERNPUD_HOLD
start_daemon ref || { finish; exit 1; }   # the expected results, from a third cache
LP=$(free_port)
LB=http://127.0.0.1:$LP
mkdir -p "$TMP/lb"
chmod 755 "$TMP" "$TMP/lb"   # nginx's workers run as another user
sed -e "s/@LISTEN@/127.0.0.1:$LP/" -e "s/@N1@/127.0.0.1:$(cat "$TMP/n1.port")/" \
	-e "s/@N2@/127.0.0.1:$(cat "$TMP/n2.port")/" "$EX/lab-balancer/nginx.conf" >"$TMP/lb/nginx.conf"
check "the example's nginx.conf, filled in, passes nginx -t" \
	"$NGINX" -t -q -c "$TMP/lb/nginx.conf" -p "$TMP/lb/" -e "$TMP/lb/error.log"
"$NGINX" -c "$TMP/lb/nginx.conf" -p "$TMP/lb/" -e "$TMP/lb/error.log" -g 'daemon off;' \
	</dev/null >/dev/null 2>>"$TMP/lb/stderr" &
EXTRA_PIDS+=($!)
for _ in $(seq 100); do curl -sf --max-time 2 -o /dev/null "$LB/v1/health" && break; sleep 0.05; done
if ! curl -sf --max-time 2 -o /dev/null "$LB/v1/health"; then
	notok "nginx did not start"; cat "$TMP/lb/stderr" "$TMP/lb/error.log" 2>/dev/null | tail -5
	finish; exit 1
fi
tc() { curl -s --max-time 120 -H "Authorization: Bearer $TOK" "$@"; }

# ---- health and metrics: each node by itself, and which one answered --------------------------
for n in n1 n2; do
	expect_eq "/node/$n/v1/health: 200" "$(tc -o "$TMP/h.json" -w '%{http_code}' "$LB/node/$n/v1/health")" 200
	expect_eq "/node/$n/v1/health names $n" "$(jget "$TMP/h.json" node)" "$n"
	expect_eq "/node/$n/v1/health: a lab server" "$(jget "$TMP/h.json" role)" server
	tc -o "$TMP/m.txt" "$LB/node/$n/metrics"
	expect_match "/node/$n/metrics: eulernpu_node_info names $n" "$(cat "$TMP/m.txt")" \
		"^eulernpu_node_info\{node=\"$n\"\} 1$"
done
seen=
for _ in 1 2 3 4; do   # no session header: round robin
	tc -o "$TMP/h.json" "$LB/v1/health"
	seen="$seen $(jget "$TMP/h.json" node)"
done
expect_match "GET /v1/health through the balancer: n1 answers" "$seen" ' n1( |$)'
expect_match "GET /v1/health through the balancer: n2 answers" "$seen" ' n2( |$)'
expect_eq "/metrics through the balancer names a node" \
	"$(tc "$LB/metrics" | grep -cE '^eulernpu_node_info\{node="n[12]"\} 1$')" 1

# ---- the expected results, from the third daemon -------------------------------------------
export EULERNPU_TOKEN=$TOK
for m in tiny_mlp tiny_cnn; do
	check "$m: expected result (a daemon of its own)" env EULERNPU_SERVER="unix:$TMP/ref.sock" \
		sh -c "'$CLI' compile --spec '$EX/$m/spec.yaml' --weights '$EX/$m/weights.npz' --out '$TMP/ref.$m' &&
		       '$CLI' run --artifact '$TMP/ref.$m' --input '$EX/$m/input.npz' --out '$TMP/exp.$m.npz' &&
		       '$CLI' compare --got '$TMP/exp.$m.npz' --expected '$EX/$m/golden.npz' --exact"
done

# ---- compiled through the balancer once, run on either node --------------------------------
# (a variant of tiny_mlp with weights of its own: an artifact no node holds)
"$PY" - "$EX/tiny_mlp/weights.npz" "$TMP/var.npz" <<'PYEOF'
import sys, numpy as np
w = np.load(sys.argv[1])
np.savez(sys.argv[2], **{k: (w[k] * 2).astype(w[k].dtype) for k in w.files})
PYEOF
EULERNPU_SERVER="unix:$TMP/ref.sock" "$CLI" compile --spec "$EX/tiny_mlp/spec.yaml" --weights "$TMP/var.npz" \
	--out "$TMP/ref.var" >/dev/null &&
	EULERNPU_SERVER="unix:$TMP/ref.sock" "$CLI" run --artifact "$TMP/ref.var" --input "$EX/tiny_mlp/input.npz" \
		--out "$TMP/exp.var.npz" >/dev/null
# its requests (missing blobs, uploads, the compile, the downloads of the
# files) all meet one node: the client's session header (the other node,
# whose cache is empty, would answer 404 to a download)
check "variant: compile through the balancer" env EULERNPU_SERVER="$LB" "$CLI" compile \
	--spec "$EX/tiny_mlp/spec.yaml" --weights "$TMP/var.npz" --out "$TMP/var.art"
compiles() {   # the node's POST /v1/compile that answered 200
	tc "$LB/node/$1/metrics" | sed -n 's/^eulernpu_http_requests_total{route="\/v1\/compile",method="POST",status="200"} //p'
}
imports() {    # the node's PUT /v1/artifacts/ID that imported one (201)
	tc "$LB/node/$1/metrics" | sed -n 's/^eulernpu_http_requests_total{route="\/v1\/artifacts\/\*",method="PUT",status="201"} //p'
}
c1=$(compiles n1) c2=$(compiles n2)
expect_eq "variant: one node compiled it (n1 ${c1:-0}, n2 ${c2:-0})" "$(( ${c1:-0} + ${c2:-0} ))" 1
other=n1; [ "${c1:-0}" = 1 ] && other=n2
for n in n1 n2; do
	check "variant: eulernpu run on $n (/node/$n/)" env EULERNPU_SERVER="$LB/node/$n" "$CLI" run \
		--artifact "$TMP/var.art" --input "$EX/tiny_mlp/input.npz" --out "$TMP/var.$n.npz"
	check "variant: $n's result byte-equal to the expected one" cmp "$TMP/var.$n.npz" "$TMP/exp.var.npz"
done
expect_eq "variant: $other, which did not compile it, imported it" "$(imports "$other")" 1
expect_eq "variant: $other compiled nothing" "$(compiles "$other")" ""

# ---- 16 clients at once: compile and run through the balancer --------------------------------
client() {   # i: compile both models, run each with eulernpu run (exit status in files)
	local i=$1 m d=$TMP/c$1
	mkdir -p "$d"
	export EULERNPU_SERVER=$LB
	for m in tiny_mlp tiny_cnn; do
		timeout 120 "$CLI" compile --spec "$EX/$m/spec.yaml" --weights "$EX/$m/weights.npz" \
			--out "$d/$m.art" >"$d/$m.compile.out" 2>&1
		echo $? >"$d/$m.compile.rc"
		timeout 120 "$CLI" run --artifact "$d/$m.art" --input "$EX/$m/input.npz" --out "$d/$m.npz" \
			--json >"$d/$m.run.json" 2>"$d/$m.run.err"
		echo $? >"$d/$m.run.rc"
	done
}
pids=()
for i in $(seq $N); do client "$i" & pids+=($!); EXTRA_PIDS+=($!); done
wait "${pids[@]}"
bad=0 ids=
for i in $(seq $N); do
	for m in tiny_mlp tiny_cnn; do
		d=$TMP/c$i
		if [ "$(cat "$d/$m.compile.rc")" != 0 ] || [ "$(cat "$d/$m.run.rc")" != 0 ] ||
		   ! cmp -s "$d/$m.npz" "$TMP/exp.$m.npz"; then
			bad=$((bad + 1))
			sed 's/^/    | /' "$d/$m.compile.out" "$d/$m.run.err" | head -6
		fi
		ids="$ids $(jget "$d/$m.run.json" id)"
	done
done
expect_eq "$N clients: compile and eulernpu run of both models, every result.npz byte-equal" "$bad" 0

# ---- ... and with curl POST /v1/jobs?wait (round robin: no session) -------------------------
# Both nodes hold both artifacts and inputs first (run once on each, by /node/NAME/).
for n in n1 n2; do
	for m in tiny_mlp tiny_cnn; do
		EULERNPU_SERVER="$LB/node/$n" "$CLI" run --artifact "$TMP/c1/$m.art" --input "$EX/$m/input.npz" \
			--out "$TMP/seed.$n.$m.npz" >/dev/null 2>"$TMP/seed.err" ||
			notok "seeding $n with $m: $(head -2 "$TMP/seed.err")"
	done
done
poster() {   # i: POST /v1/jobs?wait for each model, then GET its result (by the job's id)
	local i=$1 m d=$TMP/c$1 art in
	for m in tiny_mlp tiny_cnn; do
		art=$(sed -n 's/.*"id": *"\([0-9a-f]\{64\}\)".*/\1/p' "$d/$m.art/manifest.json" | head -1)
		in=$(sha256sum "$EX/$m/input.npz" | cut -d' ' -f1)
		tc -o "$d/$m.post.json" -w '%{http_code}' -H 'Content-Type: application/json' \
			-d "{\"artifact\":\"$art\",\"input\":\"$in\"}" "$LB/v1/jobs?wait=60" >"$d/$m.post.code"
		id=$(sed -n 's/^{"id":"\([a-z0-9-]*\)".*/\1/p' "$d/$m.post.json")
		tc -o "$d/$m.post.npz" -w '%{http_code}' "$LB/v1/jobs/$id/result" >"$d/$m.result.code"
	done
}
pids=()
for i in $(seq $N); do poster "$i" & pids+=($!); EXTRA_PIDS+=($!); done
wait "${pids[@]}"
bad=0 posted=
for i in $(seq $N); do
	for m in tiny_mlp tiny_cnn; do
		d=$TMP/c$i
		if [ "$(cat "$d/$m.post.code")" != 200 ] || [ "$(cat "$d/$m.result.code")" != 200 ] ||
		   [ "$(jget "$d/$m.post.json" state)" != succeeded ] || ! cmp -s "$d/$m.post.npz" "$TMP/exp.$m.npz"; then
			bad=$((bad + 1))
			head -c 300 "$d/$m.post.json" | sed 's/^/    | /'; echo
		fi
		posted="$posted $(jget "$d/$m.post.json" id)"
	done
done
expect_eq "$N clients: curl POST /v1/jobs?wait of both models, every result.npz byte-equal" "$bad" 0

# ---- the jobs spread over both nodes -----------------------------------------------------------
all="$ids $posted"
count() { tr ' ' '\n' <<<"$1" | grep -c "^$2-[0-9a-f]\{16\}$"; }
expect_eq "every job id names n1 or n2" "$(( $(count "$all" n1) + $(count "$all" n2) ))" $((4 * N))
# curl's requests carry no session: round robin gives each node half of them
ok_n1=$(count "$posted" n1) ok_n2=$(count "$posted" n2)
expect_eq "curl's jobs on both nodes (n1 $ok_n1, n2 $ok_n2)" "$(( ok_n1 > 0 && ok_n2 > 0 ))" 1
# eulernpu's: one node per client process, by its session's hash (all 32 on
# one node: a chance of 2^-31)
ok_n1=$(count "$ids" n1) ok_n2=$(count "$ids" n2)
expect_eq "eulernpu run's jobs on both nodes (n1 $ok_n1, n2 $ok_n2)" "$(( ok_n1 > 0 && ok_n2 > 0 ))" 1

# ---- a job's id takes its requests to its node ------------------------------------------------
for n in n1 n2; do
	id=$(tr ' ' '\n' <<<"$all" | grep -m1 "^$n-")
	expect_eq "GET /v1/jobs/$n-… through the balancer: 200" \
		"$(tc -o "$TMP/j.json" -w '%{http_code}' "$LB/v1/jobs/$id")" 200
	expect_eq "GET /v1/jobs/$n-…: that job" "$(jget "$TMP/j.json" id) $(jget "$TMP/j.json" state)" "$id succeeded"
	check "eulernpu jobs wait $n-… through the balancer" env EULERNPU_SERVER="$LB" "$CLI" jobs wait "$id"
	expect_eq "GET /v1/jobs/$n-…/report through the balancer: 200" \
		"$(tc -o /dev/null -w '%{http_code}' "$LB/v1/jobs/$id/report")" 200
	o=n1; [ "$n" = n1 ] && o=n2
	expect_eq "/node/$o/v1/jobs/$n-…: 404" "$(tc -o "$TMP/e.json" -w '%{http_code}' "$LB/node/$o/v1/jobs/$id")" 404
	expect_eq "/node/$o/v1/jobs/$n-…: E0822 naming $n" "$(jget "$TMP/e.json" error.code node)" "E0822 $n"
done

# ---- event streams and jobs wait through nginx, while the jobs run -----------------------------
hold
in=$(sha256sum "$EX/tiny_mlp/input.npz" | cut -d' ' -f1)
art=$(jget "$TMP/ref.tiny_mlp/manifest.json" id)
held=
for _ in 1 2; do   # round robin: one on each node
	tc -o "$TMP/held.json" -H 'Content-Type: application/json' \
		-d "{\"artifact\":\"$art\",\"input\":\"$in\"}" "$LB/v1/jobs"
	held="$held $(jget "$TMP/held.json" id)"
done
expect_match "held jobs: one on each node" "$(tr ' ' '\n' <<<"$held" | cut -d- -f1 | sort | tr '\n' ' ')" '^ ?n1 n2 $'
for id in $held; do
	tc -N -o "$TMP/ev.$id" "$LB/v1/jobs/$id/events" & EXTRA_PIDS+=($!)
	EULERNPU_SERVER=$LB timeout 120 "$CLI" jobs wait "$id" >"$TMP/wait.$id" 2>&1 &
	EXTRA_PIDS+=($!)
	echo $! >"$TMP/waitpid.$id"
done
# the gate opens once both streams have brought their first event: it
# came through nginx while the job was still held
set -- $held
release_when sh -c "grep -q '^event: state' '$TMP/ev.$1' && grep -q '^event: state' '$TMP/ev.$2'"
for id in $held; do
	wait "$(cat "$TMP/waitpid.$id")"; rc=$?
	expect_eq "eulernpu jobs wait ${id%%-*}-… (held, then released): exit 0" "$rc" 0
	expect_match "jobs wait ${id%%-*}-…: succeeded" "$(cat "$TMP/wait.$id")" "^$id succeeded"
done
for id in $held; do
	for _ in $(seq 600); do grep -q '"state":"succeeded"' "$TMP/ev.$id" 2>/dev/null && break; sleep 0.1; done
	expect_match "events of ${id%%-*}-… through nginx: running, then succeeded" \
		"$(grep '^data:' "$TMP/ev.$id" | sed 's/.*"state":"\([a-z_]*\)".*/\1/' | tr '\n' ' ')" \
		'running .*succeeded $'
done
release

# ---- ids the balancer cannot place ------------------------------------------------------------
expect_eq "an unknown node's id: 404" "$(tc -o "$TMP/e.json" -w '%{http_code}' "$LB/v1/jobs/n3-0123456789abcdef")" 404
expect_eq "an unknown node's id: E0822 naming n3" "$(jget "$TMP/e.json" error.code node)" "E0822 n3"
expect_match "an unknown node's id: the message names the owner" "$(jget "$TMP/e.json" error.message)" \
	"job 'n3-0123456789abcdef' belongs to node 'n3'; this server is node 'n[12]'"
expect_eq "a known node, an unknown job: 404 E0800" \
	"$(tc -o "$TMP/e.json" -w '%{http_code}' "$LB/v1/jobs/n2-0123456789abcdef") $(jget "$TMP/e.json" error.code)" "404 E0800"
check_status "eulernpu jobs show n3-…: exit 2" 2 env EULERNPU_SERVER="$LB" "$CLI" jobs show n3-0123456789abcdef
expect_match "eulernpu jobs show n3-…: E0822" "$(head -1 "$TMP/last.err")" '^error\[E0822\]'
finish
