/* Spec -> cl_policy: /bin/sh -lc COMMAND in /workspace (the request,
 * read-only), /result writable, the spec's env only, no network unless
 * allowNetwork, limits and timeout. */
#define _GNU_SOURCE
#include "src/sandbox/policy_build.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int nomem(struct sb_error *e, const char *what)
{
	return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "building the policy: %s", what);
}

static int set_env_object(struct cl_policy *p, const json_t *env, struct sb_error *e)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)env, k, v)
		if (json_is_string(v) && cl_policy_setenv(p, k, json_string_value(v)) < 0)
			return nomem(e, "env");
	return 0;
}

static int add_mounts(const struct sb_spec *s, const struct sb_layout *l, struct cl_policy *p,
                      struct sb_error *e)
{
	cl_error err = {0};
	size_t n_default;

	if (cl_policy_add_default_mounts(p, &err) < 0)
		return sb_from_cl(e, SB_PROCESS_SPAWN_FAILED, &err);
	n_default = p->n_mounts;
	/* Volumes before the runtime mounts: even a volume that slipped past
	 * validation could not cover /workspace or /result. */
	for (size_t i = 0; i < s->n_volumes; i++)
		if (!cl_policy_add_mount(p, CL_MNT_BIND, s->volumes[i].host, s->volumes[i].container,
		                         s->volumes[i].readonly ? CL_MF_RO : 0))
			return nomem(e, "volumes");
	/* `sh -l` reads /etc/profile, which would set the host's PATH and
	 * profile.d variables: the command must see only the spec's env. */
	if (!cl_policy_add_mount(p, CL_MNT_BIND, l->empty_profile, "/etc/profile", CL_MF_RO | CL_MF_TRY))
		return nomem(e, "mounts");
	if (!cl_policy_add_mount(p, CL_MNT_BIND, l->request, "/workspace", CL_MF_RO) ||
	    !cl_policy_add_mount(p, CL_MNT_BIND, l->result, "/result", 0) ||
	    /* The protocol's result file stays writable inside the read-only
	     * request: a file of tmp/ bound over the placeholder. */
	    !cl_policy_add_mount(p, CL_MNT_BIND, l->result_file, SB_RESULT_INSIDE, 0))
		return nomem(e, "mounts");
	/* The identity `cloister run` gives a root caller (issue 29): spec
	 * mode would otherwise map uid 0 to host uid 0. After the last bind:
	 * the spec's volumes, the request and the result are the caller's. */
	if (s->host_root)
		return 0;
	cl_policy_root_identity(p, n_default);
	/* The request is cloister's own (0700 dirs of the caller): read-only,
	 * but idmapped too, or the sandbox could not reach its result file. */
	for (size_t i = n_default; p->host_uid != getuid() && i < p->n_mounts; i++)
		if (p->mounts[i].kind == CL_MNT_BIND && p->mounts[i].flags & CL_MF_RO &&
		    strcmp(p->mounts[i].dest, "/workspace") == 0)
			p->mounts[i].flags |= CL_MF_IDMAP;
	return 0;
}

static int add_network(const struct sb_spec *s, struct cl_policy *p, struct sb_error *e)
{
	cl_error err = {0};

	/* A remote workspace has no port of this host to publish on; with the
	 * network allowed the loop below would not run, so say it here. */
	if (s->n_ports && p->runtime == CL_RT_CODEPLANE)
		return sb_fail(e, SB_INVALID_INPUT, 0, NULL,
		               "Sandbox ports cannot be published from a Codeplane workspace.");
	if (s->allow_network) {
		/* The host's network: published ports are simply the host's. */
		p->network = CL_NET_HOST;
		p->ns_flags &= ~CLONE_NEWNET;
		/* Docker's bridge publishes them only with the network allowed. */
		if (p->runtime != CL_RT_DOCKER)
			return 0;
	}
	for (size_t i = 0; i < s->n_ports; i++) {
		char spec[32];
		snprintf(spec, sizeof(spec), "%u:%u", s->ports[i].host, s->ports[i].container);
		if (cl_policy_add_publish(p, spec, &err) < 0)
			return sb_from_cl(e, SB_INVALID_INPUT, &err);
	}
	return 0;
}

/* What a remote executor needs of the spec: its request and result are
 * shipped and collected rather than bound, and "workspace" names the
 * remote workspace (local runtimes ignore all of it). */
static int set_remote(const struct sb_spec *s, struct cl_policy *p, struct sb_error *e)
{
	const struct sb_workspace *w = &s->workspace;

	p->spec_io = true;
	if (!w->present)
		return 0;
	/* Never cut short: a truncated name would find another workspace. */
	if ((w->name && strlen(w->name) >= sizeof(p->remote_name)) ||
	    (w->snapshot_id && strlen(w->snapshot_id) >= sizeof(p->remote_snapshot))) {
		if (s->runtime_req != CL_RT_CODEPLANE)
			return 0;
		return sb_fail(e, SB_INVALID_INPUT, 0, NULL, "Sandbox workspace name (at most %zu bytes) or "
		               "snapshotId (at most %zu) is too long for a Codeplane workspace.",
		               sizeof(p->remote_name) - 1, sizeof(p->remote_snapshot) - 1);
	}
	if (w->name)
		snprintf(p->remote_name, sizeof(p->remote_name), "%s", w->name);
	if (w->snapshot_id)
		snprintf(p->remote_snapshot, sizeof(p->remote_snapshot), "%s", w->snapshot_id);
	if (w->persistence)
		p->remote_persistence = strcmp(w->persistence, "sticky") == 0 ? CL_REMOTE_STICKY
		                        : CL_REMOTE_EPHEMERAL;
	return 0;
}

int sb_build_policy(const struct sb_spec *s, const struct sb_layout *l, const json_t *extra_env,
                    struct cl_policy *p, struct sb_error *e)
{
	cl_error err = {0};
	int rc;

	cl_policy_init(p);
	p->runtime = (enum cl_runtime)s->runtime_req;
	if (s->image && !(p->image = strdup(s->image)))
		return nomem(e, "image");
	p->allow_nested = s->allow_nested;
	if (!(p->hostname = strdup("cloister")) || !(p->workdir = strdup("/workspace")))
		return nomem(e, "workdir");
	if (!cl_strv_push(&p->argv, "/bin/sh") || !cl_strv_push(&p->argv, "-lc") ||
	    !cl_strv_push(&p->argv, s->command))
		return nomem(e, "argv");
	if ((rc = add_mounts(s, l, p, e)) < 0)
		return rc;
	/* Only the spec's environment (PATH defaulted), then egress and the
	 * protocol variables. */
	if (s->env && (rc = set_env_object(p, s->env, e)) < 0)
		return rc;
	if (!cl_policy_getenv(p, "PATH") && cl_policy_setenv(p, "PATH", SB_DEFAULT_PATH) < 0)
		return nomem(e, "PATH");
	if (extra_env && (rc = set_env_object(p, extra_env, e)) < 0)
		return rc;
	if ((rc = add_network(s, p, e)) < 0)
		return rc;
	p->limits.memory = s->memory_bytes;
	p->limits.cpu_quota_us = s->cpu_quota_us;
	p->limits.cpu_period_us = s->cpu_period_us;
	p->timeout_ms = s->tool_timeout_ms;
	if ((rc = set_remote(s, p, e)) < 0)
		return rc;
	if (cl_policy_validate(p, &err) < 0)
		return sb_from_cl(e, SB_INVALID_INPUT, &err);
	return 0;
}
