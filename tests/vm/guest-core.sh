#!/bin/bash
# The core isolation suites (tests/integration/core.sh,
# tests/security/escape.sh and the session tests whose subject is the
# cgroup) inside the pure cgroup v2 guest, on the Debian kernel: as root,
# then escape and the kernel-facing part of core as the unprivileged test
# user (USER_CORE below). network.sh is left to
# the host (as both users): its relays and namespaces use no cgroup, and
# under TCG it cost 150 s of the guest's time (VM_SUITES adds it back). Runs in the same kind of guest as guest-v2.sh, in a boot
# of its own (tests/vm/check-v2.sh); lines are labelled vm-<suite> and
# vm-user-<suite>.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
U=${CLOISTER_TEST_USER:-cloister-test}
# A world-readable copy: the user must reach the binaries and scripts.
W=$(mktemp -d /var/tmp/vmcore.XXXXXX)
mkdir -p "$W/build"
cp -a "$TOP/build/cloister" "$TOP/build/tests" "$W/build/"
cp -a "$TOP/tests" "$W/"
chmod -R a+rX "$W"; chmod 755 "$W"
# The guest's init leaves loopback down; the network suite needs the
# host side (here: the guest's root netns) to have it.
ip link set lo up
# The guest's / is an overlay of the host's / (9p): the tests' /tmp (and
# their workspaces, whose upper dirs cannot be made on it) goes on a tmpfs
# of its own, as on most hosts, and so do root's state and cache dirs.
# After the copy above: $TOP may itself be under /tmp.
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /tmp/.vm-state /tmp/.vm-cache
export XDG_STATE_HOME=/tmp/.vm-state XDG_CACHE_HOME=/tmp/.vm-cache
timed() {  # label command...: runs the command, then says how long it took
	local t=$SECONDS label=$1; shift
	"$@"
	echo "vm-core: $label took $((SECONDS - t)) s"
}
# The session suites as root: a session's execs are cloned into its cgroup with
# CLONE_INTO_CGROUP, which only a cgroup v2 host exercises. The guest runs
# the tests whose subject is that cgroup (placement, OOM and peak,
# cgroup.kill on timeout and on a killed client, cleanup after a killed
# supervisor, the v2 freezer under a snapshot) and the workspace overlay
# on this kernel; the rest of the suite (exit codes, ls/rm, ptys, cp,
# request parsing, idle timers: no cgroup or kernel difference) runs on
# the host only, as root and as the user, where TCG does not make it slow.
SESSION_GUEST='^t_(exec_timeout_kills_its_processes|killed_client_kills_command|gc_after_supervisor_sigkill|workspace_diff_at_rm|workspace_snapshot_pauses_the_session|execs_share_the_session_cgroup|exec_status_oom_and_peak)$'
SUITES=${VM_SUITES:-"tests/integration/core.sh tests/security/escape.sh tests/integration/session_exec.sh tests/integration/session_life.sh tests/integration/session_ws.sh"}
for s in $SUITES; do
	only=${T_ONLY:-}
	case $s in tests/integration/session_*) [ -z "$only" ] && only=$SESSION_GUEST ;; esac
	timed "$s (root)" env TFILE_PREFIX=vm- T_ONLY="$only" bash "$W/$s" </dev/null
done
# As the user: escape.sh whole, and of core.sh the tests whose outcome
# rests on what this kernel lets an unprivileged user do (the user
# namespace and its map, capabilities, the mounts and their flags, /proc
# and /dev, the rootfs, the probes of `check`). The rest of core.sh (exit
# codes, signals, timeouts, die-with-parent, the CLI's messages) is the
# same code as root's run above and the host's user pass: under TCG it
# cost about 110 s of the guest's time.
USER_CORE='^t_(runs_true|pid_namespace|uid_map_default|uid_zero|no_capabilities|cap_add_kept|readonly_system_dirs|tmp_is_writable_tmpfs|host_paths_absent|mount_flags|proc_masked|dev_minimal|loopback_only_and_up|binds|here_and_workdir|tmpfs_option|rootfs|namespaces_refused_is_clear|refuses_setuid_bits|check)$'
if id "$U" >/dev/null 2>&1; then
	for s in tests/integration/core.sh tests/security/escape.sh; do
		only=${T_ONLY:-}
		[ "$s" = tests/integration/core.sh ] && [ -z "$only" ] && only=$USER_CORE
		timed "$s ($U)" runuser -u "$U" -- env -u XDG_STATE_HOME -u XDG_CACHE_HOME PATH=/usr/sbin:/usr/bin:/sbin:/bin TFILE_PREFIX=vm-user- \
			T_ONLY="$only" bash "$W/$s" </dev/null
	done
else
	echo "FAIL vm-user: test user '$U' missing in the guest"
fi
echo "vm-core: done"
