/* fault.h: named fault points for the crash tests (tests/e2e/faults.sh),
 * and the mapping of a full or failing cache disk to E0810.
 *
 * EULERNPUD_FAULT=NAME or NAME:N (N >= 1: the Nth pass of that point; plain
 * NAME is the first) makes the thread that reaches the point log
 * "fault point NAME reached: pausing" (warn), write its pid followed by a
 * newline to the file named by EULERNPUD_FAULT_FILE (when set), and then
 * pause forever, so that the test kills the daemon with SIGKILL at exactly
 * that moment. Other threads go on serving. Unset, a point costs one branch.
 * The points:
 *   upload     a blob upload: part of the body is in the temporary file, not
 *              yet hashed to the end, fsynced or renamed into cas/
 *   compile    a compile: its files are written in tmp/ and the first is
 *              stored in the CAS; artifacts/<id> and ac/<key> not yet there
 *   evict      a --cache-max eviction or a gc (also the start-up pass, in
 *              the background while the daemon answers): the first blob is
 *              removed, the rest of the pass (and artifacts that lost a
 *              blob) not yet
 *   migrate    the start-up move of a flat ac/ and artifacts/ into their
 *              fan-out directories: one entry moved, the rest still flat
 *              (the daemon does not listen yet)
 *   result     a job's result: result.npz is made (in memory), not yet stored
 *              in the CAS, and the job is still running
 *   drop       an artifact's removal (cache rm, eviction, a damaged one): its
 *              action-cache entries are gone, its directory is renamed
 *              into tmp/ and not yet deleted
 *   board-run  a worker took a job and hangs before running it (meant for a
 *              board agent: it accepted the job, answers health and GET
 *              "running", and the lab server's --job-timeout must end it)
 * Never set it in production: a paused request never ends.
 *
 * EULERNPUD_HOLD=PATH (tests only) is a gate in front of every local job:
 * while PATH exists, a worker that has taken a job keeps it "running"
 * without running an op; removing PATH lets it (and every held job) go on,
 * and a cancel, a --job-timeout or a shutdown ends the wait (the run then
 * stops before its first op, as a cancelled run does). A test that needs a
 * job to stay running or queued behind another creates PATH and removes it
 * when the jobs may end: no test depends on how long a model takes. */
#ifndef SRV_FAULT_H
#define SRV_FAULT_H

#include "err.h"

/* Read EULERNPUD_FAULT and EULERNPUD_FAULT_FILE once (main, before any
 * thread). An unparsable value is logged and ignored. */
void srv_fault_init(void);

/* A named point: pauses the calling thread forever when it is the one
 * armed (see above); returns at once otherwise. Thread-safe. */
void srv_fault_point(const char *name);

/* The EULERNPUD_HOLD gate (above): returns at once when it is unset or its
 * file is absent, else once the file is gone or *cancel is non-zero.
 * Thread-safe. */
void srv_fault_hold(const volatile int *cancel);

/* 1 when a gate or a fault point is configured (EULERNPUD_HOLD,
 * EULERNPUD_FAULT): a run may pause, so it is never run on an HTTP thread. */
int srv_fault_may_pause(void);

/* An I/O failure of the cache's own disk (an E0003 from the core library,
 * which cannot tell the server's disk from the user's, whose sys_errno is
 * ENOSPC, EDQUOT, EIO or EROFS) becomes E0810, 507: the client then says
 * the server's storage is full. Returns e->code. */
int srv_fault_storage(enpu_err *e);

#endif
