/* cmd_explain.c: `eulernpu explain [CODE]`: the long form of an error code
 * from the catalogue (common/err.c), or the list of all codes. Offline. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char usage[] =
	"usage: eulernpu explain [CODE]\n"
	"\n"
	"Explain an error code (E0301): what it means, how to fix it, the HTTP\n"
	"status the server answers with and the exit status of the client.\n"
	"Without CODE, list every code with its title.\n";

int cmd_explain(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	const cli_opt opts[] = {{NULL, 0, NULL}};
	const enpu_code_info *ci;
	char id[16];
	size_t n;
	int n_pos, r;

	(void)ctx;
	r = cli_parse_opts("explain", argc, argv, opts, pos, 1, &n_pos, &e);
	if (r == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (r < 0)
		return cli_report(&e);
	if (n_pos == 0) {
		const enpu_code_info *t = enpu_code_table(&n);

		for (size_t i = 0; i < n; i++)
			if (t[i].code != ENPU_OK)
				printf("%s  %s\n", t[i].id, t[i].title);
		return 0;
	}
	/* Accept "e0301" and "0301" too. */
	snprintf(id, sizeof id, "%s%s", isdigit((unsigned char)pos[0][0]) ? "E" : "", pos[0]);
	id[0] = (char)toupper((unsigned char)id[0]);
	ci = strlen(pos[0]) < 8 ? enpu_code_by_id(id) : NULL;
	if (!ci)
		return cli_report((cli_usage(&e, "explain",
					     "unknown error code '%s' (`eulernpu explain` lists them)",
					     pos[0]), &e));
	printf("%s: %s\n\n%s\n\nfix: %s\nHTTP status: %d\nexit code: %d\n", ci->id, ci->title,
	       ci->explain, ci->fix, ci->http_status, ci->exit_code);
	return 0;
}
