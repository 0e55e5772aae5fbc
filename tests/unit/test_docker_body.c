#define _GNU_SOURCE
/* Unit tests for the docker executor's mapping: `cloister run` argv in,
 * container-create body (or the refusal naming the field) out. No daemon. */
#include <stdlib.h>

#include "src/cli/cli.h"
#include "src/executors/docker_body.h"
#include "unit.h"

static json_t *body_of(const char *const *args, const char *seccomp, cl_error *err)
{
	char *argv[24];
	struct cl_policy p;
	struct cl_run_opts o;
	json_t *b = NULL;
	int argc = 0;

	argv[argc++] = "run";
	argv[argc++] = "--runtime";
	argv[argc++] = "docker";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc++] = "--";
	argv[argc++] = "true";
	argv[argc] = NULL;
	memset(err, 0, sizeof(*err));
	if (cl_cli_run_parse(argc, argv, &p, &o, err) == 0)
		b = cl_docker_body(&p, seccomp, err);
	cl_policy_free(&p);
	return b;
}

static json_int_t hint(json_t *b, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(b, "HostConfig"), key));
}

static const char *hstr(json_t *b, const char *key)
{
	return json_string_value(json_object_get(json_object_get(b, "HostConfig"), key));
}

static bool has_str(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

static void test_defaults(void)
{
	cl_error err;
	const char *none[] = {NULL};
	json_t *b = body_of(none, "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}", &err);
	json_t *h = json_object_get(b, "HostConfig");

	CHECK("default body", b != NULL);
	CHECK("init", json_is_true(json_object_get(h, "Init")));
	CHECK("network none", hstr(b, "NetworkMode") && strcmp(hstr(b, "NetworkMode"), "none") == 0);
	CHECK("read-only root", json_is_true(json_object_get(h, "ReadonlyRootfs")));
	CHECK("cap-drop ALL", has_str(json_object_get(h, "CapDrop"), "ALL"));
	CHECK("no cap added", json_array_size(json_object_get(h, "CapAdd")) == 0);
	CHECK("no-new-privileges", has_str(json_object_get(h, "SecurityOpt"), "no-new-privileges:true"));
	CHECK("seccomp profile passed",
	      has_str(json_object_get(h, "SecurityOpt"), "seccomp={\"defaultAction\":\"SCMP_ACT_ALLOW\"}"));
	CHECK("tmpfs /tmp", json_object_get(json_object_get(h, "Tmpfs"), "/tmp") != NULL);
	CHECK("host system dirs not bound", json_array_size(json_object_get(h, "Binds")) == 0);
	CHECK("empty entrypoint", json_array_size(json_object_get(b, "Entrypoint")) == 0);
	CHECK("pids bounded by default", hint(b, "PidsLimit") > 0);
	json_decref(b);
}

static void test_limits_caps_ports(void)
{
	cl_error err;
	const char *lim[] = {"--memory", "64m", "--memory-swap", "0", "--cpus", "1.5", "--pids", "7",
	                     "--cap-add", "NET_RAW", NULL};
	const char *pub[] = {"--network", "host", "--publish", "127.0.0.1:8080:80", NULL};
	const char *pub_none[] = {"--publish", "8080:80", NULL};
	json_t *b = body_of(lim, "unconfined", &err);

	CHECK("memory", hint(b, "Memory") == 64 << 20);
	CHECK("memory-swap 0 = no swap", hint(b, "MemorySwap") == 64 << 20);
	CHECK("cpus", hint(b, "CpuQuota") * 100000 / hint(b, "CpuPeriod") == 150000);
	CHECK("pids", hint(b, "PidsLimit") == 7);
	CHECK("cap-add", has_str(json_object_get(json_object_get(b, "HostConfig"), "CapAdd"), "CAP_NET_RAW"));
	json_decref(b);
	b = body_of(pub, "unconfined", &err);
	CHECK("publish with network", b && strcmp(hstr(b, "NetworkMode"), "bridge") == 0 &&
	      json_object_get(json_object_get(json_object_get(b, "HostConfig"), "PortBindings"), "80/tcp"));
	json_decref(b);
	b = body_of(pub_none, "unconfined", &err);
	CHECK("publish with network none refused", !b && strstr(err.msg, "--publish needs network"));
}

static void test_refusals(void)
{
	cl_error err;
	const char *rootfs[] = {"--rootfs", "/", NULL};
	const char *bpf[] = {"--seccomp-bpf", "/dev/null", NULL};
	const char *nested[] = {"--allow-nested", NULL};
	const char *wait[] = {"--network", "host", "--publish", "8080:80", "--publish-wait", "0", NULL};

	CHECK("rootfs refused", !body_of(rootfs, "unconfined", &err) && strstr(err.msg, "--rootfs"));
	CHECK("raw bpf refused", !body_of(bpf, "unconfined", &err) && strstr(err.msg, "--seccomp-bpf"));
	CHECK("nested refused", !body_of(nested, "unconfined", &err) && strstr(err.msg, "--allow-nested"));
	CHECK("publish-wait refused", !body_of(wait, "unconfined", &err) && strstr(err.msg, "--publish-wait"));
}

int main(void)
{
	test_defaults();
	test_limits_caps_ports();
	test_refusals();
	UNIT_MAIN_END;
}
