/* Unit tests for the pure value parsers: table rows of input and expected
 * output, one runner per parser. */
#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <sys/wait.h>

#include "src/policy/parse.h"
#include "src/policy/policy.h"
#include "unit.h"

static const struct { const char *in; int rc; uint64_t out; } sizes[] = {
	{"1", 0, 1}, {"512", 0, 512}, {"1b", 0, 1}, {"1k", 0, 1024}, {"1K", 0, 1024},
	{"512m", 0, 512ULL << 20}, {"2G", 0, 2ULL << 30}, {"", -EINVAL, 0}, {"0", -EINVAL, 0},
	{"01m", -EINVAL, 0}, {"-1", -EINVAL, 0}, {"1.5g", -EINVAL, 0}, {"m", -EINVAL, 0},
	{"1mb", -EINVAL, 0}, {" 1", -EINVAL, 0}, {"1 ", -EINVAL, 0},
	{"99999999999999999999", -ERANGE, 0}, {"17179869184g", -ERANGE, 0},
};

static const struct { const char *in; int rc; uint64_t quota; } cpus[] = {
	{"1", 0, 100000}, {"1.5", 0, 150000}, {"0.5", 0, 50000}, {".5", 0, 50000},
	{"2", 0, 200000}, {"0.01", 0, 1000}, {"0.001", -ERANGE, 0}, {"0.0", -ERANGE, 0}, {"0", -EINVAL, 0},
	{"", -EINVAL, 0}, {"01", -EINVAL, 0}, {"1.", -EINVAL, 0}, {"-1", -EINVAL, 0},
	{"1e3", -EINVAL, 0}, {"abc", -EINVAL, 0}, {".", -EINVAL, 0},
};

static const struct { const char *in; int rc; uint64_t ms; } secs[] = {
	{"1", 0, 1000}, {"0.5", 0, 500}, {"30", 0, 30000}, {"0", -ERANGE, 0},
	{"0.0001", -ERANGE, 0}, {"x", -EINVAL, 0}, {"", -EINVAL, 0},
};

static const struct { const char *in; int ok; const char *ip; int hp, sp, udp; } pubs[] = {
	{"8080:80", 1, "127.0.0.1", 8080, 80, 0},
	{"8080:80/tcp", 1, "127.0.0.1", 8080, 80, 0},
	{"5353:53/udp", 1, "127.0.0.1", 5353, 53, 1},
	{"0.0.0.0:8080:80", 1, "0.0.0.0", 8080, 80, 0},
	{"[::1]:8080:80", 1, "::1", 8080, 80, 0},
	{"80", 0, NULL, 0, 0, 0}, {"0:80", 0, NULL, 0, 0, 0}, {"8080:65536", 0, NULL, 0, 0, 0},
	{"8080:80/sctp", 0, NULL, 0, 0, 0}, {":80", 0, NULL, 0, 0, 0}, {"", 0, NULL, 0, 0, 0},
	{"a:b:c", 0, NULL, 0, 0, 0}, {"1.2.3.4::80", 0, NULL, 0, 0, 0},
};

static const struct { const char *in; int ok; int sp; const char *host; int hp; } fwds[] = {
	{"3128:127.0.0.1:8080", 1, 3128, "127.0.0.1", 8080},
	{"80:proxy.local:3128", 1, 80, "proxy.local", 3128},
	{"80:[::1]:3128", 1, 80, "::1", 3128},
	{"80:127.0.0.1", 0, 0, NULL, 0}, {"x:h:1", 0, 0, NULL, 0}, {"80::1", 0, 0, NULL, 0},
	{"0:h:1", 0, 0, NULL, 0}, {"", 0, 0, NULL, 0},
};

static void ports(void)
{
	char name[128];

	for (size_t i = 0; i < sizeof(pubs) / sizeof(*pubs); i++) {
		struct cl_port p;
		int rc = cl_parse_publish(pubs[i].in, &p);
		snprintf(name, sizeof(name), "publish '%s'", pubs[i].in);
		if (pubs[i].ok)
			CHECK(name, rc == 0 && !strcmp(p.host_ip, pubs[i].ip) && p.host_port == pubs[i].hp &&
			            p.sandbox_port == pubs[i].sp && p.udp == pubs[i].udp);
		else
			CHECK(name, rc < 0);
	}
	for (size_t i = 0; i < sizeof(fwds) / sizeof(*fwds); i++) {
		struct cl_forward f;
		int rc = cl_parse_forward(fwds[i].in, &f);
		snprintf(name, sizeof(name), "forward '%s'", fwds[i].in);
		if (fwds[i].ok)
			CHECK(name, rc == 0 && f.sandbox_port == fwds[i].sp && !strcmp(f.host, fwds[i].host) &&
			            f.host_port == fwds[i].hp);
		else
			CHECK(name, rc < 0);
	}
}

int main(void)
{
	ports();
	char buf[64], name[128];
	uint64_t v, q, per;
	uint16_t port;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		int rc = cl_parse_size(sizes[i].in, &v);
		snprintf(name, sizeof(name), "size '%s'", sizes[i].in);
		CHECK(name, rc == sizes[i].rc && (rc || v == sizes[i].out));
	}
	for (size_t i = 0; i < sizeof(cpus) / sizeof(*cpus); i++) {
		int rc = cl_parse_cpus(cpus[i].in, &q, &per);
		snprintf(name, sizeof(name), "cpus '%s'", cpus[i].in);
		CHECK(name, rc == cpus[i].rc && (rc || (q == cpus[i].quota && per == 100000)));
	}
	for (size_t i = 0; i < sizeof(secs) / sizeof(*secs); i++) {
		int rc = cl_parse_seconds(secs[i].in, &v);
		snprintf(name, sizeof(name), "seconds '%s'", secs[i].in);
		CHECK(name, rc == secs[i].rc && (rc || v == secs[i].ms));
	}
	CHECK("u64 in range", cl_parse_u64("42", 1, 100, &v) == 0 && v == 42);
	CHECK("u64 below min", cl_parse_u64("0", 1, 100, &v) == -ERANGE);
	CHECK("u64 junk", cl_parse_u64("4x", 0, 100, &v) == -EINVAL);
	CHECK("u64 NULL", cl_parse_u64(NULL, 0, 100, &v) == -EINVAL);
	CHECK("port ok", cl_parse_port("8080", &port) == 0 && port == 8080);
	CHECK("port 0", cl_parse_port("0", &port) < 0);
	CHECK("port 65536", cl_parse_port("65536", &port) < 0);
	CHECK("idmap text", cl_format_idmap(buf, sizeof(buf), 0, 1000) > 0 &&
	                    strcmp(buf, "0 1000 1\n") == 0);
	CHECK("idmap too small", cl_format_idmap(buf, 4, 0, 1000) == -1);
	CHECK("exit code of exit 3", cl_exit_code_of_status(3 << 8) == 3);
	CHECK("exit code of SIGKILL", cl_exit_code_of_status(SIGKILL) == 137);
	CHECK("exec ENOENT is 127", cl_exit_code_of_exec_errno(ENOENT) == 127);
	CHECK("exec EACCES is 126", cl_exit_code_of_exec_errno(EACCES) == 126);
	CHECK("exec ENOEXEC is 126", cl_exit_code_of_exec_errno(ENOEXEC) == 126);
	UNIT_MAIN_END;
}
