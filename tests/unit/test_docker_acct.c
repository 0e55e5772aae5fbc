#define _GNU_SOURCE
/* Unit tests for reading a docker run's accounting cgroup: counter files
 * written into a temporary directory stand in for cgroupfs. A counter that
 * shows nothing ran gives null fields, never a 0. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>


#include "src/executors/docker_acct.h"
#include "unit.h"

static void put(int dirfd, const char *file, const char *text)
{
	int fd = openat(dirfd, file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(file);
		close(fd);
	}
}

/* Removes the files these tests write, then the directory. */
static void drop(int dirfd, const char *path)
{
	static const char *const files[] = {"cpuacct.usage", "cpuacct.usage_user",
	                                    "cpuacct.usage_sys", "cpuacct.stat", "memory.use_hierarchy",
	                                    "memory.max_usage_in_bytes", "cpu.stat", "memory.peak"};

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		unlinkat(dirfd, files[i], 0);
	close(dirfd);
	CHECK("temporary directory removed", rmdir(path) == 0);
}

static int fresh_dir(char *tmpl)
{
	return mkdtemp(tmpl) ? open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

static void read_into(int version, int cpu, int mem, struct cl_status *st)
{
	struct dk_acct a = {.parent = "/docker/cloister-1-x", .version = version,
	                    .cpu_fd = cpu, .mem_fd = mem};

	cl_status_init(st);
	cl_dk_acct_read(&a, st);
}

static void test_v1(void)
{
	char ct[] = "/tmp/cltest-acct-cpu.XXXXXX", mt[] = "/tmp/cltest-acct-mem.XXXXXX";
	int cpu = fresh_dir(ct), mem = fresh_dir(mt);
	struct cl_status st;

	put(cpu, "cpuacct.usage", "1500000000\n");
	put(cpu, "cpuacct.usage_user", "1000000000\n");
	put(cpu, "cpuacct.usage_sys", "500000000\n");
	put(mem, "memory.use_hierarchy", "1\n");
	put(mem, "memory.max_usage_in_bytes", "41943040\n");
	read_into(1, cpu, mem, &st);
	CHECK("v1 user/sys from usage_user/usage_sys (ns)", st.user_ms == 1000.0 && st.sys_ms == 500.0);
	CHECK("v1 peak from max_usage_in_bytes", st.memory_peak == 41943040);

	put(mem, "memory.use_hierarchy", "0\n");
	read_into(1, cpu, mem, &st);
	CHECK("v1 peak unknown without use_hierarchy", st.memory_peak < 0 && st.user_ms == 1000.0);

	unlinkat(cpu, "cpuacct.usage_user", 0);
	unlinkat(cpu, "cpuacct.usage_sys", 0);
	put(cpu, "cpuacct.stat", "user 30\nsystem 20\n");
	read_into(1, cpu, mem, &st);
	long hz = sysconf(_SC_CLK_TCK);
	CHECK("v1 falls back to cpuacct.stat ticks",
	      st.user_ms == 30.0 * 1000 / (double)hz && st.sys_ms == 20.0 * 1000 / (double)hz);

	put(cpu, "cpuacct.usage", "0\n");
	put(mem, "memory.use_hierarchy", "1\n");
	read_into(1, cpu, mem, &st);
	CHECK("v1 nothing ran: all null, not 0", st.user_ms < 0 && st.sys_ms < 0 && st.memory_peak < 0);

	unlinkat(cpu, "cpuacct.usage", 0);
	read_into(1, cpu, mem, &st);
	CHECK("v1 no counter: all null", st.user_ms < 0 && st.memory_peak < 0);
	drop(cpu, ct);
	drop(mem, mt);
}

static void test_v2(void)
{
	char t[] = "/tmp/cltest-acct-v2.XXXXXX";
	int d = fresh_dir(t);
	struct cl_status st;

	put(d, "cpu.stat", "usage_usec 3000\nuser_usec 2000\nsystem_usec 1000\nnr_periods 0\n");
	put(d, "memory.peak", "8388608\n");
	read_into(2, d, d, &st);
	CHECK("v2 user/sys from cpu.stat (us)", st.user_ms == 2.0 && st.sys_ms == 1.0);
	CHECK("v2 peak from memory.peak", st.memory_peak == 8388608);

	unlinkat(d, "memory.peak", 0);
	read_into(2, d, d, &st);
	CHECK("v2 peak unknown before Linux 5.19", st.memory_peak < 0 && st.user_ms == 2.0);

	put(d, "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
	put(d, "memory.peak", "4096\n");
	read_into(2, d, d, &st);
	CHECK("v2 nothing ran: all null", st.user_ms < 0 && st.sys_ms < 0 && st.memory_peak < 0);

	put(d, "cpu.stat", "user_usec 5\n");
	read_into(2, d, d, &st);
	CHECK("v2 without usage_usec: null", st.user_ms < 0);

	put(d, "cpu.stat", "usage_usec 10\nuser_usecs 7\nuser_usec 3\nsystem_usec 1\n");
	read_into(2, d, d, &st);
	CHECK("v2 a key matches only as a whole word", st.user_ms == 0.003 && st.sys_ms == 0.001);
	drop(d, t);
}

static void test_unmeasured(void)
{
	struct dk_acct a = {.cpu_fd = -1, .mem_fd = -1};
	struct cl_status st;

	cl_status_init(&st);
	cl_dk_acct_read(&a, &st);
	CHECK("not prepared: nothing read", st.user_ms < 0 && st.memory_peak < 0);
}

int main(void)
{
	test_v1();
	test_v2();
	test_unmeasured();
	UNIT_MAIN_END;
}
