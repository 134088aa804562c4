/* test_srv_auth.c: the token table (server/http/auth.c): parsing "TOKEN ROLE
 * [NAME]" lines with errors at file:line that never quote a token, matching
 * a Bearer header against every token, and the allow / 401 / 403 decision
 * for TCP and Unix listeners, including --token-file's all-listener rule. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "srv.h"
#include "http.h"

static srv_auth *parse(const char *text, enpu_err *e)
{
	return srv_auth_parse(text, strlen(text), "tokens", e);
}

Test(srv_auth, parses_roles_names_comments)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_auth *a = parse("# lab\n\nt-user user alice\r\n  t-admin\tadmin\n", &e);
	char name[64];
	int role = -1;

	cr_assert_not_null(a, "%s", e.message);
	cr_assert_eq(srv_auth_count(a), 2);
	cr_assert_eq(srv_auth_match(a, "Bearer t-user", &role, name, sizeof name), 1);
	cr_assert_eq(role, SRV_ROLE_USER);
	cr_assert_str_eq(name, "alice");
	cr_assert_eq(srv_auth_match(a, "bearer   t-admin", &role, name, sizeof name), 1);
	cr_assert_eq(role, SRV_ROLE_ADMIN);
	cr_assert_eq(strncmp(name, "token-", 6), 0, "an unnamed token is named by its digest: %s", name);
	srv_auth_free(a);
}

Test(srv_auth, rejects_wrong_and_partial_tokens)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_auth *a = parse("secret-token user\n", &e);
	int role;

	cr_assert_not_null(a);
	cr_assert_eq(srv_auth_match(a, NULL, &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "", &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "Bearer ", &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "Bearer secret-toke", &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "Bearer secret-tokenx", &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "Basic secret-token", &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "secret-token", &role, NULL, 0), 0);
	cr_assert_eq(srv_auth_match(a, "Bearer secret-token", &role, NULL, 0), 1);
	srv_auth_free(a);
}

Test(srv_auth, first_of_duplicate_tokens_wins)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_auth *a = parse("same user first\nother admin\nsame admin second\n", &e);
	char name[64];
	int role;

	cr_assert_not_null(a);
	cr_assert_eq(srv_auth_match(a, "Bearer same", &role, name, sizeof name), 1);
	cr_assert_str_eq(name, "first");
	cr_assert_eq(role, SRV_ROLE_USER);
	srv_auth_free(a);
}

Test(srv_auth, bad_lines_name_file_line_not_token)
{
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_null(parse("ok user\nsupersecret root\n", &e));
	cr_assert_eq(e.code, ENPU_E_CONFIG);
	cr_assert_str_eq(e.where, "tokens:2");
	cr_assert_null(strstr(e.message, "supersecret"), "%s", e.message);
	cr_assert_not_null(strstr(e.message, "'root'"));

	cr_assert_null(parse("lonelytoken\n", &e));
	cr_assert_str_eq(e.where, "tokens:1");
	cr_assert_null(strstr(e.message, "lonelytoken"));

	cr_assert_null(parse("t user name extra\n", &e));
	cr_assert_eq(e.code, ENPU_E_CONFIG);
}

Test(srv_auth, empty_file_has_no_tokens)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_auth *a = parse("# nobody yet\n", &e);
	int role;

	cr_assert_not_null(a);
	cr_assert_eq(srv_auth_count(a), 0);
	cr_assert_eq(srv_auth_match(a, "Bearer x", &role, NULL, 0), 0);
	srv_auth_free(a);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

Test(srv_auth, decide_tcp_unix_and_roles)
{
	char dir[] = "/tmp/enpu-test-auth.XXXXXX", path[128], single[128], name[64];
	srv_ctx ctx;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/tokens", dir);
	snprintf(single, sizeof single, "%s/board.token", dir);
	memset(&ctx, 0, sizeof ctx);

	/* no token files: everything allowed */
	cr_assert_eq(srv_auth_load(&ctx, &e), 0);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_ADMIN, NULL, name, sizeof name), 0);

	/* world-readable: refused, nothing loaded */
	write_file(path, "u user alice\na admin\n", 0644);
	ctx.cfg.tokens_file = path;
	cr_assert_eq(srv_auth_load(&ctx, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CONFIG);
	cr_assert_null(ctx.auth);

	chmod(path, 0600);
	cr_assert_eq(srv_auth_load(&ctx, &e), 0, "%s", e.message);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_PUBLIC, NULL, name, sizeof name), 0);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, NULL, name, sizeof name), 401);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, "Bearer x", name, sizeof name), 401);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, "Bearer u", name, sizeof name), 0);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_ADMIN, "Bearer u", name, sizeof name), 403);
	cr_assert_str_eq(name, "alice");
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_ADMIN, "Bearer a", name, sizeof name), 0);
	/* Unix sockets: file permissions decide, not tokens */
	cr_assert_eq(srv_auth_decide(&ctx, 0, SRV_ROLE_ADMIN, NULL, name, sizeof name), 0);

	/* a reload swaps the table: old tokens stop working */
	write_file(path, "u2 user\n", 0600);
	cr_assert_eq(srv_auth_load(&ctx, &e), 0);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, "Bearer u", name, sizeof name), 401);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, "Bearer u2", name, sizeof name), 0);
	/* a bad reload keeps the old table */
	write_file(path, "u3 nobody\n", 0600);
	cr_assert_eq(srv_auth_load(&ctx, &e), -1);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, "Bearer u2", name, sizeof name), 0);

	/* --token-file: as private as --tokens (world-readable: refused, the
	 * old table kept) */
	write_file(single, "board-secret\n", 0644);
	ctx.cfg.tokens_file = NULL;
	ctx.cfg.token_file = single;
	cr_assert_eq(srv_auth_load(&ctx, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CONFIG);
	cr_assert(strstr(e.message, "readable or writable by everyone") && strstr(e.fix, "chmod 600"),
		  "%s / %s", e.message, e.fix);
	cr_assert_eq(srv_auth_decide(&ctx, 1, SRV_ROLE_USER, "Bearer u2", name, sizeof name), 0);
	/* role admin, on Unix sockets too (a board agent); 640 shares it */
	chmod(single, 0640);
	cr_assert_eq(srv_auth_load(&ctx, &e), 0, "%s", e.message);
	cr_assert_eq(srv_auth_decide(&ctx, 0, SRV_ROLE_USER, NULL, name, sizeof name), 401);
	cr_assert_eq(srv_auth_decide(&ctx, 0, SRV_ROLE_ADMIN, "Bearer board-secret", name, sizeof name), 0);
	srv_auth_shutdown(&ctx);
	cr_assert_null(ctx.auth);
	unlink(path);
	unlink(single);
	rmdir(dir);
}
