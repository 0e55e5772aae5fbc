/* The resolved policy as JSON (`--dry-run --json`): what would run, exactly. */
#define _GNU_SOURCE
#include "src/policy/policy_json.h"

#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static const char *mount_kind_name(enum cl_mount_kind k)
{
	static const char *const names[] = {
		[CL_MNT_BIND] = "bind", [CL_MNT_TMPFS] = "tmpfs", [CL_MNT_PROC] = "proc",
		[CL_MNT_DEV] = "dev", [CL_MNT_MQUEUE] = "mqueue", [CL_MNT_DIR] = "dir",
		[CL_MNT_FILE] = "file", [CL_MNT_BIND_DATA] = "bind-data",
		[CL_MNT_SYMLINK] = "symlink", [CL_MNT_REMOUNT_RO] = "remount-ro",
		[CL_MNT_CHMOD] = "chmod", [CL_MNT_OVERLAY] = "overlay",
	};
	return (unsigned)k < sizeof(names) / sizeof(*names) && names[k] ? names[k] : "?";
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *mounts_json(const struct cl_policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		json_t *o = json_object();
		json_object_set_new(o, "type", json_string(mount_kind_name(m->kind)));
		if (m->src)
			json_object_set_new(o, "source", json_string(m->src));
		json_object_set_new(o, "destination", str_or_null(m->dest));
		json_object_set_new(o, "readonly", json_boolean(m->flags & CL_MF_RO));
		if (m->flags & CL_MF_TRY)
			json_object_set_new(o, "optional", json_true());
		if (m->size)
			json_object_set_new(o, "size", json_integer((json_int_t)m->size));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *namespaces_json(int flags)
{
	static const struct { int flag; const char *name; } ns[] = {
		{CLONE_NEWUSER, "user"}, {CLONE_NEWNS, "mount"}, {CLONE_NEWPID, "pid"},
		{CLONE_NEWNET, "net"}, {CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"},
		{CLONE_NEWCGROUP, "cgroup"},
	};
	json_t *a = json_array();

	for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++)
		if (flags & ns[i].flag)
			json_array_append_new(a, json_string(ns[i].name));
	return a;
}

static json_t *limits_json(const struct cl_limits *l)
{
	json_t *o = json_object();

	json_object_set_new(o, "memory", l->memory ? json_integer((json_int_t)l->memory) : json_null());
	json_object_set_new(o, "memory_swap", l->memory_swap >= 0 ? json_integer(l->memory_swap)
	                                                          : json_null());
	json_object_set_new(o, "cpu_quota_us", l->cpu_quota_us ? json_integer((json_int_t)l->cpu_quota_us)
	                                                       : json_null());
	json_object_set_new(o, "cpu_period_us", l->cpu_period_us ? json_integer((json_int_t)l->cpu_period_us)
	                                                         : json_null());
	json_object_set_new(o, "pids", l->pids ? json_integer((json_int_t)l->pids) : json_null());
	json_object_set_new(o, "cgroup_parent", str_or_null(l->cgroup_parent));
	return o;
}

static json_t *ports_json(const struct cl_policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->n_ports; i++)
		json_array_append_new(a, json_pack("{s:s, s:i, s:i, s:s}", "host_ip", p->ports[i].host_ip,
		                                   "host_port", p->ports[i].host_port, "sandbox_port",
		                                   p->ports[i].sandbox_port, "protocol",
		                                   p->ports[i].udp ? "udp" : "tcp"));
	return a;
}

static json_t *forwards_json(const struct cl_policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->n_forwards; i++)
		json_array_append_new(a, json_pack("{s:i, s:s, s:i}", "sandbox_port",
		                                   p->forwards[i].sandbox_port, "host", p->forwards[i].host,
		                                   "host_port", p->forwards[i].host_port));
	return a;
}

char *cl_policy_to_json(const struct cl_policy *p)
{
	static const char *const sc[] = {"default", "unconfined", "profile", "bpf"};
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "argv", strv_json(p->argv));
	json_object_set_new(o, "env", strv_json(p->env));
	json_object_set_new(o, "workdir", json_string(p->workdir ? p->workdir : "/"));
	json_object_set_new(o, "namespaces", namespaces_json(p->ns_flags));
	json_object_set_new(o, "rootfs", str_or_null(p->rootfs));
	json_object_set_new(o, "root_readonly", json_boolean(p->root_readonly));
	json_object_set_new(o, "mounts", mounts_json(p));
	json_object_set_new(o, "uid", json_integer(p->uid));
	json_object_set_new(o, "gid", json_integer(p->gid));
	json_object_set_new(o, "host_uid", json_integer(p->host_uid));
	json_object_set_new(o, "host_gid", json_integer(p->host_gid));
	json_object_set_new(o, "hostname", str_or_null(p->hostname));
	json_object_set_new(o, "caps_keep", json_integer((json_int_t)p->caps_keep));
	json_object_set_new(o, "no_new_privs", json_boolean(p->no_new_privs));
	json_object_set_new(o, "new_session", json_boolean(p->new_session));
	json_object_set_new(o, "die_with_parent", json_boolean(p->die_with_parent));
	json_object_set_new(o, "pty", json_boolean(p->pty));
	json_object_set_new(o, "network", json_string(p->network == CL_NET_HOST ? "host" : "none"));
	json_object_set_new(o, "publish", ports_json(p));
	if (p->workspace)
		json_object_set_new(o, "workspace_ignore", json_string(p->ws_ignore_none ? "none" : "git"));
	json_object_set_new(o, "publish_wait_ms", json_integer(p->publish_wait_ms));
	json_object_set_new(o, "forward_out", forwards_json(p));
	json_object_set_new(o, "limits", limits_json(&p->limits));
	json_object_set_new(o, "timeout_ms", p->timeout_ms ? json_integer((json_int_t)p->timeout_ms)
	                                                  : json_null());
	json_object_set_new(o, "output_limit", p->output_limit
	                    ? json_integer((json_int_t)p->output_limit) : json_null());
	json_object_set_new(o, "rlimit_nproc", p->rlimit_nproc
	                    ? json_integer((json_int_t)p->rlimit_nproc) : json_null());
	json_object_set_new(o, "seccomp", json_string(sc[p->seccomp]));
	json_object_set_new(o, "seccomp_path", str_or_null(p->seccomp_path));
	json_object_set_new(o, "allow_nested", json_boolean(p->allow_nested));
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

int cl_policy_print_json(const struct cl_policy *p)
{
	char *json = cl_policy_to_json(p);

	if (json)
		puts(json);
	free(json);
	return json ? 0 : -1;
}
