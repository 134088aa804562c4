/* cache_util.h: helpers of the cache's unit tests (test_srv_cas.c,
 * test_srv_evict.c, test_srv_cachedisk.c): compile an example into a
 * cache, count what a cache directory holds on disk. */
#ifndef TEST_CACHE_UTIL_H
#define TEST_CACHE_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "enpu.h"
#include "digest.h"
#include "cas.h"
#include "artifact.h"

/* Compile examples/<name> into c by ingest; its id in id. Fails when the
 * example is absent (the tests run from the repository root). */
static inline void compile_example(srv_cas *c, const char *name, char id[65])
{
	char spec_p[256], w_p[256], tmp[4300];
	struct stat st;
	enpu_err e = ENPU_ERR_INIT;
	enpu_spec *spec = NULL;
	enpu_target *tgt = NULL;
	enpu_compile_info info;

	snprintf(spec_p, sizeof spec_p, "examples/%s/spec.yaml", name);
	snprintf(w_p, sizeof w_p, "examples/%s/weights.npz", name);
	cr_assert(stat(spec_p, &st) == 0 && stat(w_p, &st) == 0,
		  "examples/%s not present (the tests run from the repository root)", name);
	cr_assert_eq(enpu_spec_load(spec_p, "spec.yaml", NULL, &spec, &e), 0, "%s", e.message);
	cr_assert_eq(enpu_target_resolve(spec, NULL, NULL, NULL, NULL, &tgt, &e), 0, "%s", e.message);
	cr_assert_eq(srv_cas_tmpdir(c, tmp, sizeof tmp, &e), 0);
	cr_assert_eq(enpu_compile(spec, tgt, w_p, "weights.npz", NULL, tmp, NULL, &info, &e), 0,
		     "%s", e.message);
	cr_assert_eq(srv_artifact_ingest(c, tmp, info.artifact_id, &e), 0, "%s", e.message);
	memcpy(id, info.artifact_id, 65);
	enpu_target_free(tgt);
	enpu_spec_free(spec);
}

/* What root/<top>/<2 hex>/<digest> holds: entries, and their bytes (files). */
static inline void disk_count(const char *root, const char *top, uint64_t *n, uint64_t *bytes)
{
	char p[4096], q[4400];
	DIR *d, *d2;
	struct dirent *de, *de2;
	struct stat st;

	*n = 0;
	if (bytes)
		*bytes = 0;
	snprintf(p, sizeof p, "%s/%s", root, top);
	if (!(d = opendir(p)))
		return;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2)
			continue;
		snprintf(q, sizeof q, "%s/%s", p, de->d_name);
		if (!(d2 = opendir(q)))
			continue;
		while ((de2 = readdir(d2))) {
			char f[4700];
			if (!enpu_is_sha256_hex(de2->d_name))
				continue;
			snprintf(f, sizeof f, "%s/%s", q, de2->d_name);
			if (stat(f, &st) != 0)
				continue;
			(*n)++;
			if (bytes && S_ISREG(st.st_mode))
				*bytes += (uint64_t)st.st_size;
		}
		closedir(d2);
	}
	closedir(d);
}

/* GET /v1/cache's entry figures equal what the disk holds. */
static inline void expect_stats_match_disk(srv_cas *c, const char *root)
{
	srv_cache_stats st;
	uint64_t n, b;

	srv_cas_stats(c, &st);
	disk_count(root, "cas", &n, &b);
	cr_expect_eq(st.blobs, n, "blobs: index %llu, disk %llu", (unsigned long long)st.blobs,
		     (unsigned long long)n);
	cr_expect_eq(st.blob_bytes, b, "blob bytes: index %llu, disk %llu",
		     (unsigned long long)st.blob_bytes, (unsigned long long)b);
	disk_count(root, "artifacts", &n, NULL);
	cr_expect_eq(st.artifacts, n, "artifacts: index %llu, disk %llu",
		     (unsigned long long)st.artifacts, (unsigned long long)n);
	disk_count(root, "ac", &n, NULL);
	cr_expect_eq(st.ac_entries, n, "ac entries: index %llu, disk %llu",
		     (unsigned long long)st.ac_entries, (unsigned long long)n);
}

#endif
