#!/usr/bin/env bash
# jobscale.sh: the job table's scale benchmark (issue 14, parts 5 and 7),
# run by `make stress` (tests/stress.sh). Two daemons, each with --workers
# 1, the EULERNPUD_HOLD gate closed (one job held running, the rest stay
# queued) and a --max-queue of a million; build/bench/jobscale fills the
# first one's queue to each size and times a submit, a list of 50, a
# health check, a cancel from the middle and /metrics (and a list of 10000 with
# health probed meanwhile), then lets every job run and prints the RSS per
# finished job; the second daemon's queue expires all at once (SIGSTOP
# until every deadline passed) while health is probed. A benchmark: it
# prints a table and asserts nothing about speed; it fails only when a
# daemon does not answer as documented.
#
#   JOBSCALE_SIZES=100,1000,10000,30000   the queue sizes of the rows
#   JOBSCALE_REPS=5                        repetitions per row (medians)
#   JOBSCALE_EXPIRE=30000                  jobs expiring at once (0 = skip)
#   ENPU_BIN=DIR                           the daemon to measure (default bin)
#   JOBSCALE=PATH                          the tool (default build/bench/jobscale)
. "$(dirname "$0")/../e2e/lib.sh"

SIZES=${JOBSCALE_SIZES:-100,1000,10000,30000}
REPS=${JOBSCALE_REPS:-5}
EXPIRE=${JOBSCALE_EXPIRE:-30000}
TOOL=${JOBSCALE:-$ROOT/build/bench/jobscale}
M=$EX/tiny_mlp
U=http://localhost

[ -x "$TOOL" ] || { notok "jobscale is built ($TOOL)"; finish; exit 1; }
ARGS=(--workers 1 --max-queue 1000000 --job-history 1000000)
hold
EULERNPUD_HOLD=$HOLD start_daemon a "${ARGS[@]}" || { finish; exit 1; }
if [ "$EXPIRE" -gt 0 ]; then
	EULERNPUD_HOLD=$HOLD.x start_daemon x "${ARGS[@]}" || { finish; exit 1; }
	: >"$HOLD.x"
fi

# setup: tiny_mlp compiled on each daemon, its input uploaded
IN=$(sha256sum "$M/input.npz" | cut -d' ' -f1)
setup() {
	dcurl "$1" -o "$TMP/$1.c.json" -F spec=@"$M/spec.yaml" -F weights=@"$M/weights.npz" \
		$U/v1/compile >/dev/null
	dcurl "$1" -o /dev/null -X PUT --data-binary @"$M/input.npz" "$U/v1/blobs/$IN"
	jget "$TMP/$1.c.json" artifact
}
A=$(setup a) || { notok "compile on daemon a"; finish; exit 1; }
XARGS=()
if [ "$EXPIRE" -gt 0 ]; then
	setup x >/dev/null || { notok "compile on daemon x"; finish; exit 1; }
	XARGS=(--expire-socket "$TMP/x.sock" --expire-pid "$(daemon_pid x)" --expire "$EXPIRE")
fi

"$TOOL" --socket "$TMP/a.sock" --pid "$(daemon_pid a)" --artifact "$A" --input "$IN" \
	--hold "$HOLD" --sizes "$SIZES" --reps "$REPS" "${XARGS[@]}"
rc=$?
expect_eq "jobscale ran to its end (every answer as documented)" "$rc" 0
rm -f "$HOLD.x"
stop_daemon a
stop_daemon x
finish
