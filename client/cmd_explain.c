/* cmd_explain.c: `eulernpu explain [CODE]`: the long form of an error code
 * from the catalogue (common/err.c), or the list of all codes; --json gives
 * the same as one JSON document. Offline. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "cli.h"

static const char usage[] =
	"usage: eulernpu explain [CODE] [--json]\n"
	"\n"
	"Explain an error code (E0301): what it means, how to fix it, the HTTP\n"
	"status the server answers with and the exit status of the client.\n"
	"Without CODE, list every code with its title.\n"
	"\n"
	"  --json   print one JSON document: {code, title, http_status, exit_code,\n"
	"           fix, explain}, or without CODE a list of them, one per code\n";

static struct json_object *code_json(const enpu_code_info *ci)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "code", json_object_new_string(ci->id));
	json_object_object_add(o, "title", json_object_new_string(ci->title));
	json_object_object_add(o, "http_status", json_object_new_int(ci->http_status));
	json_object_object_add(o, "exit_code", json_object_new_int(ci->exit_code));
	json_object_object_add(o, "fix", json_object_new_string(ci->fix ? ci->fix : ""));
	json_object_object_add(o, "explain", json_object_new_string(ci->explain ? ci->explain : ""));
	return o;
}

int cmd_explain(cli_ctx *ctx, int argc, char **argv)
{
	enpu_err e = ENPU_ERR_INIT;
	const char *pos[1];
	int n_pos, r, json = 0;
	const cli_opt opts[] = {
		{"--json", CLI_OPT_FLAG, &json},
		{NULL, 0, NULL},
	};
	const enpu_code_info *ci;
	struct json_object *doc;
	char id[16];
	size_t n;

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

		if (json) {
			doc = json_object_new_array();
			for (size_t i = 0; i < n; i++)
				if (t[i].code != ENPU_OK)
					json_object_array_add(doc, code_json(&t[i]));
			cli_print_json(doc);
			json_object_put(doc);
			return 0;
		}
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
	if (json) {
		doc = code_json(ci);
		cli_print_json(doc);
		json_object_put(doc);
		return 0;
	}
	printf("%s: %s\n\n%s\n\nfix: %s\nHTTP status: %d\nexit code: %d\n", ci->id, ci->title,
	       ci->explain, ci->fix, ci->http_status, ci->exit_code);
	return 0;
}
