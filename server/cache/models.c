/* models.c: named, versioned models (models.h). In memory, the models
 * sorted by name (found by bsearch), each with its versions in ascending
 * order; on disk one file a model. A change (deploy, retire) is made on a
 * copy of the model, written to its file, then swapped in: readers (a
 * job's resolve, a listing) take the table's lock only to read or swap,
 * never across a write. Changes are serialized by a lock of their own. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "srv.h"
#include "cas.h"
#include "artifact.h"
#include "models.h"
#include "digest.h"
#include "json.h"
#include "api.h"

#define MODEL_FILE_MAX (1u << 20)   /* bytes of one models/<name>.json */

typedef struct mversion {
	long version;
	char artifact[65];
	char backend[32];
	char owner[64];
	char deployed[32];   /* "2026-12-03T13:10:55.123Z" */
} mversion;

typedef struct model {
	char name[SRV_MODEL_NAME_MAX + 1];
	mversion *v;         /* ascending version */
	int n;
} model;

struct srv_models {
	srv_cas *cas;
	char dir[4200];      /* <cache>/models */
	pthread_mutex_t mu;  /* the table (readers and the swap) */
	pthread_mutex_t wmu; /* one change at a time, across its file's write */
	model **m;           /* by name */
	int n, cap;
};

int srv_model_ref_parse(const char *ref, const char *field, char *name, size_t cap,
			long *version, enpu_err *e)
{
	const char *colon = ref ? strchr(ref, ':') : NULL;
	size_t n = colon ? (size_t)(colon - ref) : (ref ? strlen(ref) : 0);

	*version = 0;
	if (!ref || n >= cap || n > SRV_MODEL_NAME_MAX)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, field, NULL,
				 "'%.80s' is not a model name (1-%d letters, digits, '.', '_', '-')",
				 ref ? ref : "", SRV_MODEL_NAME_MAX);
	memcpy(name, ref, n);
	name[n] = '\0';
	if (!enpu_model_name_ok(name))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, field, NULL,
				 "'%.80s' is not a model name (1-%d letters, digits, '.', '_', '-', "
				 "beginning with a letter or digit)", name, SRV_MODEL_NAME_MAX);
	if (colon && !(*version = enpu_model_version_parse(colon + 1)))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, field, NULL,
				 "'%.40s' is not a model version (a number from 1 to %ld)",
				 colon + 1, SRV_MODEL_VERSION_MAX);
	return 0;
}

static void model_free(model *md)
{
	if (md) {
		free(md->v);
		free(md);
	}
}

static model *model_copy(const model *md)
{
	model *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	*c = *md;
	c->v = NULL;
	if (md->n && !(c->v = malloc((size_t)md->n * sizeof *c->v))) {
		free(c);
		return NULL;
	}
	if (md->n)
		memcpy(c->v, md->v, (size_t)md->n * sizeof *c->v);
	return c;
}

/* The slot of name in the sorted table: *found 1 when it is there. */
static int find_slot(const srv_models *m, const char *name, int *found)
{
	int lo = 0, hi = m->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2, c = strcmp(m->m[mid]->name, name);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static int find_version(const model *md, long version)
{
	for (int i = 0; i < md->n; i++)
		if (md->v[i].version == version)
			return i;
	return -1;
}

/* ---- the files ------------------------------------------------------------------- */

static void model_path(const srv_models *m, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s.json", m->dir, name);
}

static json_object *version_json(const mversion *v, int with_ready, srv_cas *c)
{
	json_object *o = json_object_new_object();
	char num[24];
	int bad = !o;

	if (bad)
		return NULL;
	snprintf(num, sizeof num, "%ld", v->version);
	enpu_json_put(o, F_VERSION, json_object_new_string(num), &bad);
	enpu_json_put(o, F_ARTIFACT, json_object_new_string(v->artifact), &bad);
	enpu_json_put(o, F_BACKEND, json_object_new_string(v->backend), &bad);
	enpu_json_put(o, F_OWNER, json_object_new_string(v->owner), &bad);
	enpu_json_put(o, F_DEPLOYED, json_object_new_string(v->deployed), &bad);
	if (with_ready)
		enpu_json_put(o, F_READY,
			      json_object_new_boolean(srv_cas_has_artifact(c, v->artifact)), &bad);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Write md's file (or remove it when md has no version): 0 or -1 + *e. */
static int model_store(srv_models *m, const model *md, enpu_err *e)
{
	char path[4300];
	json_object *o, *arr;
	enpu_buf b = ENPU_BUF_INIT;
	int bad = 0, rc;

	model_path(m, md->name, path, sizeof path);
	if (md->n == 0) {
		if (unlink(path) != 0 && errno != ENOENT)
			return enpu_fail(e, ENPU_E_STORAGE, md->name, NULL,
					 "cannot remove '%s': %s", path, strerror(errno));
		srv_fsync_dir(m->dir);
		return 0;
	}
	o = json_object_new_object();
	arr = json_object_new_array();
	if (!o || !arr) {
		json_object_put(o);
		json_object_put(arr);
		return enpu_fail(e, ENPU_E_NOMEM, md->name, NULL, "out of memory");
	}
	enpu_json_put(o, F_NAME, json_object_new_string(md->name), &bad);
	for (int i = 0; i < md->n; i++)
		enpu_json_push(arr, version_json(&md->v[i], 0, NULL), &bad);
	enpu_json_put(o, F_VERSIONS, arr, &bad);
	if (bad || enpu_json_dump(o, &b, e) < 0) {
		json_object_put(o);
		enpu_buf_free(&b);
		return enpu_fail(e, ENPU_E_NOMEM, md->name, NULL, "out of memory");
	}
	json_object_put(o);
	rc = srv_cas_write_atomic(m->cas, path, b.data, b.len, e);
	enpu_buf_free(&b);
	return rc;
}

static int str_field(json_object *o, const char *k, char *out, size_t cap)
{
	json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string) ||
	    !(s = json_object_get_string(v)) || strlen(s) >= cap || !*s)
		return -1;
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

/* models/<file> read back: what model_store writes, and nothing else. A
 * model, or NULL with why (for the log). */
static model *model_read(srv_models *m, const char *file, char *why, size_t wcap)
{
	char path[4300], name[SRV_MODEL_NAME_MAX + 8];
	size_t fl = strlen(file);
	struct stat st;
	enpu_buf b = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	json_object *root = NULL, *vs;
	model *md = NULL;
	int n;

	snprintf(why, wcap, "not a model file");
	if (fl < 6 || strcmp(file + fl - 5, ".json") || fl - 5 > SRV_MODEL_NAME_MAX)
		return NULL;
	memcpy(name, file, fl - 5);
	name[fl - 5] = '\0';
	if (!enpu_model_name_ok(name))
		return NULL;
	snprintf(path, sizeof path, "%s/%s", m->dir, file);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, wcap, "not a regular file");
		return NULL;
	}
	if (enpu_read_file(path, MODEL_FILE_MAX, &b, &e) != 0 ||
	    !(root = enpu_json_parse((const char *)b.data, b.len, file, &e))) {
		snprintf(why, wcap, "%.200s", e.message);
		goto out;
	}
	snprintf(why, wcap, "not what the daemon writes");
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, F_VERSIONS, &vs) ||
	    !json_object_is_type(vs, json_type_array) ||
	    (n = (int)json_object_array_length(vs)) < 1 || n > SRV_MODEL_VERSIONS_MAX ||
	    !(md = calloc(1, sizeof *md)) || !(md->v = calloc((size_t)n, sizeof *md->v)))
		goto bad;
	if (str_field(root, F_NAME, md->name, sizeof md->name) || strcmp(md->name, name)) {
		snprintf(why, wcap, "its name is not its file's");
		goto bad;
	}
	for (int i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(vs, (size_t)i);
		mversion *x = &md->v[i];
		char num[16];

		if (!json_object_is_type(v, json_type_object) ||
		    str_field(v, F_VERSION, num, sizeof num) ||
		    !(x->version = enpu_model_version_parse(num)) ||
		    (i && x->version <= md->v[i - 1].version) ||
		    str_field(v, F_ARTIFACT, x->artifact, sizeof x->artifact) ||
		    !enpu_is_sha256_hex(x->artifact) ||
		    str_field(v, F_BACKEND, x->backend, sizeof x->backend) ||
		    str_field(v, F_OWNER, x->owner, sizeof x->owner) ||
		    str_field(v, F_DEPLOYED, x->deployed, sizeof x->deployed)) {
			snprintf(why, wcap, "version %d of %d is not what the daemon writes", i + 1, n);
			goto bad;
		}
		md->n++;
	}
	goto out;
bad:
	model_free(md);
	md = NULL;
out:
	json_object_put(root);
	enpu_buf_free(&b);
	return md;
}

static int table_insert(srv_models *m, int at, model *md)
{
	if (m->n == m->cap) {
		int ncap = m->cap ? m->cap * 2 : 16;
		model **nm = realloc(m->m, (size_t)ncap * sizeof *nm);
		if (!nm)
			return -1;
		m->m = nm;
		m->cap = ncap;
	}
	memmove(m->m + at + 1, m->m + at, (size_t)(m->n - at) * sizeof *m->m);
	m->m[at] = md;
	m->n++;
	return 0;
}

srv_models *srv_models_open(srv_cas *c, enpu_err *e)
{
	srv_models *m = calloc(1, sizeof *m);
	DIR *d;
	struct dirent *de;

	if (!m) {
		enpu_fail(e, ENPU_E_NOMEM, "models", NULL, "out of memory");
		return NULL;
	}
	m->cas = c;
	pthread_mutex_init(&m->mu, NULL);
	pthread_mutex_init(&m->wmu, NULL);
	snprintf(m->dir, sizeof m->dir, "%s/models", srv_cas_root(c));
	if (mkdir(m->dir, 0755) == 0)
		srv_fsync_dir(srv_cas_root(c));
	else if (errno != EEXIST) {
		enpu_fail(e, ENPU_E_STORAGE, m->dir, NULL, "cannot create '%s': %s", m->dir,
			  strerror(errno));
		srv_models_close(m);
		return NULL;
	}
	if (!(d = opendir(m->dir))) {
		enpu_fail(e, ENPU_E_STORAGE, m->dir, NULL, "cannot read '%s': %s", m->dir,
			  strerror(errno));
		srv_models_close(m);
		return NULL;
	}
	while ((de = readdir(d))) {
		char why[256];
		model *md;
		int found, at;

		if (de->d_name[0] == '.')
			continue;
		if (!(md = model_read(m, de->d_name, why, sizeof why))) {
			srv_log("warn", "models/%s: %s; left out", de->d_name, why);
			continue;
		}
		at = find_slot(m, md->name, &found);
		if (found || table_insert(m, at, md) != 0)
			model_free(md);
	}
	closedir(d);
	return m;
}

void srv_models_close(srv_models *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n; i++)
		model_free(m->m[i]);
	free(m->m);
	pthread_mutex_destroy(&m->mu);
	pthread_mutex_destroy(&m->wmu);
	free(m);
}

/* ---- changes ----------------------------------------------------------------------- */

/* Swap md in for name's entry (md NULL or without versions: remove it). */
static void table_swap(srv_models *m, const char *name, model *md)
{
	int found, at;
	model *old = NULL;

	pthread_mutex_lock(&m->mu);
	at = find_slot(m, name, &found);
	if (found) {
		old = m->m[at];
		if (md && md->n)
			m->m[at] = md;
		else {
			memmove(m->m + at, m->m + at + 1, (size_t)(m->n - at - 1) * sizeof *m->m);
			m->n--;
		}
	} else if (md && md->n && table_insert(m, at, md) != 0) {
		old = md;   /* stored, not shown until a restart: memory ran out */
	}
	pthread_mutex_unlock(&m->mu);
	if (!md || !md->n)
		model_free(md);
	model_free(old);
}

/* A changed copy made the model: its file written, then swapped in (md is
 * the table's, or freed, on 0; still the caller's on -1). Under wmu. */
static int model_commit(srv_models *m, const char *name, model *md, enpu_err *e)
{
	if (model_store(m, md, e) != 0)
		return -1;
	table_swap(m, name, md);
	return 0;
}

static int no_model(const char *name, enpu_err *e)
{
	return enpu_fail(e, ENPU_E_NOT_FOUND, name, "see `eulernpu models`", "no model '%.80s'",
			 name);
}

/* A copy of name's entry (under wmu: no change meanwhile), or a new one. */
static model *model_take(srv_models *m, const char *name, int *existed)
{
	int found, at;
	model *md;

	pthread_mutex_lock(&m->mu);
	at = find_slot(m, name, &found);
	md = found ? model_copy(m->m[at]) : calloc(1, sizeof *md);
	pthread_mutex_unlock(&m->mu);
	*existed = found;
	if (md && !found)
		snprintf(md->name, sizeof md->name, "%s", name);
	return md;
}

static int owns_model(const model *md, const srv_ident *who)
{
	for (int i = 0; i < md->n; i++)
		if (!srv_ident_owns(who, md->v[i].owner))
			return 0;
	return 1;
}

int srv_models_deploy(srv_models *m, const char *name, long version, const char *artifact,
		      const char *backend, const srv_ident *who, long *version_out,
		      enpu_err *e)
{
	model *md;
	mversion *nv;
	struct timespec now;
	int existed, at, rc = -1;

	if (!enpu_model_name_ok(name))
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL, "'%.80s' is not a model name",
				 name);
	if (version < 0 || version > SRV_MODEL_VERSION_MAX)
		return enpu_fail(e, ENPU_E_BAD_REQUEST, name, NULL, "version %ld is out of range",
				 version);
	pthread_mutex_lock(&m->wmu);
	if (!(md = model_take(m, name, &existed))) {
		enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory");
		goto out;
	}
	if (existed && !owns_model(md, who)) {
		enpu_fail(e, ENPU_E_FORBIDDEN, name, "ask its owner or an admin",
			  "model '%s' is '%s''s: only its owner or an admin adds or retires "
			  "versions", name, md->v[0].owner);
		goto out;
	}
	if (version == 0)
		version = md->n ? md->v[md->n - 1].version + 1 : 1;
	if (version > SRV_MODEL_VERSION_MAX) {
		enpu_fail(e, ENPU_E_BAD_REQUEST, name, "retire the model and deploy it anew",
			  "model '%s' has no version left after %ld", name, SRV_MODEL_VERSION_MAX);
		goto out;
	}
	*version_out = version;
	if ((at = find_version(md, version)) >= 0) {
		if (strcmp(md->v[at].artifact, artifact)) {
			enpu_fail(e, ENPU_E_MODEL_CONFLICT, name, NULL,
				  "model '%s' version %ld is artifact %.12s, not %.12s", name, version,
				  md->v[at].artifact, artifact);
			goto out;
		}
		rc = 0;   /* already so */
		goto out;
	}
	if (md->n >= SRV_MODEL_VERSIONS_MAX) {
		enpu_fail(e, ENPU_E_BAD_REQUEST, name, "retire its older versions first",
			  "model '%s' holds %d versions, the most it may", name,
			  SRV_MODEL_VERSIONS_MAX);
		goto out;
	}
	nv = realloc(md->v, (size_t)(md->n + 1) * sizeof *nv);
	if (!nv) {
		enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory");
		goto out;
	}
	md->v = nv;
	for (at = md->n; at > 0 && md->v[at - 1].version > version; at--)
		md->v[at] = md->v[at - 1];
	memset(&md->v[at], 0, sizeof md->v[at]);
	md->v[at].version = version;
	snprintf(md->v[at].artifact, sizeof md->v[at].artifact, "%s", artifact);
	snprintf(md->v[at].backend, sizeof md->v[at].backend, "%s", backend);
	snprintf(md->v[at].owner, sizeof md->v[at].owner, "%s", who->name);
	clock_gettime(CLOCK_REALTIME, &now);
	srv_time_str(&now, md->v[at].deployed, sizeof md->v[at].deployed);
	md->n++;
	if (model_commit(m, name, md, e) != 0)
		goto out;
	md = NULL;
	rc = 1;
out:
	model_free(md);
	pthread_mutex_unlock(&m->wmu);
	return rc;
}

int srv_models_retire(srv_models *m, const char *name, long version, const srv_ident *who,
		      enpu_err *e)
{
	model *md;
	int existed, at, rc = -1;

	pthread_mutex_lock(&m->wmu);
	if (!(md = model_take(m, name, &existed))) {
		enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory");
		goto out;
	}
	if (!existed) {
		no_model(name, e);
		goto out;
	}
	if (version && (at = find_version(md, version)) < 0) {
		enpu_fail(e, ENPU_E_NOT_FOUND, name, "see `eulernpu models`",
			  "model '%s' has no version %ld", name, version);
		goto out;
	}
	if (version ? !srv_ident_owns(who, md->v[at].owner) : !owns_model(md, who)) {
		enpu_fail(e, ENPU_E_FORBIDDEN, name, "ask its owner or an admin",
			  "model '%s' is '%s''s: only its owner or an admin retires it", name,
			  md->v[version ? at : 0].owner);
		goto out;
	}
	if (version) {
		memmove(md->v + at, md->v + at + 1, (size_t)(md->n - at - 1) * sizeof *md->v);
		md->n--;
	} else {
		md->n = 0;
	}
	if (model_commit(m, name, md, e) != 0)
		goto out;
	md = NULL;
	rc = 0;
out:
	model_free(md);
	pthread_mutex_unlock(&m->wmu);
	return rc;
}

/* ---- reads ------------------------------------------------------------------------- */

int srv_models_resolve(srv_models *m, const char *name, long version, char artifact[65],
		       long *version_out, enpu_err *e)
{
	mversion v[SRV_MODEL_VERSIONS_MAX < 64 ? SRV_MODEL_VERSIONS_MAX : 64];
	model *md = NULL;
	int found, at, n = 0, i;

	/* what is needed copied out under the lock; the cache's index asked
	 * outside it (in memory: a job's resolve may run on the HTTP loop) */
	pthread_mutex_lock(&m->mu);
	at = find_slot(m, name, &found);
	if (found) {
		md = m->m[at];
		if (version) {
			if ((i = find_version(md, version)) >= 0)
				v[n++] = md->v[i];
		} else {
			for (i = md->n - 1; i >= 0 && n < (int)(sizeof v / sizeof v[0]); i--)
				v[n++] = md->v[i];   /* the newest first */
		}
	}
	pthread_mutex_unlock(&m->mu);
	if (!found)
		return no_model(name, e);
	if (version && !n)
		return enpu_fail(e, ENPU_E_NOT_FOUND, name, "see `eulernpu models`",
				 "model '%s' has no version %ld", name, version);
	for (i = 0; i < n; i++)
		if (srv_cas_has_artifact(m->cas, v[i].artifact)) {
			memcpy(artifact, v[i].artifact, 65);
			*version_out = v[i].version;
			return 0;
		}
	return enpu_fail(e, ENPU_E_NOT_FOUND, name, "deploy the model again from its artifact",
			 version ? "model '%s' version %ld is not ready: its artifact is not in "
			 "the cache" : "model '%s' has no ready version: no artifact of its "
			 "newest versions is in the cache", name, version);
}

static json_object *model_json(srv_models *m, const model *md)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	long latest = 0;
	int bad = !o || !arr;

	if (bad) {
		json_object_put(o);
		json_object_put(arr);
		return NULL;
	}
	for (int i = 0; i < md->n; i++) {
		json_object *v = version_json(&md->v[i], 1, m->cas);
		json_object *r = v ? json_object_object_get(v, F_READY) : NULL;
		if (r && json_object_get_boolean(r))
			latest = md->v[i].version;
		enpu_json_push(arr, v, &bad);
	}
	enpu_json_put(o, F_NAME, json_object_new_string(md->name), &bad);
	if (latest) {
		char num[24];
		snprintf(num, sizeof num, "%ld", latest);
		enpu_json_put(o, F_LATEST, json_object_new_string(num), &bad);
	} else {
		json_object_object_add(o, F_LATEST, NULL);
	}
	enpu_json_put(o, F_VERSIONS, arr, &bad);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *srv_models_json(srv_models *m, const char *name, enpu_err *e)
{
	json_object *out = NULL, *arr;
	model **snap = NULL;
	int n = 0, bad = 0, found, at;

	/* a snapshot of the entries (copies) so that the cache is asked unlocked */
	pthread_mutex_lock(&m->mu);
	if (name) {
		at = find_slot(m, name, &found);
		if (found && (snap = malloc(sizeof *snap)) && (snap[0] = model_copy(m->m[at])))
			n = 1;
	} else if (m->n && (snap = calloc((size_t)m->n, sizeof *snap))) {
		for (n = 0; n < m->n; n++)
			if (!(snap[n] = model_copy(m->m[n])))
				break;
	}
	pthread_mutex_unlock(&m->mu);
	if (name && !n) {
		if (!snap || found)
			enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory");
		else
			no_model(name, e);
		free(snap);
		return NULL;
	}
	if (name) {
		out = model_json(m, snap[0]);
		if (!out)
			enpu_fail(e, ENPU_E_NOMEM, name, NULL, "out of memory");
	} else {
		out = json_object_new_object();
		arr = json_object_new_array();
		bad = !out || !arr || (m->n && n < 1);
		for (int i = 0; !bad && i < n; i++)
			enpu_json_push(arr, model_json(m, snap[i]), &bad);
		if (out)
			enpu_json_put(out, F_MODELS, arr, &bad);
		else
			json_object_put(arr);
		if (bad) {
			json_object_put(out);
			out = NULL;
			enpu_fail(e, ENPU_E_NOMEM, "models", NULL, "out of memory");
		}
	}
	for (int i = 0; i < n; i++)
		model_free(snap[i]);
	free(snap);
	return out;
}

int srv_models_pins(srv_models *m, char (**out)[65])
{
	char (*ids)[65] = NULL;
	int n = 0, total = 0;

	*out = NULL;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < m->n; i++)
		total += m->m[i]->n;
	if (total && !(ids = malloc((size_t)total * sizeof *ids))) {
		pthread_mutex_unlock(&m->mu);
		return -1;
	}
	for (int i = 0; i < m->n; i++)
		for (int k = 0; k < m->m[i]->n; k++)
			memcpy(ids[n++], m->m[i]->v[k].artifact, 65);
	pthread_mutex_unlock(&m->mu);
	*out = ids;
	return n;
}

void srv_models_count(srv_models *m, long *models, long *versions)
{
	long v = 0;

	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < m->n; i++)
		v += m->m[i]->n;
	*models = m->n;
	pthread_mutex_unlock(&m->mu);
	*versions = v;
}
