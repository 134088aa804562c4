/* fmt.c: the client's pure formatting helpers. Numbers print as Python's
 * repr() would (the seed's output came from Python, and users compare it
 * by eye), shapes as NumPy tuples; manifest paths are checked before they
 * are joined under a directory; --json documents print one way for all. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "cli.h"
#include "wire.h"

char *cli_float_repr(double x, char *out, size_t cap)
{
	char tmp[64], digits[32];
	int prec, exp10, nd = 0, neg;
	char *p, *q;
	size_t o = 0;

	if (cap == 0)
		return out;
	if (isnan(x)) {
		snprintf(out, cap, "nan");
		return out;
	}
	if (isinf(x)) {
		snprintf(out, cap, "%s", x < 0 ? "-inf" : "inf");
		return out;
	}
	/* Shortest %.Ne that reads back as the same double (17 always does). */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	/* tmp is "[-]d[.ddd]e[+-]XX": split into digits and exponent. */
	p = tmp;
	neg = (*p == '-');
	if (neg)
		p++;
	for (q = p; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9' && nd < (int)sizeof digits - 1)
			digits[nd++] = *q;
	digits[nd] = '\0';
	exp10 = (*q == 'e') ? atoi(q + 1) : 0;
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = '\0';
	if (nd == 1 && digits[0] == '0')
		exp10 = 0;

	char res[64];
#define PUT(ch) do { if (o + 1 < sizeof res) res[o++] = (ch); } while (0)
	if (neg)
		PUT('-');
	if (exp10 < -4 || exp10 >= 16) {
		PUT(digits[0]);
		if (nd > 1) {
			PUT('.');
			for (int i = 1; i < nd; i++)
				PUT(digits[i]);
		}
		res[o] = '\0';
		snprintf(res + o, sizeof res - o, "e%c%02d", exp10 < 0 ? '-' : '+',
			 exp10 < 0 ? -exp10 : exp10);
		o = strlen(res);
	} else if (exp10 >= 0) {
		for (int i = 0; i <= exp10; i++)
			PUT(i < nd ? digits[i] : '0');
		PUT('.');
		if (nd > exp10 + 1)
			for (int i = exp10 + 1; i < nd; i++)
				PUT(digits[i]);
		else
			PUT('0');
	} else {
		PUT('0');
		PUT('.');
		for (int i = 0; i < -exp10 - 1; i++)
			PUT('0');
		for (int i = 0; i < nd; i++)
			PUT(digits[i]);
	}
#undef PUT
	res[o] = '\0';
	snprintf(out, cap, "%s", res);
	return out;
}

char *cli_tuple_str(const long long *dims, int n, char *out, size_t cap)
{
	size_t o = 0;
	int r;

	if (cap == 0)
		return out;
	out[0] = '\0';
	r = snprintf(out, cap, "(");
	o = r > 0 ? (size_t)r : 0;
	for (int i = 0; i < n && o < cap; i++) {
		r = snprintf(out + o, cap - o, "%s%lld", i ? ", " : "", dims[i]);
		if (r < 0)
			break;
		o += (size_t)r;
	}
	if (o < cap)
		snprintf(out + o, cap - o, n == 1 ? ",)" : ")");
	return out;
}

int cli_path_is_safe(const char *path)
{
	return enpu_wire_path_is_safe(path, 1023);
}

const char *cli_json_str(struct json_object *o, const char *key)
{
	return enpu_wire_str(o, key);
}

int cli_json_int(struct json_object *o, const char *key, long long *out)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	*out = (long long)json_object_get_int64(v);
	return 0;
}

void cli_table_print(const char *const *heads, int ncol, char *const *cells, size_t nrows)
{
	size_t w[32] = {0};

	if (ncol > 32)
		ncol = 32;
	for (int c = 0; c < ncol; c++) {
		w[c] = cli_text_width(heads[c]);
		for (size_t i = 0; i < nrows; i++)
			if (cli_text_width(cells[i * (size_t)ncol + c]) > w[c])
				w[c] = cli_text_width(cells[i * (size_t)ncol + c]);
	}
	for (size_t i = 0; i <= nrows; i++)
		for (int c = 0; c < ncol; c++) {
			const char *s = i ? cells[(i - 1) * (size_t)ncol + c] : heads[c];
			if (c == ncol - 1)
				printf("%s\n", s);
			else
				printf("%s%*s  ", s, (int)(w[c] - cli_text_width(s)), "");
		}
}

void cli_print_json(struct json_object *o)
{
	/* Pretty, unescaped slashes (paths stay readable), one trailing newline:
	 * the same bytes as `jobs`, `cache` and `run` print. */
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
}
