/* replay.c: main() for a fuzz target built without libFuzzer: runs
 * LLVMFuzzerTestOneInput once over every file named on the command line or
 * found under a named directory (sorted, dot files skipped). A bug in the
 * code under test crashes (abort, or a sanitizer report under SAN=1); a
 * clean run prints "replayed N inputs" and exits 0. Options starting with
 * '-' are ignored, so a libFuzzer command line can be reused. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(buf = malloc(n ? (size_t)n : 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%ld bytes)\n", path, n);
	/* an exact-size copy, so ASan sees a read past the end */
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int filter_dots(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int replay_path(const char *path, int *count)
{
	struct stat st;
	struct dirent **ents;
	int n, rc = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (replay_file(path) < 0)
			return -1;
		(*count)++;
		return 0;
	}
	if ((n = scandir(path, &ents, filter_dots, alphasort)) < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char sub[4096];
		if (rc == 0 && (size_t)snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name) <
				       sizeof(sub))
			rc = replay_path(sub, count);
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		if (replay_path(argv[i], &count) < 0)
			return 2;
	}
	printf("replayed %d inputs\n", count);
	return 0;
}
