/* The opt-in hardening policy of bwrap mode: a JSON file (CLOISTER_BWRAP_POLICY,
 * else /etc/cloister/bwrap.json) whose limits and hardening every bwrap argv gets. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/cli/bwrap/bwrap.h"
#include "src/util/fdio.h"
#include "src/policy/parse.h"
#include "src/policy/trust.h"

#define POLICY_MAX_BYTES (64 * 1024)

static const char *const known_keys[] = {
	"memory", "memory_swap", "cpus", "pids", "timeout", "output_limit", "seccomp",
	"new_session", "drop_capabilities", "proc_masks", "own_tty", NULL,
};

/* A value given as a JSON string ("512m", "1.5") or a number (256, 0.5). */
static int value_text(json_t *v, const char *key, char *buf, size_t len, cl_error *err)
{
	if (json_is_string(v) && json_string_length(v) < len &&
	    strlen(json_string_value(v)) == json_string_length(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
		return 0;
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return 0;
	}
	if (json_is_real(v) && json_real_value(v) > 0) {
		snprintf(buf, len, "%.6f", json_real_value(v));
		/* cl_parse_* take no trailing zeros past what they need. */
		for (char *e = buf + strlen(buf) - 1; *e == '0' && e[-1] != '.'; e--)
			*e = '\0';
		return 0;
	}
	return cl_fail(err, 0, "\"%s\": expected a string or a non-negative number", key);
}

static int get_bool(json_t *o, const char *key, bool *out, cl_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return cl_fail(err, 0, "\"%s\": expected true or false", key);
	*out = json_is_true(v);
	return 0;
}

static int get_text(json_t *o, const char *key, char *buf, size_t len, bool *set,
                    cl_error *err)
{
	json_t *v = json_object_get(o, key);

	*set = v != NULL;
	return v ? value_text(v, key, buf, len, err) : 0;
}

static int parse_limits(json_t *o, struct cl_bwrap_hardening *h, cl_error *err)
{
	char t[256];
	bool set;
	uint64_t x;

	if (get_text(o, "memory", t, sizeof(t), &set, err) < 0)
		return -EINVAL;
	if (set && (cl_parse_size(t, &h->memory) < 0 || h->memory == 0))
		return cl_fail(err, 0, "\"memory\" '%s': expected a size like 512m", t);
	if (get_text(o, "memory_swap", t, sizeof(t), &set, err) < 0)
		return -EINVAL;
	if (set && strcmp(t, "0") == 0)
		h->memory_swap = 0;
	else if (set && cl_parse_size(t, &x) == 0 && x <= INT64_MAX)
		h->memory_swap = (int64_t)x;
	else if (set)
		return cl_fail(err, 0, "\"memory_swap\" '%s': expected a size like 1g, or 0", t);
	if (get_text(o, "cpus", t, sizeof(t), &set, err) < 0)
		return -EINVAL;
	if (set && cl_parse_cpus(t, &h->cpu_quota_us, &h->cpu_period_us) < 0)
		return cl_fail(err, 0, "\"cpus\" '%s': expected a number like 1.5", t);
	if (get_text(o, "pids", t, sizeof(t), &set, err) < 0)
		return -EINVAL;
	if (set && cl_parse_u64(t, 1, 4194304, &h->pids) < 0)
		return cl_fail(err, 0, "\"pids\" '%s': expected a number from 1 to 4194304", t);
	if (get_text(o, "timeout", t, sizeof(t), &set, err) < 0)
		return -EINVAL;
	if (set && cl_parse_seconds(t, &h->timeout_ms) < 0)
		return cl_fail(err, 0, "\"timeout\" '%s': expected seconds > 0, like 30 or 0.5", t);
	if (get_text(o, "output_limit", t, sizeof(t), &set, err) < 0)
		return -EINVAL;
	if (set && (cl_parse_size(t, &h->output_limit) < 0 || h->output_limit == 0))
		return cl_fail(err, 0, "\"output_limit\" '%s': expected a byte count > 0 (b, k, m, g)", t);
	return 0;
}

static int parse_seccomp(json_t *o, struct cl_bwrap_hardening *h, cl_error *err)
{
	json_t *v = json_object_get(o, "seccomp");
	const char *s;

	if (!v)
		return 0;
	s = json_is_string(v) ? json_string_value(v) : NULL;
	if (!s || !*s || strlen(s) != json_string_length(v))
		return cl_fail(err, 0, "\"seccomp\": expected \"default\", \"unconfined\" or "
		               "the absolute path of a profile");
	if (strcmp(s, "default") == 0) {
		h->seccomp = CL_SC_DEFAULT;
	} else if (strcmp(s, "unconfined") == 0) {
		h->seccomp = CL_SC_UNCONFINED;
	} else if (s[0] == '/') {
		h->seccomp = CL_SC_PROFILE;
		if (!(h->seccomp_path = strdup(s)))
			return cl_fail(err, ENOMEM, "\"seccomp\"");
	} else {
		return cl_fail(err, 0, "\"seccomp\" '%s': expected \"default\", \"unconfined\" "
		               "or an absolute path", s);
	}
	h->seccomp_set = true;
	return 0;
}

static int parse_doc(json_t *o, struct cl_bwrap_hardening *h, cl_error *err)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return cl_fail(err, 0, "expected a JSON object");
	/* An unknown key is a limit someone meant and would not get. */
	json_object_foreach(o, k, v) {
		size_t i;
		for (i = 0; known_keys[i] && strcmp(known_keys[i], k); i++)
			;
		if (!known_keys[i])
			return cl_fail(err, 0, "unknown key \"%s\"", k);
	}
	if (parse_limits(o, h, err) < 0 || parse_seccomp(o, h, err) < 0)
		return -EINVAL;
	if (get_bool(o, "new_session", &h->new_session, err) < 0 ||
	    get_bool(o, "drop_capabilities", &h->drop_caps, err) < 0 ||
	    get_bool(o, "proc_masks", &h->proc_masks, err) < 0 ||
	    get_bool(o, "own_tty", &h->own_tty, err) < 0)
		return -EINVAL;
	return 0;
}

static int load_fd(int fd, const char *path, struct cl_bwrap_hardening *h, cl_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	json_error_t je;
	json_t *doc;
	int rc = cl_read_all(fd, POLICY_MAX_BYTES, &buf, &len);

	if (rc == -EFBIG)
		return cl_fail(err, 0, "policy %s: larger than %d bytes", path, POLICY_MAX_BYTES);
	if (rc < 0)
		return cl_fail(err, -rc, "policy %s: reading it", path);
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (!doc)
		return cl_fail(err, 0, "policy %s: line %d: %s", path, je.line, je.text);
	rc = parse_doc(doc, h, err);
	json_decref(doc);
	if (rc < 0)
		return cl_wrap(err, "policy %s", path);
	h->active = true;
	return 0;
}

/* The profile the policy names is trusted only as far as the policy is:
 * the same checks, now (before anything runs) and again when it is read
 * for the launch (seccomp/prepare.c, p->seccomp_checked). */
static int check_profile(const struct cl_bwrap_hardening *h, const struct cl_policy *p,
                         const char *path, cl_error *err)
{
	int fd = -1, rc;

	if (h->seccomp != CL_SC_PROFILE)
		return 0;
	rc = cl_trust_open(h->seccomp_path, "seccomp profile", p, &fd, err);
	if (rc < 0 && err->msg[0] == '\0')
		rc = cl_fail(err, -rc, "seccomp profile %s: opening it", h->seccomp_path);
	if (rc < 0)
		return cl_wrap(err, "policy %s", path);
	close(fd);
	return 0;
}

int cl_bwrap_hardening_load(struct cl_bwrap_hardening *h, const struct cl_policy *p,
                            cl_error *err)
{
	const char *env = getenv(CL_BWRAP_POLICY_ENV);
	const char *path = env ? env : CL_BWRAP_POLICY_FILE;
	int fd = -1, rc;

	memset(h, 0, sizeof(*h));
	h->memory_swap = -1;
	if (env && !*env)
		return cl_fail(err, 0, "%s is set but empty: name a policy file or unset it",
		               CL_BWRAP_POLICY_ENV);
	rc = cl_trust_open(path, "policy", p, &fd, err);
	/* No policy file where none was named: bwrap as usual (one failed open). */
	if (rc == -ENOENT && !env)
		return 0;
	if (rc < 0 && err->msg[0] == '\0')
		return cl_fail(err, -rc, "policy %s: opening it", path);
	if (rc < 0)
		return rc;
	rc = load_fd(fd, path, h, err);
	close(fd);
	return rc < 0 ? rc : check_profile(h, p, path, err);
}

void cl_bwrap_hardening_free(struct cl_bwrap_hardening *h)
{
	free(h->seccomp_path);
	h->seccomp_path = NULL;
}

static uint64_t stricter(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* Before namespaces are resolved: a timeout needs the sandbox's own pid
 * namespace (its init's death is what takes every process with it). */
int cl_bwrap_hardening_pre(struct cl_bwrap *b, const struct cl_bwrap_hardening *h,
                           cl_error *err)
{
	if (!h->active || !h->timeout_ms)
		return 0;
	if (b->p->hooks.pidns_fd >= 0)
		return cl_fail(err, 0, "policy: \"timeout\" needs a pid namespace of the sandbox's "
		               "own, and --pidns joins an existing one; nothing was run");
	b->unshare_pid = true;
	return 0;
}

/* After the argv's own choices are known: the policy only ever tightens. */
void cl_bwrap_hardening_apply(struct cl_bwrap *b, struct cl_bwrap_hardening *h)
{
	struct cl_policy *p = b->p;

	if (!h->active)
		return;
	p->limits.memory = stricter(p->limits.memory, h->memory);
	if (h->memory_swap >= 0 && (p->limits.memory_swap < 0 || h->memory_swap < p->limits.memory_swap))
		p->limits.memory_swap = h->memory_swap;
	if (h->cpu_quota_us && (!p->limits.cpu_quota_us ||
	    h->cpu_quota_us * p->limits.cpu_period_us < p->limits.cpu_quota_us * h->cpu_period_us)) {
		p->limits.cpu_quota_us = h->cpu_quota_us;
		p->limits.cpu_period_us = h->cpu_period_us;
	}
	p->limits.pids = stricter(p->limits.pids, h->pids);
	/* The task count is bounded even where no cgroup can be made (as
	 * cloister run does: RLIMIT_NPROC counts per user namespace). */
	p->rlimit_nproc = cl_policy_nproc_bound(stricter(p->rlimit_nproc, h->pids));
	p->timeout_ms = stricter(p->timeout_ms, h->timeout_ms);
	p->output_limit = stricter(p->output_limit, h->output_limit);
	if (h->seccomp_set && h->seccomp != CL_SC_UNCONFINED) {
		free(p->seccomp_path);
		p->seccomp_path = h->seccomp_path;   /* ownership moves to the policy */
		h->seccomp_path = NULL;
		p->seccomp = h->seccomp;
		p->seccomp_checked = h->seccomp == CL_SC_PROFILE;
	}
	if (h->new_session)
		p->new_session = true;
	if (h->drop_caps) {
		/* Every set empty, the bounding set too, whatever --cap-add said. */
		p->caps_keep = 0;
		p->hooks.caps_keep_current = false;
		p->hooks.caps_keep_bounding = false;
	}
	if (h->proc_masks)
		p->hooks.proc_masks = true;
	/* The command gets a pty of the sandbox's own for every stdio fd that
	 * is a terminal (ns/pty.h), as under cloister run: never the caller's. */
	if (h->own_tty)
		p->pty = true;
}
