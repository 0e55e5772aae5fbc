/* Docker / OCI runtime-spec seccomp profiles (JSON) into a resolved profile:
 * every entry is validated, then filtered by arch, caps and kernel. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/utsname.h>

#include "src/policy/caps.h"
#include "seccomp/profile.h"

/* Parsing state: names the input and the entry in every error. */
struct jctx {
	const char *src;
	const struct sc_context *sc;
	cl_error *err;
	unsigned kmaj, kmin;
};

/* One syscalls[] entry, parsed and validated before it is filtered. */
struct entry {
	uint32_t action;
	unsigned n_conds;
	struct sc_cond conds[SC_MAX_ARGS];
	bool skip;
};

static void jfree(json_t **j)
{
	json_decref(*j);
}

static int bad(struct jctx *j, const char *where, const char *fmt, const char *what)
{
	return cl_fail(j->err, 0, "%s: %s: %s%s", j->src, where, fmt, what ? what : "");
}

static int parse_kernel(const char *s, unsigned *maj, unsigned *min)
{
	char *end;
	unsigned long a, b;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	a = strtoul(s, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (a > 1000 || b > 1000)
		return -EINVAL;
	*maj = (unsigned)a;
	*min = (unsigned)b;
	return 0;
}

/* Capability name -> mask; a name libcap knows but this kernel lacks can
 * never be held (mask 0). */
static int cap_mask(const char *name, uint64_t *mask)
{
	char buf[64];
	cap_value_t v;

	if (cl_caps_parse(name, mask) == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s", name);
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (cap_from_name(buf, &v) == 0) {
		*mask = 0;
		return 0;
	}
	return -EINVAL;
}

/* Evaluates an includes/excludes object. all and any tell whether the filter
 * matches in the includes (all conditions) or excludes (any) sense. */
static int parse_filter(struct jctx *j, json_t *f, const char *where, bool *all, bool *any)
{
	json_t *arches = json_object_get(f, "arches"), *caps = json_object_get(f, "caps");
	json_t *mk = json_object_get(f, "minKernel"), *v;
	const char *key;
	size_t i;
	bool arch_hit = false;

	*all = true;
	*any = false;
	if (!json_is_object(f))
		return bad(j, where, "expected an object", NULL);
	json_object_foreach(f, key, v)
		if (strcmp(key, "arches") && strcmp(key, "caps") && strcmp(key, "minKernel"))
			return bad(j, where, "unknown key ", key);
	if (arches && !json_is_null(arches)) {
		if (!json_is_array(arches))
			return bad(j, where, "arches: expected an array of strings", NULL);
		json_array_foreach(arches, i, v) {
			if (!json_is_string(v))
				return bad(j, where, "arches: expected an array of strings", NULL);
			arch_hit |= sc_arch_is_native(json_string_value(v));
		}
		if (json_array_size(arches)) {
			*all &= arch_hit;
			*any |= arch_hit;
		}
	}
	if (caps && !json_is_null(caps)) {
		if (!json_is_array(caps))
			return bad(j, where, "caps: expected an array of strings", NULL);
		json_array_foreach(caps, i, v) {
			uint64_t m;
			if (!json_is_string(v) || cap_mask(json_string_value(v), &m) < 0)
				return bad(j, where, "caps: unknown capability ",
				           json_is_string(v) ? json_string_value(v) : "(not a string)");
			*all &= (j->sc->caps & m) != 0;
			*any |= (j->sc->caps & m) != 0;
		}
	}
	if (mk && !json_is_null(mk)) {
		unsigned a, b;
		bool ok;
		if (!json_is_string(mk) || parse_kernel(json_string_value(mk), &a, &b) < 0)
			return bad(j, where, "minKernel: expected a version like \"4.8\"", NULL);
		ok = j->kmaj > a || (j->kmaj == a && j->kmin >= b);
		*all &= ok;
		*any |= ok;
	}
	return 0;
}

static int get_u64(json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int parse_arg(struct jctx *j, json_t *a, const char *where, struct sc_cond *c)
{
	json_t *idx = json_object_get(a, "index"), *op = json_object_get(a, "op"), *v;
	const char *key;
	uint64_t n;

	if (!json_is_object(a))
		return bad(j, where, "expected an object", NULL);
	json_object_foreach(a, key, v)
		if (strcmp(key, "index") && strcmp(key, "value") && strcmp(key, "valueTwo") &&
		    strcmp(key, "op"))
			return bad(j, where, "unknown key ", key);
	if (get_u64(idx, &n) < 0 || n >= SC_MAX_ARGS)
		return bad(j, where, "index: expected an argument index from 0 to 5", NULL);
	c->arg = (unsigned)n;
	if (!json_is_string(op))
		return bad(j, where, "op: expected a string like SCMP_CMP_EQ", NULL);
	if (sc_op_parse(json_string_value(op), &c->op) < 0)
		return bad(j, where, "op: unknown operator ", json_string_value(op));
	c->v = c->v2 = 0;
	if ((v = json_object_get(a, "value")) && get_u64(v, &c->v) < 0)
		return bad(j, where, "value: expected an unsigned integer", NULL);
	if ((v = json_object_get(a, "valueTwo")) && get_u64(v, &c->v2) < 0)
		return bad(j, where, "valueTwo: expected an unsigned integer", NULL);
	return 0;
}

static int parse_action(struct jctx *j, json_t *act, json_t *eret, const char *where,
                        uint32_t *out)
{
	char w[96];
	uint64_t e = 0;
	int rc;

	snprintf(w, sizeof(w), "%s%s", where, *where ? "." : "");
	if (eret && !json_is_null(eret) && (get_u64(eret, &e) < 0 || e > 4095))
		return cl_fail(j->err, 0, "%s: %serrnoRet: expected an errno number", j->src, w);
	if (!json_is_string(act))
		return cl_fail(j->err, 0, "%s: %saction: expected a string like SCMP_ACT_ERRNO",
		               j->src, w);
	rc = sc_action_parse(json_string_value(act), (uint32_t)e, eret && !json_is_null(eret), out);
	if (rc == -EOPNOTSUPP)
		return cl_fail(j->err, 0, "%s: %saction: SCMP_ACT_NOTIFY is not supported "
		               "(cloister runs no seccomp listener)", j->src, w);
	if (rc < 0)
		return cl_fail(j->err, 0, "%s: %saction: unknown action '%s'", j->src, w,
		               json_string_value(act));
	return 0;
}

static int parse_entry(struct jctx *j, json_t *s, size_t i, struct entry *e)
{
	static const char *const keys[] = {"names", "name", "action", "errnoRet", "args",
		"includes", "excludes", "comment"};
	char where[96];
	json_t *v, *args = json_object_get(s, "args");
	const char *key;
	size_t k;
	bool all, any;

	snprintf(where, sizeof(where), "syscalls[%zu]", i);
	memset(e, 0, sizeof(*e));
	if (!json_is_object(s))
		return bad(j, where, "expected an object", NULL);
	json_object_foreach(s, key, v) {
		bool known = false;
		for (k = 0; k < sizeof(keys) / sizeof(*keys); k++)
			known |= !strcmp(key, keys[k]);
		if (!known)
			return bad(j, where, "unknown key ", key);
	}
	if (parse_action(j, json_object_get(s, "action"), json_object_get(s, "errnoRet"), where,
	                 &e->action) < 0)
		return -EINVAL;
	if (args && !json_is_null(args)) {
		if (!json_is_array(args) || json_array_size(args) > SC_MAX_ARGS)
			return bad(j, where, "args: expected an array of at most 6 conditions", NULL);
		json_array_foreach(args, k, v) {
			char w[128];
			snprintf(w, sizeof(w), "%s.args[%zu]", where, k);
			if (parse_arg(j, v, w, &e->conds[k]) < 0)
				return -EINVAL;
		}
		e->n_conds = (unsigned)json_array_size(args);
	}
	if ((v = json_object_get(s, "includes")) && !json_is_null(v)) {
		char w[128];
		snprintf(w, sizeof(w), "%s.includes", where);
		if (parse_filter(j, v, w, &all, &any) < 0)
			return -EINVAL;
		e->skip |= !all;
	}
	if ((v = json_object_get(s, "excludes")) && !json_is_null(v)) {
		char w[128];
		snprintf(w, sizeof(w), "%s.excludes", where);
		if (parse_filter(j, v, w, &all, &any) < 0)
			return -EINVAL;
		e->skip |= any;
	}
	return 0;
}

/* Adds the rules of one entry for one name. Conditions on distinct args
 * are ANDed; if an arg repeats, each condition is its own rule (OR), as
 * Docker and runc do, since libseccomp cannot AND two tests of one arg. */
static int add_entry(struct sc_profile *p, const char *name, const struct entry *e)
{
	bool repeat = false;
	int rc = 0;

	for (unsigned a = 0; a < e->n_conds; a++)
		for (unsigned b = a + 1; b < e->n_conds; b++)
			repeat |= e->conds[a].arg == e->conds[b].arg;
	if (!repeat)
		return sc_profile_add(p, name, e->action, e->conds, e->n_conds, NULL);
	for (unsigned a = 0; rc == 0 && a < e->n_conds; a++)
		rc = sc_profile_add(p, name, e->action, &e->conds[a], 1, NULL);
	return rc;
}

static int add_names(struct jctx *j, struct sc_profile *p, json_t *s, size_t i,
                     const struct entry *e)
{
	json_t *names = json_object_get(s, "names"), *name = json_object_get(s, "name"), *v;
	size_t k;
	int rc;

	if (names && !json_is_null(names)) {
		if (!json_is_array(names) || json_array_size(names) == 0)
			goto bad_names;
		json_array_foreach(names, k, v)
			if (!json_is_string(v) || !*json_string_value(v))
				goto bad_names;
	} else if (!json_is_string(name) || !*json_string_value(name)) {
		goto bad_names;
	}
	if (e->skip)
		return 0;
	if (!names || json_is_null(names))
		names = NULL;
	for (k = 0; names ? k < json_array_size(names) : k < 1; k++) {
		const char *n = json_string_value(names ? json_array_get(names, k) : name);
		if (seccomp_syscall_resolve_name(n) == __NR_SCMP_ERROR) {
			sc_profile_note_unknown(p, n);
			continue;
		}
		if (e->action == p->default_action)
			continue;
		rc = add_entry(p, n, e);
		if (rc < 0)
			return cl_fail(j->err, -rc, "%s: syscalls[%zu]", j->src, i);
	}
	return 0;
bad_names:
	return cl_fail(j->err, 0, "%s: syscalls[%zu]: expected \"names\" (array of syscall names) "
	               "or \"name\"", j->src, i);
}

static int add_arch(struct jctx *j, struct sc_profile *p, json_t *v, const char *where)
{
	uint32_t a;

	if (!json_is_string(v) || sc_arch_parse(json_string_value(v), &a) < 0)
		return bad(j, where, "unknown architecture ",
		           json_is_string(v) ? json_string_value(v) : "(not a string)");
	if (sc_profile_add_arch(p, a) < 0)
		return cl_fail(j->err, ENOMEM, "%s", where);
	return 0;
}

/* architectures: used as given. archMap: only the native entry counts, with
 * its sub-architectures (Docker's rule); other entries are still checked. */
static int parse_arches(struct jctx *j, json_t *o, struct sc_profile *p)
{
	json_t *list = json_object_get(o, "architectures"), *map = json_object_get(o, "archMap");
	json_t *v, *w;
	size_t i, k;
	char where[96];
	uint32_t native = seccomp_arch_native(), a;

	if (list && !json_is_null(list) && map && !json_is_null(map))
		return cl_fail(j->err, 0, "%s: \"architectures\" and \"archMap\" are both set; "
		               "use one", j->src);
	if (list && !json_is_null(list)) {
		if (!json_is_array(list))
			return bad(j, "architectures", "expected an array of SCMP_ARCH_* names", NULL);
		json_array_foreach(list, i, v) {
			snprintf(where, sizeof(where), "architectures[%zu]", i);
			if (add_arch(j, p, v, where) < 0)
				return -EINVAL;
		}
	}
	if (!map || json_is_null(map))
		return 0;
	if (!json_is_array(map))
		return bad(j, "archMap", "expected an array", NULL);
	json_array_foreach(map, i, v) {
		json_t *main = json_object_get(v, "architecture"), *subs;
		snprintf(where, sizeof(where), "archMap[%zu].architecture", i);
		if (!json_is_string(main) || sc_arch_parse(json_string_value(main), &a) < 0)
			return bad(j, where, "unknown architecture ",
			           json_is_string(main) ? json_string_value(main) : "(not a string)");
		subs = json_object_get(v, "subArchitectures");
		if (subs && !json_is_null(subs) && !json_is_array(subs))
			return bad(j, where, "subArchitectures: expected an array", NULL);
		if (a == native && add_arch(j, p, main, where) < 0)
			return -EINVAL;
		json_array_foreach(subs, k, w) {
			uint32_t sub;
			snprintf(where, sizeof(where), "archMap[%zu].subArchitectures[%zu]", i, k);
			if (!json_is_string(w) || sc_arch_parse(json_string_value(w), &sub) < 0)
				return bad(j, where, "unknown architecture ",
				           json_is_string(w) ? json_string_value(w) : "(not a string)");
			if (a == native && add_arch(j, p, w, where) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

static int parse_flags(struct jctx *j, json_t *flags, struct sc_profile *p)
{
	json_t *v;
	size_t i;

	if (!flags || json_is_null(flags))
		return 0;
	if (!json_is_array(flags))
		return bad(j, "flags", "expected an array of SECCOMP_FILTER_FLAG_* names", NULL);
	json_array_foreach(flags, i, v) {
		const char *f = json_is_string(v) ? json_string_value(v) : "";
		if (!strcmp(f, "SECCOMP_FILTER_FLAG_LOG"))
			p->flags |= SC_FLAG_LOG;
		else if (!strcmp(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
			p->flags |= SC_FLAG_SPEC_ALLOW;
		else if (!strcmp(f, "SECCOMP_FILTER_FLAG_TSYNC"))
			p->flags |= SC_FLAG_TSYNC;
		else
			return bad(j, "flags", "unknown or unsupported flag ", *f ? f : "(not a string)");
	}
	return 0;
}

static int parse_profile(struct jctx *j, json_t *o, struct sc_profile *p)
{
	json_t *sys = json_object_get(o, "syscalls"), *v;
	const char *key;
	size_t i;

	if (!json_is_object(o))
		return cl_fail(j->err, 0, "%s: expected a JSON object (a Docker/OCI seccomp profile)",
		               j->src);
	json_object_foreach(o, key, v) {
		if (!strcmp(key, "listenerPath") && json_is_string(v) && *json_string_value(v))
			return cl_fail(j->err, 0, "%s: listenerPath: seccomp notify listeners are not "
			               "supported", j->src);
		if (strcmp(key, "defaultAction") && strcmp(key, "defaultErrnoRet") &&
		    strcmp(key, "architectures") && strcmp(key, "archMap") &&
		    strcmp(key, "syscalls") && strcmp(key, "flags") &&
		    strcmp(key, "listenerPath") && strcmp(key, "listenerMetadata") &&
		    strcmp(key, "comment"))
			return cl_fail(j->err, 0, "%s: unknown key \"%s\"", j->src, key);
	}
	if (!json_object_get(o, "defaultAction"))
		return cl_fail(j->err, 0, "%s: defaultAction is missing", j->src);
	if (parse_action(j, json_object_get(o, "defaultAction"),
	                 json_object_get(o, "defaultErrnoRet"), "default", &p->default_action) < 0)
		return -EINVAL;
	if (parse_arches(j, o, p) < 0 || parse_flags(j, json_object_get(o, "flags"), p) < 0)
		return -EINVAL;
	if (sys && !json_is_null(sys) && !json_is_array(sys))
		return bad(j, "syscalls", "expected an array", NULL);
	json_array_foreach(sys, i, v) {
		struct entry e;
		if (parse_entry(j, v, i, &e) < 0 || add_names(j, p, v, i, &e) < 0)
			return -EINVAL;
	}
	return 0;
}

int sc_profile_from_json(const char *text, size_t len, const char *src,
                         const struct sc_context *ctx, struct sc_profile *out, cl_error *err)
{
	__attribute__((cleanup(jfree))) json_t *root = NULL;
	struct jctx j = {.src = src, .sc = ctx, .err = err};
	json_error_t je;
	json_t *lin;
	struct utsname u;
	int rc;

	memset(out, 0, sizeof(*out));
	out->badarch_action = SCMP_ACT_KILL_PROCESS;
	if (uname(&u) < 0 || parse_kernel(u.release, &j.kmaj, &j.kmin) < 0)
		j.kmaj = j.kmin = 0;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return cl_fail(err, 0, "%s: line %d, column %d: %s", src, je.line, je.column, je.text);
	/* A whole OCI config.json: use its linux.seccomp object. */
	lin = json_object_get(root, "linux");
	if (json_is_object(lin) && json_object_get(lin, "seccomp") &&
	    !json_object_get(root, "defaultAction"))
		rc = parse_profile(&j, json_object_get(lin, "seccomp"), out);
	else
		rc = parse_profile(&j, root, out);
	if (rc < 0)
		sc_profile_free(out);
	return rc;
}
