/* test_srv_state.c: the pure parts of the daemon's private state
 * (server/state.c, options.c): the default cache directory, never a shared
 * one when HOME and XDG_CACHE_HOME are unset, and --idle-exit in seconds or
 * milliseconds. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "srv.h"
#include "daemon.h"

Test(srv_state, default_cache_dir)
{
	char want[128];

	setenv("XDG_CACHE_HOME", "/x/c", 1);
	setenv("HOME", "/h", 1);
	cr_assert_str_eq(srv_state_default_cache(), "/x/c/eulernpu");
	unsetenv("XDG_CACHE_HOME");
	cr_assert_str_eq(srv_state_default_cache(), "/h/.cache/eulernpu");
	/* neither: a per-user directory (the owner is checked at start-up),
	 * not the /tmp/.cache/eulernpu every user would share */
	unsetenv("HOME");
	setenv("TMPDIR", "/t", 1);
	snprintf(want, sizeof want, "/t/eulernpu-cache-%u", (unsigned)geteuid());
	cr_assert_str_eq(srv_state_default_cache(), want);
	unsetenv("TMPDIR");
	snprintf(want, sizeof want, "/tmp/eulernpu-cache-%u", (unsigned)geteuid());
	cr_assert_str_eq(srv_state_default_cache(), want);
	setenv("TMPDIR", "relative", 1);   /* not a path to trust */
	cr_assert_str_eq(srv_state_default_cache(), want);
}

static int idle(const char *v, srv_config *c)
{
	char *argv[] = {"eulernpud", "--idle-exit", (char *)v, NULL};

	srv_opts_defaults(c);
	return srv_opts_parse(3, argv, c);
}

Test(srv_state, idle_exit_seconds_or_ms)
{
	srv_config c;
	FILE *keep = stderr;

	cr_assert_eq(idle("2", &c), 0);
	cr_assert_eq(c.idle_exit_ms, 2000);
	cr_assert_eq(idle("50ms", &c), 0);
	cr_assert_eq(c.idle_exit_ms, 50);
	cr_assert_eq(idle("0", &c), 0);
	cr_assert_eq(c.idle_exit_ms, 0);
	stderr = fopen("/dev/null", "w");   /* the usage errors below */
	cr_assert_eq(idle("ms", &c), 2);
	cr_assert_eq(idle("5s", &c), 2);
	cr_assert_eq(idle("-1ms", &c), 2);
	cr_assert_eq(idle("1.5", &c), 2);
	fclose(stderr);
	stderr = keep;
}
