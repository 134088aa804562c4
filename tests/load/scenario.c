/* scenario.c: what the load generator's clients do (tests/load/loadgen.h).
 * The operations: a compile that uploads the blobs the server lacks, and a
 * job followed to its end whose result bytes must hash to its digest. The
 * scenarios: "run" repeats one job of the shared artifact, every result
 * byte-equal to the first; "mix" compiles, runs and reads the cache over
 * the variants, recovering from evictions as client/ does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "digest.h"
#include "loadgen.h"

/* POST /v1/compile of spec + weights, uploading what the server lacks.
 * art: the artifact id. 0, -1 failure, -2 stop. */
int compile(client *c, const char *ds, const char *dw, const char *name, char art[65])
{
	json_object *req = json_object_new_object(), *res = NULL;
	const char *id;
	long st;
	int ret = -1;

	json_object_object_add(req, F_SPEC, json_object_new_string(ds));
	json_object_object_add(req, F_WEIGHTS, json_object_new_string(dw));
	json_object_object_add(req, F_SPEC_NAME, json_object_new_string(name));
	json_object_object_add(req, F_BACKEND, json_object_new_string("cpu_ref"));
	for (int t = 0; t < MAX_TRIES; t++) {
		st = call_json(c, K_COMPILE, "POST", API_COMPILE, req);
		if (st == -2 || (st == 409 && atomic_load(&stopping))) {
			ret = -2;
			goto out;
		}
		if (st == 200 || t == MAX_TRIES - 1)
			break;
		if ((ret = upload_missing(c, K_COMPILE, "compile", "POST", API_COMPILE, st)) != 0)
			goto out;
		ret = -1;
	}
	if (st != 200) {
		show_fail(c, "compile: still missing blobs after retries", "POST", API_COMPILE, st);
		note(c, K_COMPILE, O_FAIL);
		goto out;
	}
	res = resp_json(c);
	id = jstr(res, F_ARTIFACT);
	if (!id || !enpu_is_sha256_hex(id)) {
		show_fail(c, "compile: no artifact id", "POST", API_COMPILE, st);
		note(c, K_COMPILE, O_FAIL);
		goto out;
	}
	note(c, K_COMPILE, O_OK);
	snprintf(art, 65, "%s", id);
	ret = 0;
out:
	json_object_put(req);
	json_object_put(res);
	return ret;
}

/* One job attempt as it goes: the last request's path and status (what a
 * failure shows), the job's id and its latest JSON. */
typedef struct attempt {
	char path[256], jid[100];
	long st;
	json_object *job;
} attempt;

/* Submit a job of art, uploading what the server lacks; a->job gets the
 * answer and a->jid its id. With evict set, a 404 E0800 (the artifact was
 * evicted) is J_NOART. */
static int job_submit(client *c, const char *art, int evict, attempt *a)
{
	json_object *req = json_object_new_object();
	char code[16];
	const char *s;
	int ret = J_FAIL;

	json_object_object_add(req, F_ARTIFACT, json_object_new_string(art));
	json_object_object_add(req, F_INPUT, json_object_new_string(d_input));
	json_object_object_add(req, F_INPUT_NAME, json_object_new_string("input.npz"));
	snprintf(a->path, sizeof a->path, API_JOBS "?" Q_WAIT "=%d", WAIT_S);
	for (int t = 0;; t++) {
		a->st = call_json(c, K_JOB, "POST", a->path, req);
		if (a->st == -2 || (a->st == 409 && atomic_load(&stopping))) {
			ret = J_STOP;
			goto out;
		}
		if (a->st != 409 || t >= MAX_TRIES)
			break;
		if ((ret = upload_missing(c, K_JOB, "submit", "POST", a->path, a->st)) != 0)
			goto out;
		ret = J_FAIL;
	}
	if (a->st == 404 && evict) {
		json_object *o = resp_json(c);
		err_code(o, code);
		json_object_put(o);
		if (!strcmp(code, "E0800")) {
			note(c, K_JOB, O_RECOVERED);
			ret = J_NOART;
			goto out;
		}
	}
	if (a->st != 200 && a->st != 202) {
		show_fail(c, "submit", "POST", a->path, a->st);
		note(c, K_JOB, O_FAIL);
		goto out;
	}
	note(c, K_JOB, O_OK);
	a->job = resp_json(c);
	s = jstr(a->job, F_ID);
	if (!s || strlen(s) >= sizeof a->jid) {
		show_fail(c, "submit: no job id", "POST", a->path, a->st);
		note(c, K_JOB, O_FAIL);
		goto out;
	}
	snprintf(a->jid, sizeof a->jid, "%s", s);
	ret = J_OK;
out:
	json_object_put(req);
	return ret;
}

/* Follow the job to its end (long polls); result gets the digest of its
 * result, which it must have. */
static int job_follow(client *c, attempt *a, char result[65])
{
	const char *s;

	while ((s = jstr(a->job, F_STATE)) && (!strcmp(s, JOB_QUEUED) || !strcmp(s, JOB_RUNNING))) {
		snprintf(a->path, sizeof a->path, API_JOBS "/%s?" Q_WAIT "=%d", a->jid, WAIT_S);
		a->st = call(c, K_POLL, "GET", a->path, NULL, 0, NULL);
		if (a->st == -2)
			return J_STOP;
		if (a->st != 200 && a->st != 202) {
			show_fail(c, "poll", "GET", a->path, a->st);
			note(c, K_POLL, O_FAIL);
			return J_FAIL;
		}
		note(c, K_POLL, O_OK);
		json_object_put(a->job);
		a->job = resp_json(c);
	}
	if (!s || strcmp(s, JOB_SUCCEEDED) != 0 || !(s = jstr(a->job, F_RESULT)) ||
	    !enpu_is_sha256_hex(s)) {
		const char *js = json_object_to_json_string(a->job);
		c->resp.len = 0;
		enpu_buf_adds(&c->resp, js ? js : "(no JSON)");
		show_fail(c, "job did not succeed", "GET", a->path, a->st);
		note(c, K_JOB, O_FAIL);
		return J_FAIL;
	}
	snprintf(result, 65, "%s", s);
	return J_OK;
}

/* Fetch the job's result and check its bytes hash to result. With evict
 * set, a 404 (the result was evicted) is J_RERUN. */
static int job_result(client *c, attempt *a, int evict, const char *result)
{
	char got[65];

	snprintf(a->path, sizeof a->path, API_JOBS "/%s" API_JOB_RESULT, a->jid);
	a->st = call(c, K_RESULT, "GET", a->path, NULL, 0, NULL);
	if (a->st == -2)
		return J_STOP;
	if (a->st == 404 && evict) {
		note(c, K_RESULT, O_RECOVERED);
		return J_RERUN;
	}
	if (a->st != 200) {
		show_fail(c, "result", "GET", a->path, a->st);
		note(c, K_RESULT, O_FAIL);
		return J_FAIL;
	}
	enpu_sha256_hex(c->resp.data ? c->resp.data : "", c->resp.len, got);
	if (strcmp(got, result) != 0) {
		snprintf(c->cerr, sizeof c->cerr, "result bytes hash to %s, the job says %s", got,
			 result);
		show_fail(c, "result digest", "GET", a->path, -1);
		note(c, K_RESULT, O_FAIL);
		return J_FAIL;
	}
	note(c, K_RESULT, O_OK);
	return J_OK;
}

/* Submit a job, follow it to the end, fetch its result and check its bytes
 * against the job's result digest; result gets that digest. With evict
 * set, a 404 for the artifact is J_NOART and one for the result J_RERUN
 * (documented eviction answers); without, both are failures. */
int job_once(client *c, const char *art, int evict, char result[65])
{
	attempt a;
	int ret;

	memset(&a, 0, sizeof a);
	ret = job_submit(c, art, evict, &a);
	if (ret == J_OK)
		ret = job_follow(c, &a, result);
	if (ret == J_OK)
		ret = job_result(c, &a, evict, result);
	json_object_put(a.job);
	return ret;
}

/* Check a result digest against the reference (the first one seen). */
static int same_result(client *c, char ref[65], const char *got, const char *what)
{
	int bad;

	pthread_mutex_lock(&mu);
	if (!ref[0])
		snprintf(ref, 65, "%s", got);
	bad = strcmp(ref, got) != 0;
	pthread_mutex_unlock(&mu);
	if (bad) {
		snprintf(c->cerr, sizeof c->cerr, "%s: result %s differs from the first, %s", what,
			 got, ref);
		show_fail(c, "result not byte-equal", "GET", "result", -1);
		note(c, K_RESULT, O_FAIL);
		return -1;
	}
	return 0;
}

/* Scenario run: one job of the shared artifact. */
static int iter_run(client *c)
{
	char res[65];
	int r = job_once(c, run_art, 0, res);

	if (r == J_STOP)
		return -2;
	if (r != J_OK)
		return -1;
	return same_result(c, run_ref, res, "tiny_mlp");
}

/* Mix: compile variant v (an action-cache hit, or a compile after an
 * eviction or the first time); every compile of one spec must give one id. */
static int mix_compile(client *c, int v)
{
	variant *x = &vars[v];
	char art[65], name[32];
	int r, bad;

	snprintf(name, sizeof name, "mix%d.yaml", v);
	if ((r = compile(c, x->ds, x->dw, name, art)) != 0)
		return r;
	pthread_mutex_lock(&mu);
	if (!x->art[0])
		memcpy(x->art, art, 65);
	bad = strcmp(x->art, art) != 0;
	pthread_mutex_unlock(&mu);
	if (bad) {
		snprintf(c->cerr, sizeof c->cerr, "variant %d compiled to %s, before to %s", v, art,
			 x->art);
		show_fail(c, "compile not deterministic", "POST", API_COMPILE, -1);
		note(c, K_COMPILE, O_FAIL);
		return -1;
	}
	return 0;
}

/* Mix: run variant v, compiling it again when its artifact was evicted and
 * running again when its result was. */
static int mix_run(client *c, int v)
{
	char art[65], res[65], what[32];
	int r = J_NOART;

	pthread_mutex_lock(&mu);
	memcpy(art, vars[v].art, 65);
	pthread_mutex_unlock(&mu);
	for (int t = 0; t < MAX_TRIES; t++) {
		if (t > 0 && atomic_load(&stopping))
			return -2;   /* abandoned, not failed: the run is over */
		if (!art[0] || r == J_NOART) {
			if ((r = mix_compile(c, v)) != 0)
				return r;
			pthread_mutex_lock(&mu);
			memcpy(art, vars[v].art, 65);
			pthread_mutex_unlock(&mu);
		}
		r = job_once(c, art, 1, res);
		if (r == J_STOP)
			return -2;
		if (r == J_FAIL)
			return -1;
		if (r == J_OK) {
			snprintf(what, sizeof what, "variant %d", v);
			return same_result(c, vars[v].result, res, what);
		}
	}
	snprintf(c->cerr, sizeof c->cerr, "variant %d: no result after %d evictions", v, MAX_TRIES);
	show_fail(c, "run", "POST", API_JOBS, -1);
	note(c, K_JOB, O_FAIL);
	return -1;
}

/* Mix: a cache read: the stats, or HEAD of a blob (present or evicted). */
static int mix_read(client *c, int v)
{
	char path[128];
	long st;

	if (rand_r(&c->seed) % 2) {
		st = call(c, K_CACHE, "GET", API_CACHE, NULL, 0, NULL);
		if (st == -2)
			return -2;
		if (st != 200) {
			show_fail(c, "cache stats", "GET", API_CACHE, st);
			note(c, K_CACHE, O_FAIL);
			return -1;
		}
		note(c, K_CACHE, O_OK);
		return 0;
	}
	snprintf(path, sizeof path, API_BLOBS "%s", rand_r(&c->seed) % 2 ? vars[v].dw : d_input);
	st = call(c, K_HEAD, "HEAD", path, NULL, 0, NULL);
	if (st == -2)
		return -2;
	if (st != 200 && st != 404) {
		show_fail(c, "head", "HEAD", path, st);
		note(c, K_HEAD, O_FAIL);
		return -1;
	}
	note(c, K_HEAD, O_OK);
	return 0;
}

static int iter_mix(client *c)
{
	int v = (int)(rand_r(&c->seed) % (unsigned)opt.variants);
	unsigned what = rand_r(&c->seed) % 10;

	if (what < 3)
		return mix_compile(c, v);
	if (what < 8)
		return mix_run(c, v);
	return mix_read(c, v);
}

void *client_main(void *arg)
{
	client *c = arg;

	while (!atomic_load(&stopping)) {
		int r;

		if (opt.requests && atomic_load(&measuring) && atomic_fetch_sub(&tickets, 1) <= 0)
			break;
		r = opt.mix ? iter_mix(c) : iter_run(c);
		if (r == 0 && atomic_load(&measuring))
			c->iters++;
		else if (r == 0)
			atomic_fetch_add(&warm_iters, 1);
	}
	return NULL;
}
