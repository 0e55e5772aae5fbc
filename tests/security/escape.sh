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

# ---- sessions (docs/sessions.md): a hostile exec, and what it can reach ----
sess_rm_all() {
	local id
	for id in $("$CL" ls --json 2>/dev/null | python3 -c 'import json,sys; [print(s["id"]) for s in json.load(sys.stdin)]' 2>/dev/null); do
		"$CL" rm "$id" >/dev/null 2>&1
	done
}
sess_mk() {  # -> SID in a runtime dir of this test only (removed at its end)
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	trap sess_rm_all EXIT
	SID=$("$CL" create "$@") || fail "create $*"
}
sess_sup() { "$CL" ls --json | python3 -c "import json,sys; print([s for s in json.load(sys.stdin) if s['id']=='$1'][0]['supervisor_pid'])"; }

# The command gets its stdio and nothing else: not the namespace fds, the
# init pidfd, the control socket or the cgroup the worker holds.
t_session_exec_gets_no_extra_fds() {
	sess_mk
	# the same as the first command of `cloister run` (the shell's glob
	# holds the directory open as fd 3 while it reads it)
	assert_eq "$("$CL" run -- sh -c 'cd /proc/self/fd && echo *' </dev/null)" \
		"$("$CL" exec "$SID" -- sh -c 'cd /proc/self/fd && echo *' </dev/null)" "fds of the command"
	assert_eq "0 1 2 3" "$("$CL" exec "$SID" -- sh -c 'cd /proc/self/fd && echo *' </dev/null)" "fds of the command"
	"$CL" rm "$SID"
}

# kill -9 -1 from inside reaches every process of the sandbox but not its
# init (the kernel protects pid 1 of a namespace from its own members), nor
# anything outside: the supervisor, and so the session, keep serving.
t_session_exec_cannot_kill_the_session() {
	local sup
	sess_mk
	sup=$(sess_sup "$SID")
	"$CL" exec "$SID" -- sh -c 'kill -9 -1; kill -9 1; kill -9 '"$sup"'; true'
	kill -0 "$sup" || fail "the supervisor died"
	assert_eq alive "$("$CL" exec "$SID" -- echo alive)" "session after kill -9 -1 inside"
	"$CL" rm "$SID"
}

# One session sees nothing of another, nor where the sockets live.
t_session_cannot_see_another() {
	local a b m; m=$(marker other)
	sess_mk; a=$SID
	sess_mk; b=$SID
	"$CL" exec "$b" -- sh -c "setsid sh -c 'touch /tmp/up; sleep 1000; : $m' </dev/null >/dev/null 2>&1 &
		while [ ! -e /tmp/up ]; do sleep 0.01; done"
	# the marker comes in the environment and is matched by the shell
	# itself, so no probe process carries it on its command line
	assert_eq "" "$("$CL" exec "$a" --env "M=$m" -- sh -c 'for p in /proc/[0-9]*; do
		case $(tr "\0" " " <$p/cmdline 2>/dev/null) in *"$M"*) echo "$p";; esac; done')" \
		"session b's process seen from a"
	# the probe finds the process where it is (so it can fail)
	assert_contains "$("$CL" exec "$b" --env "M=$m" -- sh -c 'for p in /proc/[0-9]*; do
		case $(tr "\0" " " <$p/cmdline 2>/dev/null) in *"$M"*) echo "$p";; esac; done')" "/proc/" \
		"the probe in session b itself"
	"$CL" exec "$a" -- test -e "$T_TMP/run" && fail "the runtime dir is visible inside"
	"$CL" rm "$a" "$b"
	assert_no_process "$m"
}

run_tests
