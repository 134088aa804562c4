/* test_json.c: the shared json-c helpers (common/formats/json.c): the
 * per-thread locale that keeps json-c's parse free of glibc's global
 * locale lock, strict parsing, and kept text put into a reply verbatim. */
#include <criterion/criterion.h>
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include "json.h"

typedef struct seen {
	int global_before, global_after;
	double x;
	int parsed;
} seen;

static void *parse_on_thread(void *arg)
{
	seen *s = arg;
	enpu_err e = ENPU_ERR_INIT;
	json_object *o;

	s->global_before = uselocale((locale_t)0) == LC_GLOBAL_LOCALE;
	o = enpu_json_parse("[1.5, 2e3]", 10, "t.json", &e);
	s->global_after = uselocale((locale_t)0) == LC_GLOBAL_LOCALE;
	if (o && json_object_array_length(o) == 2) {
		s->parsed = 1;
		s->x = json_object_get_double(json_object_array_get_idx(o, 0)) +
		       json_object_get_double(json_object_array_get_idx(o, 1));
	}
	json_object_put(o);
	return NULL;
}

Test(json, a_parse_puts_its_thread_on_the_c_locale_object)
{
	pthread_t th;
	seen s;

	memset(&s, 0, sizeof s);
	cr_assert_eq(pthread_create(&th, NULL, parse_on_thread, &s), 0);
	pthread_join(th, NULL);
	cr_expect(s.global_before, "a new thread starts on the global locale");
	cr_expect(!s.global_after, "after a parse: a locale object of its own (json-c's copies are no-ops)");
	cr_expect(s.parsed);
	cr_expect_eq(s.x, 2001.5);
}

Test(json, strict_parse_refuses_trailing_data_and_names_the_file)
{
	enpu_err e = ENPU_ERR_INIT;

	cr_expect_null(enpu_json_parse("{} x", 4, "m.json", &e));
	cr_expect_eq(e.code, ENPU_E_ARTIFACT);
	cr_expect(strstr(e.message, "m.json") != NULL, "%s", e.message);
	enpu_err e2 = ENPU_ERR_INIT;
	json_object *o = enpu_json_parse("{\"a\": 1}\n ", 10, "m.json", &e2);
	cr_expect_not_null(o, "trailing whitespace is fine: %s", e2.message);
	json_object_put(o);
}

/* A kept text goes out as it is, wherever it sits in the reply, and
 * stays the caller's: the object holds its own copy. */
Test(json, raw_text_goes_out_verbatim)
{
	char text[] = "[{\"name\":\"y\",\"shape\":[1,4]}]";
	json_object *o = json_object_new_object(), *r = enpu_json_raw(text);

	cr_assert_not_null(r);
	json_object_object_add(o, "outputs", r);
	json_object_object_add(o, "n", json_object_new_int(2));
	memset(text, 'x', sizeof text - 1);
	cr_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			 "{\"outputs\":[{\"name\":\"y\",\"shape\":[1,4]}],\"n\":2}");
	json_object_put(o);
}
