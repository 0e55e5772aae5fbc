#!/bin/bash
# A session exec must not hand a host fd to the sandbox (issue #29, class
# 5). The exec child is in the sandbox's pid namespace from its clone on
# and held the supervisor's fds (cgroup directory, runtime dir, sockets)
# while still dumpable: a process inside with CAP_SYS_PTRACE (--cap-add
# SYS_PTRACE) took them with pidfd_getfd. The attacker here predicts the
# next pid of the namespace and tries every fd above 2 of each new process
# while the host runs execs and copies. Its control: the same attack on a
# process of the sandbox's own that holds an fd works.
# docs/security.md, "Session execs".
. "$(dirname "$0")/../integration/session_lib.bash"

# Waits for the pid after ns_last_pid and tries pidfd_getfd on its fds
# 3..63 until /tmp/stop exists; each fd taken is a line in /tmp/leak
# ("PID FD TARGET"). argv[1]: a pid to try first (the control).
SCAN='
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
def grab(pid):
    got = []
    try:
        pfd = os.pidfd_open(pid)
    except OSError:
        return None
    for n in range(3, 64):
        fd = libc.syscall(438, pfd, n, 0)
        if fd >= 0:
            try:
                got.append("%d %d %s" % (pid, n, os.readlink("/proc/self/fd/%d" % fd)))
            except OSError:
                got.append("%d %d ?" % (pid, n))
            os.close(fd)
    os.close(pfd)
    return got
ctl = grab(int(sys.argv[1])) or []
open("/tmp/control", "w").write("\n".join(ctl) + "\n")
open("/tmp/ready", "w").close()
leak = open("/tmp/leak", "w")
me = os.getpid()
end = time.time() + 60
while not os.path.exists("/tmp/stop") and time.time() < end:
    nxt = int(open("/proc/sys/kernel/ns_last_pid").read()) + 1
    for _ in range(2000):
        got = grab(nxt)
        if got is not None:
            break
    for line in got or []:
        # The loader of the command after exec, not a leak.
        if line.split(" ", 2)[2].startswith(("/usr/", "/lib", "/etc/ld.so")):
            continue
        leak.write(line + "\n"); leak.flush()
'

t_exec_child_fds_out_of_reach() {
	mk --cap-add SYS_PTRACE
	"$CL" exec "$SID" -- sh -c 'cat >/tmp/scan.py' <<<"$SCAN" || fail "writing the scanner"
	# Returns once the sleep left the exec's group (its sid is its pid):
	# the exec's end kills that group.
	"$CL" exec "$SID" -- sh -c 'setsid sleep 1000 7</etc/hostname >/dev/null 2>&1 & p=$!
		until [ "$(cut -d" " -f6 /proc/$p/stat)" = "$p" ]; do sleep 0.01; done; echo $p >/tmp/victim' \
		|| fail "starting the control's process"
	"$CL" exec "$SID" -- sh -c 'python3 /tmp/scan.py "$(cat /tmp/victim)"' &
	local scan=$! i
	wait_until "$CL" exec "$SID" -- test -e /tmp/ready || fail "the scanner did not start"
	# Control: pidfd_getfd works from inside on a process of the sandbox.
	assert_contains "$("$CL" exec "$SID" -- cat /tmp/control)" " 7 /etc/hostname" \
		"control: pidfd_getfd from inside takes a sandbox process's fd"
	echo data >"$T_TMP/f"
	for i in $(seq 60); do
		"$CL" exec "$SID" -- true || fail "exec $i"
		"$CL" cp "$T_TMP/f" "$SID:/tmp/f" || fail "cp in $i"
		"$CL" cp "$SID:/tmp/f" "$T_TMP/g" || fail "cp out $i"
	done
	"$CL" exec "$SID" -- touch /tmp/stop
	wait "$scan"
	assert_eq "" "$("$CL" exec "$SID" -- cat /tmp/leak)" "fds taken from an exec or copy child"
	"$CL" rm "$SID"
}

run_tests
