/* blobs.c: upload only what the server lacks. Files are named by their
 * SHA-256; one POST asks which digests are missing, then each missing file
 * is streamed once with PUT /v1/blobs/{sha256} (the server verifies it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "api.h"
#include "cli.h"
#include "rest.h"
#include "digest.h"

static int put_blob(cli_conn *c, const char *file, const char *digest, enpu_err *e)
{
	enpu_buf resp = ENPU_BUF_INIT;
	char path[128];
	cli_req r = {0};
	long status;
	int ret = -1;

	snprintf(path, sizeof path, "%s%s", API_BLOBS, digest);
	r.method = "PUT";
	r.path = path;
	r.upload_file = file;
	r.label = file;
	if (cli_http_do(c, &r, &status, &resp, e) < 0)
		goto out;
	if (status < 200 || status >= 300) {
		cli_http_fail(c, status, &resp, e);
		goto out;
	}
	ret = 0;
out:
	enpu_buf_free(&resp);
	return ret;
}

int cli_blobs_ensure(cli_conn *c, int n, const char *const *paths,
		     const char *const *digests, int *n_put, enpu_err *e)
{
	struct json_object *req = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	struct json_object *res = NULL, *missing;
	int ret = -1, puts = 0;

	if (n_put)
		*n_put = 0;
	if (!req || !arr) {
		json_object_put(arr);
		enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	json_object_object_add(req, F_DIGESTS, arr);
	for (int i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_string(digests[i]));
	if (cli_http_json(c, "POST", API_BLOBS_MISSING, req, 0, &res, NULL, NULL, e) < 0)
		goto out;
	if (!json_object_object_get_ex(res, F_MISSING, &missing) ||
	    !json_object_is_type(missing, json_type_array)) {
		enpu_fail(e, ENPU_E_SERVER, cli_conn_url(c), NULL,
			  "POST %s: the answer has no '%s' list", API_BLOBS_MISSING, F_MISSING);
		goto out;
	}
	/* Walk our files, not the server's list: each missing digest is sent
	 * once, from the first file that has it, and an unknown digest in the
	 * answer cannot make us send anything we were not asked to. */
	for (int i = 0; i < n; i++) {
		int want = 0, dup = 0;

		for (size_t k = 0; k < json_object_array_length(missing); k++) {
			const char *d = json_object_get_string(json_object_array_get_idx(missing, k));

			if (d && strcmp(d, digests[i]) == 0)
				want = 1;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(digests[j], digests[i]) == 0)
				dup = 1;
		if (!want || dup)
			continue;
		if (put_blob(c, paths[i], digests[i], e) < 0)
			goto out;
		puts++;
	}
	if (n_put)
		*n_put = puts;
	ret = 0;
out:
	json_object_put(req);
	json_object_put(res);
	return ret;
}
