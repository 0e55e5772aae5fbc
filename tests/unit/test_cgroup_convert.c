/* Unit tests for the pure cgroup converters: cpu.max, swap, memsw, keyed
 * files, /proc/self/cgroup lines, leaf names. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdint.h>

#include "cgroups/internal.h"
#include "src/policy/parse.h"

int main(void)
{
	char buf[64];
	int64_t v = 0;
	uint64_t q = 0, per = 0;

	CHECK("cpu.max 0.5", cg_fmt_cpu_max(buf, sizeof(buf), 50000, 100000) == 0 &&
	                     strcmp(buf, "50000 100000") == 0);
	CHECK("cpu.max unlimited", cg_fmt_cpu_max(buf, sizeof(buf), 0, 100000) == 0 &&
	                           strcmp(buf, "max 100000") == 0);
	CHECK("cpu.max needs a period", cg_fmt_cpu_max(buf, sizeof(buf), 1000, 0) < 0);
	CHECK("cpu.max small buffer", cg_fmt_cpu_max(buf, 4, 50000, 100000) < 0);
	CHECK("--cpus 1.5 -> cpu.max", cl_parse_cpus("1.5", &q, &per) == 0 &&
	      cg_fmt_cpu_max(buf, sizeof(buf), q, per) == 0 && strcmp(buf, "150000 100000") == 0);
	CHECK("--cpus .25 -> cpu.max", cl_parse_cpus(".25", &q, &per) == 0 &&
	      cg_fmt_cpu_max(buf, sizeof(buf), q, per) == 0 && strcmp(buf, "25000 100000") == 0);

	{
		uint64_t b = 0;
		CHECK("--memory 512m -> bytes", cl_parse_size("512m", &b) == 0 && b == 512ull << 20);
		CHECK("--memory 2G -> bytes", cl_parse_size("2G", &b) == 0 && b == 2ull << 30);
		CHECK("--memory 4096 -> bytes", cl_parse_size("4096", &b) == 0 && b == 4096);
		CHECK("--memory 0m refused", cl_parse_size("0m", &b) < 0);
	}
	CHECK("swap unset", cg_swap_max(1 << 20, -1) == -1);
	CHECK("swap 0 = none", cg_swap_max(1 << 20, 0) == 0);
	CHECK("swap equal = none", cg_swap_max(1 << 20, 1 << 20) == 0);
	CHECK("swap total minus memory", cg_swap_max(100, 250) == 150);
	CHECK("swap without memory", cg_swap_max(0, 250) == -1);
	CHECK("memsw unset", cg_memsw_limit(100, -1) == -1);
	CHECK("memsw 0 = memory", cg_memsw_limit(100, 0) == 100);
	CHECK("memsw total", cg_memsw_limit(100, 250) == 250);

	CHECK("key oom_kill", cg_parse_key("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
	                                   "oom_kill", &v) == 0 && v == 1);
	CHECK("key prefix is not a match", cg_parse_key("oom_kill 4\noom 2\n", "oom", &v) == 0 &&
	                                   v == 2);
	CHECK("key missing", cg_parse_key("oom 2\n", "oom_kill", &v) == -ENOENT);
	CHECK("key garbage", cg_parse_key("oom_kill x\n", "oom_kill", &v) < 0);
	CHECK("key last line unterminated", cg_parse_key("a 1\nuser_usec 1234", "user_usec", &v) == 0 &&
	                                    v == 1234);

	{
		const char *pc = "9:name=systemd:/\n4:memory:/a/b\n1:cpu,cpuacct:/c\n0::/user.slice/x.scope\n";
		char out[128];
		CHECK("proc cgroup v2", cg_parse_proc_cgroup(pc, "", out, sizeof(out)) == 0 &&
		                        strcmp(out, "/user.slice/x.scope") == 0);
		CHECK("proc cgroup v1", cg_parse_proc_cgroup(pc, "memory", out, sizeof(out)) == 0 &&
		                        strcmp(out, "/a/b") == 0);
		CHECK("proc cgroup co-mounted", cg_parse_proc_cgroup(pc, "cpuacct", out, sizeof(out)) == 0 &&
		                                strcmp(out, "/c") == 0);
		CHECK("proc cgroup missing", cg_parse_proc_cgroup(pc, "pids", out, sizeof(out)) == -ENOENT);
		CHECK("proc cgroup no v2", cg_parse_proc_cgroup("4:memory:/\n", "", out, sizeof(out)) ==
		                           -ENOENT);
		CHECK("proc cgroup too long", cg_parse_proc_cgroup(pc, "", out, 4) < 0);
	}

	CHECK("leaf name", cg_fmt_leaf(buf, sizeof(buf), 1234, 0xabcdef01u, false) == 0 &&
	                   strcmp(buf, "1234-abcdef01") == 0);
	CHECK("leaf name explicit", cg_fmt_leaf(buf, sizeof(buf), 77, 5, true) == 0 &&
	                            strcmp(buf, "cloister-77-00000005") == 0);
	CHECK("leaf parse", cg_parse_leaf("1234-abcdef01", false) == 1234);
	CHECK("leaf parse explicit", cg_parse_leaf("cloister-77-00000005", true) == 77);
	CHECK("leaf parse wrong kind", cg_parse_leaf("cloister-77-00000005", false) == -1 &&
	                               cg_parse_leaf("77-00000005", true) == -1);
	CHECK("leaf parse foreign", cg_parse_leaf("user.slice", false) == -1 &&
	                            cg_parse_leaf("0-00000000", false) == -1 &&
	                            cg_parse_leaf("12-abc", false) == -1 &&
	                            cg_parse_leaf("12-ABCDEF01", false) == -1);

	CHECK("ticks to ms", cg_ticks_to_ms(250, 100) == 2500.0);
	CHECK("ticks unknown", cg_ticks_to_ms(-1, 100) < 0);
	{
		struct cl_limits l = {.memory = 1, .memory_swap = -1, .pids = 3};
		char d[96];
		cg_describe_limits(&l, d, sizeof(d));
		CHECK("describe limits", strcmp(d, "--memory, --pids") == 0);
	}
	UNIT_MAIN_END;
}
