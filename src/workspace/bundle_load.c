/* Loading a diff bundle someone else wrote (a sandbox's result, a file):
 * the shape of DESIGN.md section 6, the limits, paths that are relative,
 * normalized and never leave the tree, and each patch parsed (hunk.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/workspace/apply.h"
#include "src/workspace/capture.h"
#include "src/workspace/pathq.h"
#include "src/workspace/wsdl.h"

/* A bundle of 100 MiB of patches grows by JSON escaping; twice is plenty. */
#define MAX_FILE (2 * WS_MAX_BUNDLE_BYTES)

static int check_name(const char *name, const char *p, cl_error *err)
{
	size_t n = strlen(name);

	if (name[0] == '/')
		return cl_fail(err, 0, "TOOL_PATH_ESCAPE: patch path %s is absolute", p);
	for (const char *c = name; c && *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t l = strcspn(c, "/");
		if (l == 2 && !strncmp(c, "..", 2))
			return cl_fail(err, 0, "TOOL_PATH_ESCAPE: patch path %s has a '..' component", p);
		if (l == 4 && !strncasecmp(c, ".git", 4))
			return cl_fail(err, 0, "TOOL_PATH_ESCAPE: patch path %s is inside a .git directory", p);
		if (l == 0 || (l == 1 && *c == '.'))
			return cl_fail(err, 0, "TOOL_PATH_INVALID: patch path %s is not normalized", p);
		if (!c[l])
			break;
	}
	if (name[n - 1] == '/')
		return cl_fail(err, 0, "TOOL_PATH_INVALID: patch path %s is not normalized", p);
	return 0;
}

static int check_path(json_t *v, size_t i, cl_error *err)
{
	const char *p = json_string_value(v);
	size_t n = json_string_length(v);

	if (!p || !n)
		return cl_fail(err, 0, "TOOL_PATH_INVALID: patch %zu has no path", i);
	if (strlen(p) != n || n >= 4 * 4096)
		return cl_fail(err, 0, "TOOL_PATH_INVALID: patch %zu: path has a NUL byte or is too long", i);
	/* Odd names travel C-quoted (pathq.h); the checks below are on the
	 * name itself, the messages show the JSON form (no raw control byte). */
	cl_autofree char *name = ws_path_decode(p);
	if (!name)
		return cl_fail(err, 0, "TOOL_PATH_INVALID: patch %zu: path is neither a plain UTF-8 name nor "
		               "the one C-quoted form of a name (docs/workspaces.md)", i);
	if (strlen(name) >= 4096)
		return cl_fail(err, 0, "TOOL_PATH_INVALID: patch %zu: path is too long", i);
	return check_name(name, p, err);
}

/* Only the fields apply honours: one it would ignore could be meant for
 * another reader, which would then act on something show did not say. */
static int known_fields(const json_t *o, const char *const *names, const char *what, cl_error *err)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		size_t i = 0;
		while (names[i] && strcmp(names[i], k))
			i++;
		if (!names[i])
			return cl_fail(err, 0, "%s: unknown field \"%s\"", what, k);
	}
	return 0;
}

static int check_patch(json_t *p, size_t i, cl_error *err)
{
	static const char *const fields[] = {"path", "operation", "diff", "binaryContent", NULL};
	const char *op = json_string_value(json_object_get(p, "operation"));
	json_t *bc = json_object_get(p, "binaryContent");
	char what[4200];
	int rc;

	if (!json_is_object(p))
		return cl_fail(err, 0, "patch %zu is not an object", i);
	if ((rc = check_path(json_object_get(p, "path"), i, err)) < 0)
		return rc;
	snprintf(what, sizeof(what), "patch %s", json_string_value(json_object_get(p, "path")));
	if ((rc = known_fields(p, fields, what, err)) < 0)
		return rc;
	if (!op || (strcmp(op, "add") && strcmp(op, "modify") && strcmp(op, "delete")))
		return cl_fail(err, 0, "%s: operation must be add, modify or delete", what);
	if (!json_is_string(json_object_get(p, "diff")) || (bc && !json_is_string(bc)))
		return cl_fail(err, 0, "%s: diff (and binaryContent) must be strings", what);
	return 0;
}

static int check_shape(json_t *b, const char *file, cl_error *err)
{
	static const char *const fields[] = {"seq", "baseRef", "patches", NULL};
	json_t *patches = json_object_get(b, "patches"), *p;
	char what[4200];
	size_t i;
	int rc = 0;

	if (!json_is_object(b) || !json_is_integer(json_object_get(b, "seq")) ||
	    !json_is_string(json_object_get(b, "baseRef")) || !json_is_array(patches))
		return cl_fail(err, 0, "bundle %s needs seq (integer), baseRef (string) and patches (array)", file);
	snprintf(what, sizeof(what), "bundle %s", file);
	if ((rc = known_fields(b, fields, what, err)) < 0)
		return rc;
	if (json_array_size(patches) > WS_MAX_PATCHES)
		return cl_fail(err, 0, "bundle %s has more than %d patches", file, WS_MAX_PATCHES);
	json_array_foreach(patches, i, p)
		if (rc == 0)
			rc = check_patch(p, i, err);
	for (size_t a = 0; rc == 0 && a < json_array_size(patches); a++)
		for (size_t c = a + 1; rc == 0 && c < json_array_size(patches); c++) {
			json_t *x = json_array_get(patches, a), *y = json_array_get(patches, c);
			const char *px = json_string_value(json_object_get(x, "path"));
			/* The one pair allowed on a path: a delete, then an add
			 * (a type change). */
			if (!strcmp(px, json_string_value(json_object_get(y, "path"))) &&
			    !(!strcmp(json_string_value(json_object_get(x, "operation")), "delete") &&
			      !strcmp(json_string_value(json_object_get(y, "operation")), "add")))
				rc = cl_fail(err, 0, "bundle %s has two patches for %s", file, px);
		}
	return rc;
}

void ws_bundle_free(struct ws_bundle *b)
{
	for (size_t i = 0; b->patches && i < b->n; i++)
		ws_patch_free(&b->patches[i]);
	free(b->patches);
	if (b->json)
		json_decref(b->json);
	memset(b, 0, sizeof(*b));
}

int ws_bundle_read(json_t *json, const char *file, struct ws_bundle *b, cl_error *err)
{
	json_t *patches = json_object_get(json, "patches");
	char why[512];
	int rc;

	memset(b, 0, sizeof(*b));
	b->json = json_incref(json);
	if ((rc = check_shape(json, file, err)) < 0 || (rc = ws_dl_load(err)) < 0) {
		ws_bundle_free(b);
		return rc;
	}
	b->patches = calloc(json_array_size(patches) + 1, sizeof(*b->patches));
	if (!b->patches) {
		ws_bundle_free(b);
		return cl_fail(err, ENOMEM, "reading bundle %s", file);
	}
	for (size_t i = 0; i < json_array_size(patches); i++) {
		const json_t *p = json_array_get(patches, i);
		if (ws_patch_read(p, &b->patches[i], why, sizeof(why)) < 0) {
			rc = cl_fail(err, 0, "patch %s: %s", json_string_value(json_object_get(p, "path")), why);
			ws_bundle_free(b);
			return rc;
		}
		b->n++;
	}
	return 0;
}

int ws_bundle_parse(const char *text, size_t len, const char *file, struct ws_bundle *b, cl_error *err)
{
	json_error_t je;
	json_t *j;
	int rc;

	memset(b, 0, sizeof(*b));
	if (!(j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je)))
		return cl_fail(err, 0, "bundle %s is not JSON: %s (line %d)", file, je.text, je.line);
	rc = ws_bundle_read(j, file, b, err);
	json_decref(j);
	return rc;
}

int ws_bundle_load(const char *file, struct ws_bundle *b, cl_error *err)
{
	cl_autoclose int fd = strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : dup(0);
	cl_autofree char *text = NULL;
	size_t len;
	int rc;

	memset(b, 0, sizeof(*b));
	if (fd < 0)
		return cl_fail_errno(err, "reading bundle %s", file);
	if ((rc = cl_read_all(fd, MAX_FILE, &text, &len)) < 0)
		return cl_fail(err, -rc, "reading bundle %s", file);
	return ws_bundle_parse(text, len, file, b, err);
}
