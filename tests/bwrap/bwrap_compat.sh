#!/bin/bash
# Differential: behaviours bubblewrap's own suite and real clients depend
# on (issue #10): status documents on exec failure, bwrap mode by name and
# by /proc/self/exe recursion, die-with-parent, capabilities as root,
# setup-failure messages, what --proc/--dev mount.
source "$(dirname "$0")/difflib.bash"

# An exec failure is not an exit: no "exit-code" in --json-status-fd.
t_exec_failure_writes_no_exit_code() {
	local who
	for who in bwrap cloister; do
		impl $who --bind / / --json-status-fd 3 / 3>"$T_TMP/$who.json" 2>"$T_TMP/$who.err"
		assert_eq 1 "$?" "$who exit code"
		assert_contains "$(cat "$T_TMP/$who.json")" '"child-pid"' "$who status document"
		assert_not_contains "$(cat "$T_TMP/$who.json")" 'exit-code' "$who status document"
	done
}

# A setup failure after the sandbox exists (here its chdir) is not an
# exit of the command either (bubblewrap's suite checks this by failing a
# syscall at a fixed position of its own sequence).
t_pre_exec_failure_writes_no_exit_code() {
	local who
	for who in bwrap cloister; do
		impl $who --bind / / --chdir /nonexistent-dir --json-status-fd 3 true \
			3>"$T_TMP/$who.json" 2>"$T_TMP/$who.err"
		assert_eq 1 "$?" "$who exit code"
		assert_contains "$(cat "$T_TMP/$who.json")" '"child-pid"' "$who status document"
		assert_not_contains "$(cat "$T_TMP/$who.json")" 'exit-code' "$who status document"
	done
}

# bwrap mode under any name containing "bwrap" (a renamed copy, as tools
# that resolve links see it), and when the binary re-runs itself through
# /proc/self/exe (bubblewrap's "can mount /proc recursively").
t_bwrap_mode_by_name() {
	local n
	for n in bwrap flatpak-bwrap bwrap-0.8; do
		cp "$CL" "$T_TMP/$n" || fail "copying cloister"
		"$T_TMP/$n" --ro-bind / / -- /bin/echo "as $n" >"$T_TMP/out" 2>"$T_TMP/err"
		assert_eq 0 "$?" "$n exit code ($(cat "$T_TMP/err"))"
		assert_eq "as $n" "$(cat "$T_TMP/out")" "$n output"
	done
}
t_proc_self_exe_recursion() {
	local who
	for who in bwrap cloister; do
		impl $who --unshare-user --uid 0 --gid 0 --cap-add ALL --bind / / --bind /proc /proc \
			-- /proc/self/exe --unshare-all --bind / / --bind /proc /proc echo hello \
			>"$T_TMP/$who.out" 2>"$T_TMP/$who.err"
		assert_eq "0 hello" "$? $(cat "$T_TMP/$who.out")" "$who (stderr: $(cat "$T_TMP/$who.err"))"
	done
}

# Codex resolves bwrap to its real path, runs `--help` and looks for
# bwrap's option names: every option bwrap lists is listed.
t_help_lists_bwrap_options() {
	local o missing=""
	need_bwrap
	"$BW" --help >"$T_TMP/bwrap.help"; "$CL" bwrap --help >"$T_TMP/cl.help"
	assert_eq 0 "$?" "cloister bwrap --help exit code"
	for o in $(grep -Eo '^ +--[a-z0-9-]+' "$T_TMP/bwrap.help"); do
		grep -Eq "^ +$o( |\$)" "$T_TMP/cl.help" || missing="$missing $o"
	done
	[ -z "$missing" ] || fail "options bwrap --help lists and cloister's does not:$missing"
	assert_eq "$(head -n1 "$T_TMP/bwrap.help" | sed 's/^usage: [^ ]*/usage: X/')" \
		"$(head -n1 "$T_TMP/cl.help" | sed 's/^usage: [^ ]*/usage: X/')" "usage line"
}

# `make install` puts a bwrap entry whose real path is still named bwrap
# and whose --help is bwrap's (what Codex checks). Only where the source
# tree is (the user pass runs on a copy of the build alone).
if [ -f "$TOP/Makefile" ] && [ -w "$TOP/build" ]; then
t_install_puts_a_bwrap_entry() {
	local e
	make -s -C "$TOP" install DESTDIR="$T_TMP/inst" PREFIX=/usr >/dev/null 2>"$T_TMP/err" ||
		fail "make install: $(cat "$T_TMP/err")"
	e=$(realpath "$T_TMP/inst/usr/libexec/cloister/bwrap") || fail "no bwrap entry installed"
	assert_eq bwrap "$(basename "$e")" "real name of the entry"
	"$e" --help >"$T_TMP/help" || fail "$e --help failed"
	assert_contains "$(cat "$T_TMP/help")" "--as-pid-1" "--help"
	assert_contains "$(cat "$T_TMP/help")" "--perms" "--help"
	assert_contains "$(head -n1 "$T_TMP/help")" "usage: $e [OPTIONS...]" "--help"
}
fi

# Setup failures clients grep for: the whole stderr line and the exit
# code are bwrap's.
same_err_line() {  # ARGS...
	run_both "$@"
	assert_eq "$BRC" "$CRC" "exit code"
	[ "$BRC" != 0 ] || fail "expected a failure: $*"
	assert_eq "$(head -n1 "$T_TMP/bwrap.err")" "$(head -n1 "$T_TMP/cloister.err")" "stderr of: $*"
}
t_setup_failure_messages() {
	same_err_line --bind /nonexistent-source /x true
	same_err_line --ro-bind / / --chdir /nonexistent-dir true
	same_err_line --ro-bind /usr /usr --dir /usr/nonexistent-dir true
	same_err_line --ro-bind /usr /usr --ro-bind /etc/passwd /usr/nonexistent-file true
}
# A user namespace refused for lack of room (max_user_namespaces) reads as
# bwrap's ENOSPC line. The outer sandbox is Debian's bwrap for both.
t_namespace_limit_message() {
	local who
	need_bwrap
	for who in bwrap cloister; do
		if [ $who = bwrap ]; then set -- "$BW"; else set -- "$CL" bwrap; fi
		"$BW" --unshare-user --disable-userns --bind / / -- "$@" --unshare-user --bind / / true \
			2>"$T_TMP/$who.err"
		echo $? >"$T_TMP/$who.rc"
	done
	assert_eq "$(cat "$T_TMP/bwrap.rc")" "$(cat "$T_TMP/cloister.rc")" "exit code"
	assert_contains "$(cat "$T_TMP/bwrap.err")" "Creating new namespace failed" "bwrap's message"
	assert_eq "$(cat "$T_TMP/bwrap.err")" "$(cat "$T_TMP/cloister.err")" "stderr"
}

# Capability sets as capsh shows them (permitted, effective, inheritable,
# bounding, ambient): run by root, bwrap leaves inheritable and ambient
# empty and the bounding set alone unless a user namespace is made.
t_capability_sets() {
	local o
	command -v capsh >/dev/null || fail "capsh missing (libcap2-bin)"
	while IFS= read -r o; do
		# shellcheck disable=SC2086
		run_both --bind / / $o --unshare-pid capsh --print
		assert_eq "$BRC" "$CRC" "exit code with '$o'"
		same_out || fail "capsh --print differs with '$o'"
	done <<-EOF
	
	--as-pid-1
	--cap-drop CAP_KILL
	--cap-drop ALL
	--cap-add CAP_KILL
	--unshare-user
	--unshare-user --cap-drop CAP_KILL
	--unshare-user --uid 0 --cap-add CAP_KILL
	--unshare-user --uid 5 --cap-add CAP_KILL
	EOF
}

# Every descendant of PID (from /proc's children lists), depth first.
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"; descendants "$c"
	done
}
# True once none of the pids is a live process (zombies count as gone).
all_gone() {
	local p st
	for p in "$@"; do
		st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' /proc/"$p"/status 2>/dev/null)
		[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] || return 1
	done
}

# --die-with-parent: the process that started bwrap is killed (SIGKILL or
# SIGTERM); bwrap, the sandbox's init and the command all end.
die_with_parent_case() {  # WHO SIGNAL EXTRA-OPTION...
	local who=$1 sig=$2 shell pids; shift 2
	rm -f "$T_TMP/ready"
	if [ "$who" = bwrap ]; then set -- "$BW" "$@"; else set -- "$CL" bwrap "$@"; fi
	# The shell waits for bwrap (no exec): it is bwrap's parent.
	bash -c '"$@"; :' sh "$@" --die-with-parent --bind / / \
		sh -c "touch $T_TMP/ready; exec sleep 3600" &
	shell=$!
	wait_until test -e "$T_TMP/ready" || { kill -9 $shell; fail "$who: the sandbox never started"; }
	pids=$(descendants $shell)
	[ -n "$pids" ] || fail "$who: no processes under the shell"
	kill -"$sig" $shell
	wait $shell 2>/dev/null
	# shellcheck disable=SC2086
	wait_until all_gone $pids || {
		kill -9 $pids 2>/dev/null
		fail "$who with $* ($sig): still running after the parent died: $pids"
	}
}
t_die_with_parent() {
	local who sig extra
	need_bwrap
	for who in bwrap cloister; do
		for sig in KILL TERM; do
			for extra in --unshare-user-try --unshare-pid; do
				die_with_parent_case $who $sig $extra
			done
		done
	done
}

# Seccomp programs go in with prctl(PR_SET_SECCOMP) as in bwrap: a first
# program that denies seccomp(2) (but not prctl) still lets the second
# one load.
MKBPF=$TOP/tests/bwrap/mkbpf.py
t_seccomp_second_program_after_seccomp_denied() {
	python3 "$MKBPF" 38 317 >"$T_TMP/a.bpf"     # seccomp -> ENOSYS
	python3 "$MKBPF" 1 83 258 >"$T_TMP/b.bpf"   # mkdir, mkdirat -> EPERM
	FD5=$T_TMP/a.bpf FD6=$T_TMP/b.bpf both "${SYS[@]}" --tmpfs /t --add-seccomp-fd 5 \
		--add-seccomp-fd 6 sh -c 'mkdir /t/x 2>/dev/null || echo denied'
	assert_eq denied "$(cat "$T_TMP/cloister.out")" "second program in force"
}
# An error once a user program is in is still reported: here the first
# denies sendmsg/sendto (what a report over a socket would use) and the
# kernel refuses the second.
t_seccomp_error_after_first_program() {
	python3 "$MKBPF" 1 44 46 >"$T_TMP/a.bpf"
	printf '\377\377\0\0\0\0\0\0' >"$T_TMP/bad.bpf"   # no such BPF opcode
	FD5=$T_TMP/a.bpf FD6=$T_TMP/bad.bpf run_both "${SYS[@]}" --add-seccomp-fd 5 --add-seccomp-fd 6 true
	assert_eq "$BRC" "$CRC" "exit code"
	assert_eq 1 "$CRC" "exit code"
	assert_eq "$(cat "$T_TMP/bwrap.err")" "$(cat "$T_TMP/cloister.err")" "stderr"
}
t_seccomp_option_conflicts() {
	python3 "$MKBPF" 1 83 >"$T_TMP/a.bpf"
	FD5=$T_TMP/a.bpf FD6=$T_TMP/a.bpf both_err "${SYS[@]}" --add-seccomp-fd 5 --seccomp 6 true
	FD5=$T_TMP/a.bpf FD6=$T_TMP/a.bpf both_err "${SYS[@]}" --seccomp 5 --add-seccomp-fd 6 true
	# One fd named twice: its data is consumed by the first.
	FD5=$T_TMP/a.bpf both_err "${SYS[@]}" --add-seccomp-fd 5 --add-seccomp-fd 5 true
}

# --info-fd's child-pid names a process whose namespaces the caller can
# open: a second sandbox joins the first one's user and pid namespaces
# (rootless too), as bubblewrap's test-specifying-pidns.sh does.
join_case() {  # WHO
	local who=$1 pid i
	rm -f "$T_TMP/info" "$T_TMP/ns1"; mkfifo "$T_TMP/go.$who"
	impl $who --info-fd 3 --unshare-user --unshare-pid --bind / / \
		sh -c "readlink /proc/self/ns/pid >$T_TMP/ns1.tmp; mv $T_TMP/ns1.tmp $T_TMP/ns1; cat <$T_TMP/go.$who" \
		3>"$T_TMP/info" &
	wait_until test -s "$T_TMP/ns1" || { echo >"$T_TMP/go.$who"; fail "$who: first sandbox never started"; }
	pid=$(sed -n 's/.*"child-pid": \([0-9]*\).*/\1/p' "$T_TMP/info")
	impl $who --userns 11 --pidns 12 --bind / / readlink /proc/self/ns/pid \
		11<"/proc/$pid/ns/user" 12<"/proc/$pid/ns/pid" >"$T_TMP/ns2" 2>"$T_TMP/err"
	i=$?
	echo >"$T_TMP/go.$who"; wait
	assert_eq 0 "$i" "$who: joining child-pid $pid's namespaces ($(cat "$T_TMP/err"))"
	assert_eq "$(cat "$T_TMP/ns1")" "$(cat "$T_TMP/ns2")" "$who: pid namespace joined"
}
t_info_fd_child_pid_namespaces_joinable() {
	join_case bwrap
	join_case cloister
}

# Modes of what setup creates on the way (seen on the host through
# --bind / /): mount-point files 0444, mount-point dirs 0755, parents of
# a --perms operation 0755 less the classes --perms leaves out.
modes_case() {  # WHO: prints "name mode" lines for what WHO created
	local who=$1 d=$T_TMP/$1 p args=()
	mkdir -p "$d" "$T_TMP/src-dir"; touch "$T_TMP/src-file"
	for p in 1777 0755 0644 0750 0710 0640 0700 0600 0705 0604 0000; do
		args+=(--perms "$p" --dir "$d/parent-of-$p/dir")
	done
	impl $who --bind / / --bind "$T_TMP/src-dir" "$d/mp-dir" --bind "$T_TMP/src-file" "$d/mp-file" \
		--dir "$d/parent/dir" "${args[@]}" --perms 0640 --tmpfs "$d/tmp-parent/t" true ||
		fail "$who failed"
	(cd "$d" && stat -c '%n %a' mp-dir mp-file parent parent-of-* tmp-parent)
}
t_created_modes() {
	need_bwrap
	assert_eq "$(modes_case bwrap)" "$(modes_case cloister)" "modes"
}
t_size_limits() {
	local s
	for s in 9223372036854775808 18446744073709551616 0 0x 1k -1; do
		both_err --size "$s" --tmpfs /t true
	done
}

# --proc/--dev mount what bwrap mounts: same mount points, flags, types and
# sources (sorted: the order of mountinfo lines differs), same /dev
# entries and modes; no /proc masks, so a nested procfs mount works.
mounts_view() {
	# The root tmpfs's mount options differ (mode=755 given explicitly).
	cut -d' ' -f5- /proc/self/mountinfo | sed 's|^/ \(.*\) - tmpfs tmpfs .*|/ \1 - tmpfs tmpfs|' | sort
	# The devpts root's owner differs rootless (docs/bwrap.md: bwrap mounts
	# it as uid 0 of an intermediate user namespace; cloister has none).
	ls -ln /dev /dev/pts /dev/shm | grep -v '^total' |
		awk '$NF == "pts" { $3 = $4 = "-" } {print $1, $3, $4, $NF}'
}
t_proc_dev_mounts() {
	declare -f mounts_view >"$T_TMP/view.sh"; echo mounts_view >>"$T_TMP/view.sh"
	both "${SYS[@]}" --unshare-pid --proc /proc --ro-bind "$T_TMP/view.sh" /view.sh bash /view.sh
	both "${SYS[@]}" --unshare-pid --proc /proc --tmpfs /tmp --ro-bind "$T_TMP/view.sh" /view.sh \
		bash /view.sh
}
t_nested_procfs_mount() {
	command -v unshare >/dev/null || fail "unshare missing (util-linux)"
	# As root bwrap's read-only covers of /proc/irq and /proc/bus make the
	# kernel refuse it for both; as a user (no covers) it must work.
	ALLOW_FAIL=$(is_root && echo 1 || echo 0) both --bind / / --unshare-user --unshare-pid \
		--proc /proc --dev /dev \
		unshare --user --map-root-user --pid --fork --mount --mount-proc sh -c 'echo $$'
	assert_eq "$(cat "$T_TMP/bwrap.err")" "$(cat "$T_TMP/cloister.err")" "stderr"
}

# bwrap 0.11 semantics (Debian's 0.8 fails all three, so these check the
# documented behaviour): --symlink onto an identical symlink succeeds, a
# different one or a non-link fails with 0.11's words.
t_symlink_onto_existing_symlink() {
	local base=(--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib
	            --symlink usr/lib64 /lib64)
	clr bwrap "${base[@]}" --symlink usr/bin /bin true
	assert_eq "0 " "$RC $ERR" "identical symlink"
	clr bwrap "${base[@]}" --symlink usr/sbin /bin true
	assert_eq 1 "$RC" "different symlink"
	assert_eq "bwrap: Can't make symlink at /bin: existing destination is usr/bin" "$ERR"
	clr bwrap "${base[@]}" --symlink usr/bin /usr true
	assert_eq 1 "$RC" "onto a directory"
	assert_eq "bwrap: Can't make symlink at /usr: destination exists and is not a symlink" "$ERR"
}
t_version_names_the_implemented_bwrap() {
	clr bwrap --version
	assert_eq "0 bubblewrap 0.12.0 (cloister)" "$RC $OUT" "--version"
	# What clients take from it: srt reads the first dotted number (to warn
	# below 0.5.0); the same regular expression must find 0.12.0.
	assert_eq 0.12.0 "$(grep -oE '[0-9]+(\.[0-9]+)*' <<<"$OUT" | head -n1)" "version number"
}

# With stdout on a terminal, --dev binds it on /dev/console (ttyname works
# inside). script(1) gives each run a terminal of its own.
t_dev_console_is_the_callers_terminal() {
	local who cmd
	command -v script >/dev/null || fail "script missing (bsdutils)"
	for who in bwrap cloister; do
		if [ $who = bwrap ]; then cmd=$BW; else cmd="$CL bwrap"; fi
		# SYS has --dev /dev; a second one on /tmp gets its console too.
		script -qec "$cmd ${SYS[*]} --dev /tmp sh -c 'tty; test -c /tmp/console && echo chr'" \
			/dev/null </dev/null | tr -d '\r' >"$T_TMP/$who.out"
	done
	assert_eq "$(printf '/dev/console\nchr')" "$(cat "$T_TMP/bwrap.out")" "bwrap"
	assert_eq "$(cat "$T_TMP/bwrap.out")" "$(cat "$T_TMP/cloister.out")" "cloister"
}

run_tests
