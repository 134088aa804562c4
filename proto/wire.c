/* wire.c: the wire formats shared by server, client and the artifact
 * loader: error objects in, string fields, path safety. No I/O here, and
 * nothing from server/ or client/. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "wire.h"

const char *enpu_wire_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int enpu_wire_err_from_json(struct json_object *err, enpu_err *e, const char **code,
			    const char **msg)
{
	const char *id = enpu_wire_str(err, "code");
	const char *m = enpu_wire_str(err, "message");
	const char *where = enpu_wire_str(err, "where");
	const char *fix = enpu_wire_str(err, "fix");
	const enpu_code_info *ci = id ? enpu_code_by_id(id) : NULL;

	*e = (enpu_err)ENPU_ERR_INIT;
	if (code)
		*code = id;
	if (msg)
		*msg = m;
	if (!ci)
		return -1;
	e->code = ci->code;
	snprintf(e->message, sizeof e->message, "%s", m ? m : ci->title);
	snprintf(e->where, sizeof e->where, "%s", where ? where : "");
	snprintf(e->fix, sizeof e->fix, "%s", fix ? fix : "");
	return 0;
}

int enpu_wire_path_is_safe(const char *p, size_t max)
{
	const char *seg = p;
	size_t len;

	if (!p || !*p || p[0] == '/')
		return 0;
	len = strlen(p);
	if (len > max)
		return 0;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
			return 0;
	/* Every component non-empty and neither "." nor "..". */
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);

		if (n == 0 || (n == 1 && seg[0] == '.') ||
		    (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
		if (!end)
			break;
		seg = end + 1;
	}
	return 1;
}
