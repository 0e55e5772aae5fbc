#!/bin/bash
# Differential (issue #10, item 3): what bwrap's --info-fd and
# --json-status-fd name as the sandbox's process when there is no pid
# namespace (bwrap has no init then, so child-pid is the command itself),
# and binding onto an existing destination of the other kind.
source "$(dirname "$0")/difflib.bash"

# The command prints its own pid ($$ of sh, in the caller's pid namespace);
# the info document's child-pid must be that pid. Reports "same" or both.
child_pid_vs_command() {  # WHO ARGS...
	local who=$1 cp; shift
	impl "$who" "$@" --info-fd 3 --json-status-fd 4 -- sh -c 'echo $$' \
		3>"$T_TMP/$who.info" 4>"$T_TMP/$who.status" >"$T_TMP/$who.out" 2>"$T_TMP/$who.err" ||
		fail "$who failed: $(cat "$T_TMP/$who.err")"
	cp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["child-pid"])' "$T_TMP/$who.info") ||
		fail "$who: no child-pid in: $(cat "$T_TMP/$who.info")"
	assert_contains "$(cat "$T_TMP/$who.status")" "\"child-pid\": $cp" "$who: status document's child-pid"
	[ "$cp" = "$(cat "$T_TMP/$who.out")" ] && echo same || echo "info=$cp command=$(cat "$T_TMP/$who.out")"
}

t_info_fd_child_pid_is_command_without_pidns() {
	local b c
	need_bwrap
	b=$(child_pid_vs_command bwrap --ro-bind / /) || exit 1
	c=$(child_pid_vs_command cloister --ro-bind / /) || exit 1
	assert_eq same "$b" "Debian's bwrap"
	assert_eq "$b" "$c" "cloister"
}

# With a pid namespace the command is not the child (bwrap's init is):
# both report a child-pid that is not the command's own pid 1... seen from
# outside, the command's host pid differs from child-pid.
t_info_fd_child_pid_with_pidns_is_not_command() {
	local who cp
	need_bwrap
	for who in bwrap cloister; do
		impl $who --ro-bind / / --unshare-pid --info-fd 3 -- sh -c 'echo $$' 3>"$T_TMP/$who.info" \
			>"$T_TMP/$who.out" 2>"$T_TMP/$who.err" || fail "$who failed: $(cat "$T_TMP/$who.err")"
		assert_eq 2 "$(cat "$T_TMP/$who.out")" "$who: the command's pid inside"
		cp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["child-pid"])' "$T_TMP/$who.info")
		[ "$cp" -gt 2 ] || fail "$who: child-pid $cp is not a host pid"
	done
}

# Binding onto an existing destination of the other kind fails before any
# mount, with bwrap's message (what creating the mount point says).
t_bind_file_onto_existing_dir() {
	need_bwrap
	both_err --ro-bind / / --tmpfs /mnt --dir /mnt/d --bind /etc/hostname /mnt/d -- true
	assert_eq 1 "$BRC" "exit code"
	assert_eq "bwrap: Can't create file at /mnt/d: Is a directory" "$(head -n1 "$T_TMP/cloister.err")"
}
t_bind_dir_onto_existing_file() {
	need_bwrap
	both_err --ro-bind / / --tmpfs /mnt --bind /etc/hostname /mnt/f --bind /etc /mnt/f -- true
	assert_eq 1 "$BRC" "exit code"
	assert_eq "bwrap: Can't mkdir /mnt/f: Not a directory" "$(head -n1 "$T_TMP/cloister.err")"
}
# Same kind stays fine: a file on a file, a directory on a directory.
t_bind_onto_existing_same_kind() {
	both --ro-bind / / --tmpfs /mnt --bind /etc/hostname /mnt/f --ro-bind /etc/hostname /mnt/f \
		--dir /mnt/d --ro-bind /usr /mnt/d -- sh -c 'cat /mnt/f; test -d /mnt/d/bin && echo dir'
}

# --not-a-security-boundary (bwrap 0.12) is accepted and changes nothing
# cloister does (it stays fail-closed): the run equals Debian's 0.8 bwrap's
# without the option, which 0.8 does not know.
t_not_a_security_boundary_accepted() {
	local args=(--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev --unshare-pid
		sh -c 'grep -c . /proc/self/mountinfo; ls /dev | sort | tr "\n" " "; id -u')
	need_bwrap
	"$BW" --not-a-security-boundary --ro-bind / / true 2>"$T_TMP/e"
	assert_eq "1 bwrap: Unknown option --not-a-security-boundary" "$? $(cat "$T_TMP/e")" \
		"Debian's bwrap 0.8 does not know the option"
	"$BW" "${args[@]}" >"$T_TMP/want" 2>&1 || fail "Debian's bwrap: $(cat "$T_TMP/want")"
	"$CL" bwrap --not-a-security-boundary "${args[@]}" >"$T_TMP/got" 2>&1
	assert_eq 0 "$?" "exit code ($(cat "$T_TMP/got"))"
	assert_eq "$(cat "$T_TMP/want")" "$(cat "$T_TMP/got")" "the run, with the option"
}

run_tests
