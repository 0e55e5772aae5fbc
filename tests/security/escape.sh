#!/bin/bash
# Hostile-command tests: a planted symlink must not redirect mounts, root
# inside must not remount, the command must not kill its init. The attacks
# on host processes, files, sockets, fds and init's /proc files are in the
# escape-attempt suite (escape_suite.sh, tests/security/probes/).
source "$(dirname "$0")/../lib.sh"
SC=${CORE_SECCOMP:---seccomp=default}
rw_id_probe

t_symlink_in_bind_cannot_redirect_mounts() {
	mkdir -p "$T_TMP/ws"
	local sub="cltest-planted-$$"
	ln -s ../../../../../../tmp "$T_TMP/ws/up"
	ln -s /etc "$T_TMP/ws/abs"
	ln -s "/tmp/$sub-dangling" "$T_TMP/ws/dangling"
	clr run "$SC" "${RW_ID[@]}" --rw "$T_TMP/ws:/w" --tmpfs "/w/up/$sub" -- sh -c "grep -c ' /tmp/$sub ' /proc/self/mountinfo"
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq 1 "$OUT" "tmpfs landed inside the sandbox's /tmp"
	[ ! -e "/tmp/$sub" ] || fail "a mount point was created on the host's /tmp"
	clr run "$SC" "${RW_ID[@]}" --rw "$T_TMP/ws:/w" --tmpfs /w/dangling/x -- true
	[ ! -e "/tmp/$sub-dangling" ] || fail "followed a dangling link onto the host"
	clr run "$SC" "${RW_ID[@]}" --rw "$T_TMP/ws:/w" --tmpfs /w/abs/evil -- true
	[ ! -e /etc/evil ] || fail "created /etc/evil on the host"
	assert_eq 125 "$RC" "mount through a link to the read-only /etc must fail inside"
	assert_contains "$ERR" "creating mount point /w/abs/evil" "message"
}

t_root_inside_cannot_remount() {
	clr run "$SC" --uid 0 -- sh -c 'mount -o remount,rw /usr 2>/dev/null && echo remounted; umount /proc/sys 2>/dev/null && echo unmounted; touch /usr/.x 2>/dev/null && echo wrote; echo done'
	assert_eq done "$OUT" "no capability may survive"
}

t_init_unkillable_from_inside() {
	clr run "$SC" -- sh -c "kill -9 1 2>/dev/null; echo alive"
	assert_eq alive "$OUT" "init unkillable from inside"
}

run_tests
