/* http.c: the load generator's HTTP client (tests/load/loadgen.h): one
 * exchange on a client's own libcurl handle (its connection kept alive),
 * 429 answered by honouring Retry-After and asking again, the counting of
 * each answer per request kind, the first failures shown whole, and the
 * blob uploads (including those a 409 E0804 "missing" list asks for). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "api.h"
#include "loadgen.h"

/* ---- statistics ---- */

void note(client *c, int kind, int outcome)
{
	kstat *k = &c->ks[kind];

	/* failures count from the first request on; the rest once measuring */
	if (outcome != O_FAIL && !atomic_load(&measuring))
		return;
	k->req++;
	switch (outcome) {
	case O_OK:
		k->ok++;
		if (k->n == k->cap) {
			size_t ncap = k->cap ? k->cap * 2 : 256;
			double *nl = realloc(k->lat, ncap * sizeof *nl);
			if (!nl)
				return;   /* a lost sample, not a lost count */
			k->lat = nl;
			k->cap = ncap;
		}
		k->lat[k->n++] = c->ms;
		break;
	case O_429:
		k->q429++;
		break;
	case O_RECOVERED:
		k->recovered++;
		break;
	default:
		k->fail++;
	}
}

/* Print the first few failures whole (what, status, body). */
void show_fail(client *c, const char *what, const char *method, const char *path, long status)
{
	long n = atomic_fetch_add(&fails_seen, 1);

	if (n >= FAILS_SHOWN)
		return;
	if (status < 0)
		fprintf(stderr, "loadgen: client %d: %s: %s %s: transport error: %s\n", c->id, what,
			method, path, c->cerr);
	else
		fprintf(stderr, "loadgen: client %d: %s: %s %s: HTTP %ld: %.*s\n", c->id, what,
			method, path, status, (int)(c->resp.len < BODY_SHOWN ? c->resp.len : BODY_SHOWN),
			c->resp.data ? c->resp.data : "");
}

/* ---- HTTP ---- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	client *c = ud;
	return enpu_buf_add(&c->resp, p, sz * n) == 0 ? sz * n : 0;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	client *c = ud;
	size_t len = sz * n;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		size_t i = 12, k = 0;
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < len && p[i] >= '0' && p[i] <= '9' && k + 1 < sizeof c->retry_after)
			c->retry_after[k++] = p[i++];
		c->retry_after[k] = '\0';
	}
	return len;
}

/* One exchange on the client's own handle (its connection is kept: the
 * reset keeps live connections). The status, or -1 on a transport error
 * (c->cerr says which). The body is in c->resp, the time in c->ms. */
long http(client *c, const char *method, const char *path, const void *body, size_t len,
	  const char *ctype)
{
	struct curl_slist *hs = NULL;
	char url[1200], ct[128];
	long status = -1;
	double t0;
	CURLcode rc;

	curl_easy_reset(c->h);
	enpu_buf_reset(&c->resp);
	c->retry_after[0] = '\0';
	c->cerr[0] = '\0';
	snprintf(url, sizeof url, "%s%s", base, path);
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	if (opt.socket)
		curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, opt.socket);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT, (long)HTTP_TIMEOUT);
	curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, c->cerr);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->h, CURLOPT_HEADERDATA, c);
	hs = curl_slist_append(hs, "Expect:");
	if (auth[0])
		hs = curl_slist_append(hs, auth);
	if (ctype) {
		snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
		hs = curl_slist_append(hs, ct);
	}
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hs);
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(c->h, CURLOPT_NOBODY, 1L);
	} else if (body) {
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	}
	t0 = now_s();
	rc = curl_easy_perform(c->h);
	c->ms = (now_s() - t0) * 1e3;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
	else if (!c->cerr[0])
		snprintf(c->cerr, sizeof c->cerr, "%s", curl_easy_strerror(rc));
	curl_slist_free_all(hs);
	return status;
}

/* Sleep for Retry-After (1 s when absent), watching the stop flag: -1
 * when the run ended meanwhile (the request is then abandoned, not failed). */
static int honour_retry(client *c)
{
	double s = c->retry_after[0] ? atof(c->retry_after) : 1;
	double end = now_s() + (s > RETRY_MAX_S ? RETRY_MAX_S : s);

	while (now_s() < end) {
		if (atomic_load(&stopping))
			return -1;
		sleep_s(0.05);
	}
	return 0;
}

/* http() that answers 429 by waiting and asking again: the status, -1 on a
 * transport error, -2 when the run stopped during a wait. */
long call(client *c, int kind, const char *method, const char *path, const void *body,
	  size_t len, const char *ctype)
{
	for (;;) {
		long st = http(c, method, path, body, len, ctype);

		if (st != 429)
			return st;
		note(c, kind, O_429);
		if (honour_retry(c))
			return -2;
	}
}

long call_json(client *c, int kind, const char *method, const char *path, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	return call(c, kind, method, path, s, strlen(s), "application/json");
}

json_object *resp_json(client *c)
{
	return c->resp.data ? json_tokener_parse(c->resp.data) : NULL;
}

const char *jstr(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : NULL;
}

/* The error code of an error body ("E0804"), or "". */
void err_code(json_object *o, char code[16])
{
	json_object *e;
	const char *s = NULL;

	if (json_object_object_get_ex(o, F_ERROR, &e))
		s = jstr(e, "code");
	snprintf(code, 16, "%s", s ? s : "");
}

/* ---- blobs ---- */

/* The bytes of a digest this client may upload: the example's files and
 * the variants'. */
static int blob_of(const char *d, const char **p, size_t *n)
{
	if (!strcmp(d, d_spec)) { *p = ex_spec.data; *n = ex_spec.len; return 0; }
	if (!strcmp(d, d_weights)) { *p = ex_weights.data; *n = ex_weights.len; return 0; }
	if (!strcmp(d, d_input)) { *p = ex_input.data; *n = ex_input.len; return 0; }
	for (int i = 0; vars && i < opt.variants; i++) {
		if (!strcmp(d, vars[i].ds)) { *p = vars[i].spec; *n = vars[i].spec_len; return 0; }
		if (!strcmp(d, vars[i].dw)) { *p = vars[i].weights; *n = vars[i].weights_len; return 0; }
	}
	return -1;
}

int put_blob(client *c, const char *d)
{
	char path[128];
	const char *p;
	size_t n;
	long st;

	if (blob_of(d, &p, &n) != 0) {
		snprintf(c->cerr, sizeof c->cerr, "the server asked for blob %.64s, not one of ours", d);
		show_fail(c, "upload", "PUT", d, -1);
		note(c, K_PUT, O_FAIL);
		return -1;
	}
	snprintf(path, sizeof path, API_BLOBS "%s", d);
	st = call(c, K_PUT, "PUT", path, p, n, "application/octet-stream");
	if (st == -2)
		return -2;
	if (st < 200 || st >= 300) {
		show_fail(c, "upload", "PUT", path, st);
		note(c, K_PUT, O_FAIL);
		return -1;
	}
	note(c, K_PUT, O_OK);
	return 0;
}

/* A 409 E0804 answer: upload every digest of its missing list. 0 when it
 * was one (and the uploads worked), -1 when not (a failure), -2 stop. */
int upload_missing(client *c, int kind, const char *what, const char *method,
		   const char *path, long st)
{
	json_object *o = NULL, *miss;
	char code[16], *ds = NULL;
	size_t n = 0;
	int ret = -1;

	if (st == 409 && (o = resp_json(c))) {
		err_code(o, code);
		if (!strcmp(code, "E0804") && json_object_object_get_ex(o, F_MISSING, &miss) &&
		    json_object_is_type(miss, json_type_array) &&
		    (n = json_object_array_length(miss)) > 0 && (ds = calloc(n, 65))) {
			for (size_t i = 0; i < n; i++)
				snprintf(ds + i * 65, 65, "%s",
					 json_object_get_string(json_object_array_get_idx(miss, i)));
			ret = 0;
		}
	}
	json_object_put(o);
	if (ret != 0) {
		show_fail(c, what, method, path, st);
		note(c, kind, O_FAIL);
		return -1;
	}
	note(c, kind, O_RECOVERED);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = put_blob(c, ds + i * 65);
	free(ds);
	return ret;
}
