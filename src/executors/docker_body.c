/* Policy -> container-create JSON: every field the policy sets is mapped
 * or refused with a reason; docker's own defaults never widen it. */
#define _GNU_SOURCE
#include "src/executors/docker_body.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Linux capability numbers (linux/capability.h), as Docker names them. */
static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};

const char *cl_docker_cap_name(unsigned cap)
{
	return cap < sizeof(cap_names) / sizeof(*cap_names) ? cap_names[cap] : NULL;
}

const char *cl_docker_image(const struct cl_policy *p)
{
	const char *env = getenv("CLOISTER_DOCKER_IMAGE");

	if (p->image && p->image[0])
		return p->image;
	return env && env[0] ? env : CL_DOCKER_DEFAULT_IMAGE;
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* The host's own system dirs (native's view of /usr, /etc, ...) are the
 * image's job here; /proc and /dev are docker's own. */
static bool image_provides(const struct cl_mount *m)
{
	if (m->kind == CL_MNT_BIND && (m->flags & CL_MF_HOST_SYSTEM))
		return true;
	return (m->kind == CL_MNT_PROC && strcmp(m->dest, "/proc") == 0) ||
	       (m->kind == CL_MNT_DEV && strcmp(m->dest, "/dev") == 0);
}

/* A bind source as the daemon (root) will open it: canonical, so no
 * symlink the sandbox may have planted redirects it, and readable by the
 * caller, so the daemon's rights are never lent out. */
static int bind_entry(const struct cl_mount *m, json_t *binds, cl_error *err)
{
	char *real = realpath(m->src, NULL);
	char *entry = NULL;
	int rc = 0;

	if (!real) {
		if (m->flags & CL_MF_TRY)
			return 0;
		return cl_fail_errno(err, "docker bind %s", m->src);
	}
	if (strcmp(real, m->src) != 0)
		rc = cl_fail(err, 0, "docker bind %s: the path goes through a symlink (to %s); "
		             "name the real path", m->src, real);
	else if (access(real, (m->flags & CL_MF_RO) ? R_OK : R_OK | W_OK) < 0)
		rc = cl_fail_errno(err, "docker bind %s", m->src);
	else if (strchr(real, ':') || strchr(m->dest, ':'))
		rc = cl_fail(err, 0, "docker bind %s: paths with ':' cannot be bound by docker", m->src);
	else if (asprintf(&entry, "%s:%s:%s", real, m->dest, (m->flags & CL_MF_RO) ? "ro" : "rw") < 0)
		rc = cl_fail(err, ENOMEM, "docker bind %s", m->src);
	else
		json_array_append_new(binds, json_string(entry));
	free(entry);
	free(real);
	return rc;
}

static int tmpfs_entry(const struct cl_mount *m, json_t *tmpfs, cl_error *err)
{
	char opts[96];

	snprintf(opts, sizeof(opts), "rw,exec,nosuid,nodev%s%llu", m->size ? ",size=" : "",
	         (unsigned long long)m->size);
	if (!m->size)
		snprintf(opts, sizeof(opts), "rw,exec,nosuid,nodev");
	if (m->mode != (mode_t)-1 && m->mode != 0) {
		size_t l = strlen(opts);
		snprintf(opts + l, sizeof(opts) - l, ",mode=%o", (unsigned)m->mode);
	}
	json_object_set_new(tmpfs, m->dest, json_string(opts));
	return 0;
}

static int mounts(const struct cl_policy *p, json_t *host, cl_error *err)
{
	json_t *binds = json_array(), *tmpfs = json_object();
	int rc = 0;

	json_object_set_new(host, "Binds", binds);
	json_object_set_new(host, "Tmpfs", tmpfs);
	for (size_t i = 0; rc == 0 && i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		if (image_provides(m))
			continue;
		if (m->kind == CL_MNT_BIND && m->src_fd < 0 && m->src)
			rc = bind_entry(m, binds, err);
		else if (m->kind == CL_MNT_TMPFS)
			rc = tmpfs_entry(m, tmpfs, err);
		else
			rc = cl_fail(err, 0, "the docker executor cannot make mount #%zu at %s (only "
			             "binds and tmpfs); use --runtime native", i + 1,
			             m->dest ? m->dest : "?");
	}
	return rc;
}

static json_t *caps_json(uint64_t keep, cl_error *err, int *rc)
{
	json_t *a = json_array();

	for (unsigned c = 0; c < 64; c++) {
		if (!(keep & (1ULL << c)))
			continue;
		if (!cl_docker_cap_name(c)) {
			*rc = cl_fail(err, 0, "capability %u has no docker name", c);
			break;
		}
		json_array_append_new(a, json_string(cl_docker_cap_name(c)));
	}
	return a;
}

/* Docker silently ignores -p with --network none: refused here instead.
 * Network allowed means docker's bridge: outbound works and published
 * ports reach the container (the host's stack itself is never shared). */
static int network(const struct cl_policy *p, json_t *top, json_t *host, cl_error *err)
{
	json_t *exposed, *bindings;

	if (p->network == CL_NET_NONE && p->n_ports)
		return cl_fail(err, 0, "--publish needs network on the docker executor (docker "
		               "ignores published ports with network none); add --network host");
	if (p->n_forwards)
		return cl_fail(err, 0, "--forward-out is not supported by the docker executor");
	/* docker's own proxy answers published ports: no wait to apply. */
	if (p->publish_wait_ms != CL_DEFAULT_PUBLISH_WAIT_MS)
		return cl_fail(err, 0, "--publish-wait is not supported by the docker executor "
		               "(docker's proxy handles its published ports)");
	/* After the refusals: nothing to free on their way out. */
	exposed = json_object();
	bindings = json_object();
	json_object_set_new(host, "NetworkMode", json_string(p->network == CL_NET_NONE ? "none"
	                                                                               : "bridge"));
	for (size_t i = 0; i < p->n_ports; i++) {
		const struct cl_port *pt = &p->ports[i];
		char key[32], hport[8];
		json_t *list;
		snprintf(key, sizeof(key), "%u/%s", pt->sandbox_port, pt->udp ? "udp" : "tcp");
		snprintf(hport, sizeof(hport), "%u", pt->host_port);
		json_object_set_new(exposed, key, json_object());
		list = json_object_get(bindings, key);
		if (!list)
			json_object_set_new(bindings, key, list = json_array());
		json_array_append_new(list, json_pack("{s:s,s:s}", "HostIp",
		                                      pt->host_ip[0] ? pt->host_ip : "127.0.0.1",
		                                      "HostPort", hport));
	}
	json_object_set_new(top, "ExposedPorts", exposed);
	json_object_set_new(host, "PortBindings", bindings);
	return 0;
}

static void limits(const struct cl_policy *p, json_t *host)
{
	const struct cl_limits *l = &p->limits;

	if (l->memory)
		json_object_set_new(host, "Memory", json_integer((json_int_t)l->memory));
	/* Docker's MemorySwap is memory plus swap, like the policy's; 0 in the
	 * policy means no swap at all, which docker spells as = Memory. */
	if (l->memory_swap == 0 && l->memory)
		json_object_set_new(host, "MemorySwap", json_integer((json_int_t)l->memory));
	else if (l->memory_swap > 0)
		json_object_set_new(host, "MemorySwap", json_integer(l->memory_swap));
	if (l->cpu_quota_us && l->cpu_period_us) {
		json_object_set_new(host, "CpuQuota", json_integer((json_int_t)l->cpu_quota_us));
		json_object_set_new(host, "CpuPeriod", json_integer((json_int_t)l->cpu_period_us));
	}
	/* --pids, else the bound native puts on tasks (RLIMIT_NPROC). */
	json_object_set_new(host, "PidsLimit", json_integer((json_int_t)(l->pids ? l->pids
	                                                       : p->rlimit_nproc)));
	if (l->cgroup_parent)
		json_object_set_new(host, "CgroupParent", json_string(l->cgroup_parent));
}

/* Native-only requests: refused by name. */
static int refuse_native_only(const struct cl_policy *p, cl_error *err)
{
	const struct cl_hooks *h = &p->hooks;

	if (p->argv0 || h->info_fd >= 0 || h->status_fd >= 0 || h->block_fd >= 0 ||
	    h->userns_block_fd >= 0 || h->n_seccomp_fds || h->userns_fd >= 0 || h->pidns_fd >= 0)
		return cl_fail(err, 0, "bwrap hooks (--argv0, --info-fd, --userns, ...) need --runtime native");
	if (p->rootfs)
		return cl_fail(err, 0, "--rootfs is not supported by the docker executor; use --image");
	if (p->allow_nested)
		return cl_fail(err, 0, "--allow-nested is not supported by the docker executor");
	if (p->seccomp == CL_SC_BPF)
		return cl_fail(err, 0, "--seccomp-bpf is not supported by the docker executor "
		               "(docker takes a JSON profile); use --seccomp FILE.json");
	if (p->workspace)
		return cl_fail(err, 0, "--workspace is not supported by the docker executor");
	return 0;
}

json_t *cl_docker_body(const struct cl_policy *p, const char *seccomp, cl_error *err)
{
	json_t *top, *host, *sec;
	char user[32], *opt = NULL;
	int rc = refuse_native_only(p, err);

	if (rc < 0)
		return NULL;
	top = json_object();
	host = json_object();
	/* A caller who is not root runs as itself: docker has no user
	 * namespace here, so "root inside" would be host root on the binds.
	 * Root's sandbox keeps its inside ids, without any capability. */
	snprintf(user, sizeof(user), "%u:%u", getuid() ? (unsigned)p->host_uid : (unsigned)p->uid,
	         getuid() ? (unsigned)p->host_gid : (unsigned)p->gid);
	json_object_set_new(top, "Image", json_string(cl_docker_image(p)));
	json_object_set_new(top, "Cmd", strv_json(p->argv));
	/* The image's ENTRYPOINT would run first: the policy's command only. */
	json_object_set_new(top, "Entrypoint", json_array());
	json_object_set_new(top, "Env", strv_json(p->env));
	json_object_set_new(top, "WorkingDir", json_string(p->workdir ? p->workdir : "/"));
	json_object_set_new(top, "User", json_string(user));
	if (p->hostname)
		json_object_set_new(top, "Hostname", json_string(p->hostname));
	/* stdin is relayed as native passes it on; StdinOnce closes the
	 * container's stdin when ours ends. */
	json_object_set_new(top, "OpenStdin", json_true());
	json_object_set_new(top, "StdinOnce", json_true());
	json_object_set_new(top, "AttachStdin", json_true());
	json_object_set_new(top, "AttachStdout", json_true());
	json_object_set_new(top, "AttachStderr", json_true());
	json_object_set_new(top, "Labels", json_pack("{s:s}", "org.cloister.executor", "docker"));
	json_object_set_new(top, "HostConfig", host);
	/* An init as pid 1: reaps zombies, forwards signals, like native's. */
	json_object_set_new(host, "Init", json_true());
	json_object_set_new(host, "ReadonlyRootfs", json_true());
	json_object_set_new(host, "IpcMode", json_string("private"));
	json_object_set_new(host, "CapDrop", json_pack("[s]", "ALL"));
	json_object_set_new(host, "CapAdd", caps_json(p->caps_keep, err, &rc));
	json_object_set_new(host, "ShmSize", json_integer((json_int_t)CL_DEFAULT_DEV_SIZE));
	sec = json_array();
	json_object_set_new(host, "SecurityOpt", sec);
	if (p->no_new_privs)
		json_array_append_new(sec, json_string("no-new-privileges:true"));
	if (!seccomp)
		;  /* docker's own default profile (NATIVE=0, docker_seccomp.c) */
	else if (asprintf(&opt, "seccomp=%s", seccomp) < 0)
		rc = cl_fail(err, ENOMEM, "docker seccomp option");
	else
		json_array_append_new(sec, json_string(opt));
	free(opt);
	limits(p, host);
	if (rc == 0)
		rc = network(p, top, host, err);
	if (rc == 0)
		rc = mounts(p, host, err);
	if (rc < 0) {
		json_decref(top);
		return NULL;
	}
	return top;
}
