/* Result bundle validation: read README.md through an O_NOFOLLOW fd with a
 * size cap, walk the tree with openat/fstatat(AT_SYMLINK_NOFOLLOW) only. */
#define _GNU_SOURCE
#include "src/sandbox/bundle.h"
#include "src/sandbox/fsafe.h"
#include "src/util/fsafe.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/sandbox/spec.h"

#define WALK_MAX_DEPTH 64
#define WALK_MAX_ENTRIES 200000

int sb_manifest_parse(const char *text, size_t len, json_t **out, struct sb_error *e)
{
	const char *s = text, *end = text + len;
	const char *status;
	json_error_t jerr;
	json_t *m;

	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	if (s == end)
		return sb_invalid(e, NULL, "Sandbox bundle README.md is empty.");
	m = json_loadb(s, (size_t)(end - s), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!m)
		return sb_invalid(e, NULL, "Sandbox bundle README.md must contain valid JSON.");
	if (!json_is_object(m)) {
		json_decref(m);
		return sb_invalid(e, NULL, "Sandbox bundle README.md JSON must be an object.");
	}
	status = json_string_value(json_object_get(m, "status"));
	if (!status || (strcmp(status, "finished") != 0 && strcmp(status, "failed") != 0 &&
	                strcmp(status, "cancelled") != 0)) {
		json_decref(m);
		return sb_invalid(e, NULL,
		                  "Sandbox bundle README.md must include status: finished | failed | cancelled.");
	}
	*out = m;
	return 0;
}

static int bounds(const json_t *v, const char *field, int depth, struct sb_error *e)
{
	const char *k;
	json_t *item;
	size_t i;

	/* Depth counts containers: [1] is depth 1, [[1]] depth 2. */
	depth += json_is_array(v) || json_is_object(v);
	if (depth > SB_OUTPUT_MAX_DEPTH)
		return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s,s:i}", "field", field, "maxDepth",
		                                                  SB_OUTPUT_MAX_DEPTH),
		               "%s exceeds the maximum JSON depth of %d.", field, SB_OUTPUT_MAX_DEPTH);
	if (json_is_string(v) && sb_json_js_length(v) > SB_OUTPUT_MAX_STRING)
		return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s,s:i}", "field", field,
		                                                  "maxStringLength", SB_OUTPUT_MAX_STRING),
		               "%s contains a string longer than %d characters.", field, SB_OUTPUT_MAX_STRING);
	if (json_is_array(v)) {
		if (json_array_size(v) > SB_OUTPUT_MAX_ARRAY)
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s,s:i}", "field", field,
			                                                  "maxArrayLength", SB_OUTPUT_MAX_ARRAY),
			               "%s contains an array longer than %d items.", field, SB_OUTPUT_MAX_ARRAY);
		json_array_foreach(v, i, item)
			if (bounds(item, field, depth, e) < 0)
				return -EINVAL;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, item) {
			if (sb_js_length(k, strlen(k)) > SB_OUTPUT_MAX_STRING)
				return sb_invalid(e, field, "%s contains a string longer than %d characters.",
				                  field, SB_OUTPUT_MAX_STRING);
			if (bounds(item, field, depth, e) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

int sb_json_within_bounds(const json_t *v, const char *field, struct sb_error *e)
{
	return v ? bounds(v, field, 0, e) : 0;
}

int sb_patch_path_check(const char *bundle_path, const char *patch, struct sb_error *e)
{
	char root[PATH_MAX], joined[PATH_MAX * 2], resolved[PATH_MAX * 2], base[PATH_MAX + 16];
	const char *rest;

	if (!patch || !*patch)
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Path must be a string");
	if (sb_path_normalize(bundle_path, root, sizeof(root)) < 0)
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Path must be a string");
	if (patch[0] == '/')
		snprintf(joined, sizeof(joined), "%s", patch);
	else
		snprintf(joined, sizeof(joined), "%s/%s", root, patch);
	if (sb_path_normalize(joined, resolved, sizeof(resolved)) < 0 || !sb_path_within(resolved, root))
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "patchPath", patch),
		               "Path escapes sandbox root");
	snprintf(base, sizeof(base), "%s%spatches", root, strcmp(root, "/") ? "/" : "");
	rest = resolved + strlen(base);
	/* Inside patches/ strictly, and (as path.relative sees it) not a name
	 * that starts with "..". */
	if (!sb_path_within(resolved, base) || *rest == '\0' || strncmp(rest, "/..", 3) == 0)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "patchPath", patch),
		               "Sandbox patch path escapes bundle root: %s", patch);
	return 0;
}

struct walk {
	uint64_t bytes;
	size_t entries;
	char **patches;
	size_t n_patches;
	const char *bundle_path;
	int depth;            /* of the directory being read below the bundle's root */
};

static bool is_patch(const char *rel)
{
	size_t n = strlen(rel);

	return strncmp(rel, "patches/", 8) == 0 && n > 6 && strcmp(rel + n - 6, ".patch") == 0;
}

static int escape_at(struct sb_error *e, const char *rel, const char *why)
{
	return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "path", rel), "%s", why);
}

static int walk_entry(int dfd, const char *name, const char *rel, void *ctx, struct sb_error *e);

static int walk_subdir(struct walk *w, int dfd, const char *name, const char *rel,
                       struct sb_error *e)
{
	int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (sub < 0)   /* it was a directory a moment ago: swapped under us */
		return errno == ELOOP || errno == ENOTDIR
		       ? escape_at(e, rel, "Sandbox bundle may not contain symlinks.")
		       : sb_fail(e, SB_INVALID_INPUT, errno, NULL, "opening sandbox bundle directory %s", rel);
	if (w->depth >= WALK_MAX_DEPTH) {
		close(sub);
		return sb_invalid(e, NULL, "Sandbox bundle is nested deeper than %d directories.",
		                  WALK_MAX_DEPTH);
	}
	w->depth++;
	rc = sb_each_entry(sub, rel, SB_INVALID_INPUT, "sandbox bundle directory", walk_entry, w, e);
	w->depth--;
	return rc;
}

static int add_patch(struct walk *w, const char *rel, struct sb_error *e)
{
	char **np = realloc(w->patches, (w->n_patches + 1) * sizeof(*np));

	if (np)
		w->patches = np;
	if (!np || !(np[w->n_patches] = strdup(rel)))
		return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "listing patches");
	w->n_patches++;
	return 0;
}

static int walk_entry(int dfd, const char *name, const char *rel, void *ctx, struct sb_error *e)
{
	struct walk *w = ctx;
	struct stat st;

	if (++w->entries > WALK_MAX_ENTRIES)
		return sb_invalid(e, NULL, "Sandbox bundle has more than %d entries.", WALK_MAX_ENTRIES);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sb_fail(e, SB_INVALID_INPUT, errno, NULL, "reading sandbox bundle entry %s", rel);
	if (S_ISLNK(st.st_mode))
		return escape_at(e, rel, "Sandbox bundle may not contain symlinks.");
	if (S_ISDIR(st.st_mode))
		return walk_subdir(w, dfd, name, rel, e);
	if (!S_ISREG(st.st_mode))
		return 0;   /* sockets, fifos, devices: not bundle content, ignored as Smithers does */
	w->bytes += (uint64_t)st.st_size;
	return is_patch(rel) ? add_patch(w, rel, e) : 0;
}

static int read_readme(int bfd, const char *path, json_t **manifest, struct sb_error *e)
{
	cl_autoclose int fd = openat(bfd, "README.md", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cl_autofree char *text = NULL;
	struct stat st;
	size_t len;
	int rc;

	if (fd < 0 && errno == ELOOP)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "bundlePath", path),
		               "Sandbox bundle README.md may not be a symlink.");
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "bundlePath", path),
		               "Sandbox bundle is missing README.md");
	/* The cap applies to what is read, not to what fstat said: the file
	 * may grow between the two. */
	rc = (uint64_t)st.st_size > SB_MAX_README_BYTES ? -EFBIG
	     : cl_read_all(fd, SB_MAX_README_BYTES, &text, &len);
	if (rc == -EFBIG)
		return sb_fail(e, SB_INVALID_INPUT, 0,
		               json_pack("{s:s,s:I}", "bundlePath", path, "maxBytes", (json_int_t)SB_MAX_README_BYTES),
		               "Sandbox bundle README.md exceeds %llu bytes", SB_MAX_README_BYTES);
	if (rc < 0)
		return sb_fail(e, SB_INVALID_INPUT, -rc, NULL, "reading %s/README.md", path);
	return sb_manifest_parse(text, len, manifest, e);
}

static int check_manifest(const struct sb_bundle *b, const char *path, struct sb_error *e)
{
	json_t *patches = json_object_get(b->manifest, "patches");
	json_t *run_id = json_object_get(b->manifest, "runId");
	json_t *p;
	size_t i;
	int rc;

	if ((rc = sb_json_within_bounds(json_object_get(b->manifest, "outputs"), "outputs", e)) < 0)
		return rc;
	if (json_is_string(run_id) && sb_json_js_length(run_id) > SB_ID_MAX)
		return sb_invalid(e, "runId", "runId must be at most %d characters.", SB_ID_MAX);
	if (!json_is_array(patches))
		return 0;
	if (json_array_size(patches) > SB_MAX_PATCH_FILES)
		return sb_invalid(e, "patches", "patches must have at most %d entries.", SB_MAX_PATCH_FILES);
	json_array_foreach(patches, i, p) {
		if (!json_is_string(p))
			continue;
		if (sb_json_js_length(p) > SB_PATH_MAX)
			return sb_invalid(e, "patch.path", "patch.path must be at most %d characters.", SB_PATH_MAX);
		if ((rc = sb_patch_path_check(path, json_string_value(p), e)) < 0)
			return rc;
	}
	return 0;
}

static int check_logs(int bfd, struct sb_bundle *b, const char *path, struct sb_error *e)
{
	cl_autoclose int logs = openat(bfd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (logs < 0) {
		if (errno == ELOOP)
			return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "bundlePath", path),
			               "Sandbox bundle logs may not be a symlink.");
		return 0;
	}
	if (fstatat(logs, "stream.ndjson", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "bundlePath", path),
		               "Sandbox bundle logs may not be a symlink.");
	b->has_logs = S_ISREG(st.st_mode);
	return 0;
}

static int validate_fd(int bfd, const char *path, struct sb_bundle *b, struct sb_error *e)
{
	struct walk w = {.bundle_path = path};
	int rc, sub;

	if ((rc = read_readme(bfd, path, &b->manifest, e)) < 0)
		return rc;
	b->status = json_string_value(json_object_get(b->manifest, "status"));
	if ((sub = openat(bfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return sb_fail(e, SB_INVALID_INPUT, errno, NULL, "reading sandbox bundle %s", path);
	rc = sb_each_entry(sub, "", SB_INVALID_INPUT, "sandbox bundle directory", walk_entry, &w, e);
	b->patch_files = w.patches;
	b->n_patch_files = w.n_patches;
	b->size_bytes = w.bytes;
	if (rc < 0)
		return rc;
	if (w.bytes > SB_MAX_BUNDLE_BYTES)
		return sb_fail(e, SB_INVALID_INPUT, 0,
		               json_pack("{s:s,s:I}", "bundlePath", path, "maxBytes", (json_int_t)SB_MAX_BUNDLE_BYTES),
		               "Sandbox bundle exceeds %llu bytes", SB_MAX_BUNDLE_BYTES);
	if (w.n_patches > SB_MAX_PATCH_FILES)
		return sb_fail(e, SB_INVALID_INPUT, 0,
		               json_pack("{s:I,s:i}", "patchCount", (json_int_t)w.n_patches, "maxPatches",
		                         SB_MAX_PATCH_FILES),
		               "Sandbox bundle has too many patch files (max %d).", SB_MAX_PATCH_FILES);
	for (size_t i = 0; i < w.n_patches; i++)
		if ((rc = sb_patch_path_check(path, w.patches[i], e)) < 0)
			return rc;
	if ((rc = check_manifest(b, path, e)) < 0)
		return rc;
	return check_logs(bfd, b, path, e);
}

/* The bundle dir as opened (bfd < 0: not; link: because of a symlink)
 * into the two refusals both entry points share, or validated. */
static int validate_opened(int bfd, bool link, const char *path, struct sb_bundle *b, struct sb_error *e)
{
	int rc;

	if (link)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "bundlePath", path),
		               "Sandbox bundle may not be a symlink.");
	if (bfd < 0)
		return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "bundlePath", path),
		               "Sandbox bundle is missing README.md");
	rc = validate_fd(bfd, path, b, e);
	if (rc < 0)
		sb_bundle_free(b);
	return rc;
}

int sb_bundle_validate(const char *path, struct sb_bundle *b, struct sb_error *e)
{
	cl_autoclose int bfd = -1;
	struct stat st;
	bool link;

	memset(b, 0, sizeof(*b));
	if (!path || path[0] != '/')
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Sandbox bundle path must be absolute.");
	bfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* errno of the open, before lstat can change it */
	link = bfd < 0 && (errno == ELOOP || (errno == ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)));
	return validate_opened(bfd, link, path, b, e);
}

int sb_bundle_validate_at(int dirfd, const char *rel, const char *path, struct sb_bundle *b,
                          struct sb_error *e)
{
	cl_autoclose int bfd = -1;

	memset(b, 0, sizeof(*b));
	bfd = cl_open_beneath(dirfd, rel, O_RDONLY | O_DIRECTORY);
	return validate_opened(bfd, bfd == -ELOOP || bfd == -EXDEV, path, b, e);
}

void sb_bundle_free(struct sb_bundle *b)
{
	for (size_t i = 0; i < b->n_patch_files; i++)
		free(b->patch_files[i]);
	free(b->patch_files);
	if (b->manifest)
		json_decref(b->manifest);
	memset(b, 0, sizeof(*b));
}

json_t *sb_bundle_to_json(const struct sb_bundle *b, const char *path)
{
	json_t *o = json_object(), *pf = json_array();
	char logs[PATH_MAX + 32];

	for (size_t i = 0; i < b->n_patch_files; i++)
		json_array_append_new(pf, json_string(b->patch_files[i]));
	snprintf(logs, sizeof(logs), "%s/logs/stream.ndjson", path);
	json_object_set_new(o, "valid", json_true());
	json_object_set_new(o, "bundlePath", json_string(path));
	json_object_set_new(o, "status", json_string(b->status));
	json_object_set_new(o, "bundleSizeBytes", json_integer((json_int_t)b->size_bytes));
	json_object_set_new(o, "patchFiles", pf);
	json_object_set_new(o, "logsPath", b->has_logs ? json_string(logs) : json_null());
	json_object_set_new(o, "manifest", json_incref(b->manifest));
	return o;
}
