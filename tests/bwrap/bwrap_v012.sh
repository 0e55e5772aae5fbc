#!/bin/bash
# bubblewrap 0.12 behaviour, against Debian's 0.8 wherever 0.8 shares it
# and against 0.12's documented result where only 0.12 has it: what
# --info-fd/--json-status-fd name as the sandbox's process without a pid
# namespace, --perms/--size/--chmod and the modes of what setup creates,
# and where mounts land when a destination or its parent is a symlink.
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
# mount, as with Debian's 0.8 (same exit code), in 0.12's words.
t_bind_file_onto_existing_dir() {
	need_bwrap
	both_fail --ro-bind / / --tmpfs /mnt --dir /mnt/d --bind /etc/hostname /mnt/d -- true
	assert_eq 1 "$BRC" "exit code"
	assert_eq "bwrap: Destination is not a file /mnt/d" "$(cat "$T_TMP/cloister.err")"
}
t_bind_dir_onto_existing_file() {
	need_bwrap
	both_fail --ro-bind / / --tmpfs /mnt --bind /etc/hostname /mnt/f --bind /etc /mnt/f -- true
	assert_eq 1 "$BRC" "exit code"
	assert_eq "bwrap: Destination is not a directory /mnt/f" "$(cat "$T_TMP/cloister.err")"
	clr bwrap --ro-bind / / --tmpfs /mnt --bind /etc/hostname /mnt/f --tmpfs /mnt/f -- true
	assert_eq "1 bwrap: Destination is not a directory /mnt/f" "$RC $ERR" "--tmpfs onto a file"
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

# --- --perms, --size, --chmod (0.12 keeps the rules of 0.5 to 0.11) ---

# bwrap stops reading options at the command (or "--"): a --perms or
# --size still pending there is never looked at, and the run goes on.
t_pending_modifiers_before_command() {
	both "${SYS[@]}" --perms 0700 -- echo ran
	both "${SYS[@]}" --size 4096 echo ran
	both "${SYS[@]}" --perms 0700 --size 1 -- echo ran
}

# Misuse, word for word as bwrap says it: the option's own error first,
# then a modifier the option did not take.
t_modifier_errors() {
	local c
	while IFS= read -r c; do
		eval "set -- $c"
		(both_err "${SYS[@]}" "$@" true && [ "$CRC" = 1 ]) 2>"$T_TMP/why" ||
			fail "case '$c' (exit $(cat "$T_TMP/cloister.rc")): $(cat "$T_TMP/why")"
	done <<'CASES'
--perms 0700 --symlink a /b
--perms 0700 --chmod 0700 /usr
--perms 0700 --ro-bind /usr /x
--perms 0700 --proc /proc
--perms 0700 --unshare-net
--size 10 --dir /x
--size 10 --file 0 /x
--size 10 --perms 0700 --dir /x
--perms 0700 --uid abc
--size 10 --uid abc
--perms 0700 --perms 0700 --dir /x
--size 10 --size 10 --tmpfs /x
--perms 8 --dir /x
--perms 010000 --dir /x
--perms '' --dir /x
--perms 0x7 --dir /x
--size 0 --tmpfs /x
--size 1k --tmpfs /x
--size -1 --tmpfs /x
--size ' 1' --tmpfs /x
--size 9223372036854775808 --tmpfs /x
--size 99999999999999999999 --tmpfs /x
--chmod 8 /usr
--chmod 010000 /usr
--chmod 0700 /nonexistent
CASES
}

# --args data is parsed in place: a --perms it leaves pending fails right
# after it (it is not carried into the real argv); a --perms before
# --args is taken by an option inside the data.
t_modifiers_across_args_data() {
	printf -- '--perms\0000700\0' >"$T_TMP/perms"
	printf -- '--dir\0/t/d\0' >"$T_TMP/dir"
	FD5=$T_TMP/perms both_err "${SYS[@]}" --tmpfs /t --args 5 --dir /t/d true
	assert_eq 1 "$CRC" "exit code"
	FD5=$T_TMP/dir both "${SYS[@]}" --tmpfs /t --perms 0750 --args 5 stat -c '%a' /t/d
	assert_eq 750 "$(cat "$T_TMP/cloister.out")" "mode of the directory"
	# bwrap's rule, in its words: no --args inside --args data.
	printf -- '--args\0005\0' >"$T_TMP/nested"
	FD5=$T_TMP/nested both_err "${SYS[@]}" --args 5 true
	assert_eq "bwrap: --args not supported in arguments file" "$(cat "$T_TMP/cloister.err")"
}

# Modes of everything setup creates, with and without --perms, whatever
# the caller's umask (bwrap clears it for setup and gives it back to the
# command): tmpfs and --dir 0755, --file 0666, bind-data 0600; parents of
# binds, symlinks, /dev 0700 (bwrap's mode 0 for the operations --perms
# cannot precede); --perms read as strtoul(s, 8) reads it (+750, -0).
t_modes_of_created_nodes() {
	local um
	echo data >"$T_TMP/data"
	for um in 022 077; do
		(
			umask $um
			FD5=$T_TMP/data FD6=$T_TMP/data FD7=$T_TMP/data both "${SYS[@]}" --tmpfs /t \
				--tmpfs /t/tmpfs --dir /t/dir --file 5 /t/file --bind-data 6 /t/bdata \
				--perms 0640 --file 7 /t/pfile --perms 01777 --tmpfs /t/ptmpfs \
				--perms +750 --dir /t/plus/d --perms -0 --dir /t/zero --perms ' 711' --dir /t/sp \
				--ro-bind /etc/hostname /t/bindp/f --symlink x /t/linkp/l --dev /t/devp/dev \
				--tmpfs /t/tp/t --chmod 0604 /t/file \
				sh -c 'stat -c "%a %n" /t/* /t/plus/d; umask'
		) || exit 1
	done
}

# --size is a byte count in C notation (0x hex, 0 octal), no suffix.
t_tmpfs_size_forms() {
	both "${SYS[@]}" --size 0x100000 --tmpfs /j --size 010000000 --tmpfs /k --size 65536 --tmpfs /l \
		--perms 0700 --size 8192 --tmpfs /m stat -f -c '%b %S' /j /k /l /m
}

# Newer than Debian's 0.8 (--argv0 and overlays are 0.9 and 0.11), so
# checked against bwrap's messages.
t_argv0_twice() {
	clr bwrap "${SYS[@]}" --argv0 a --argv0 b true
	assert_eq "1 bwrap: --argv0 used multiple times" "$RC $ERR"
}
t_overlay_src_must_be_followed() {
	clr bwrap "${SYS[@]}" --overlay-src /usr --ro-bind /usr /x --tmp-overlay /o true
	assert_eq "1 bwrap: --overlay-src must be followed by another --overlay-src or one of --overlay, --tmp-overlay, or --ro-overlay" "$RC $ERR"
}

# --- Where mounts land: symlinks in the new root (0.12) ---

# A symlink among DEST's parents is followed inside the new root (the same
# under Debian's 0.8 for a relative link).
t_symlink_parent_followed_in_root() {
	both "${SYS[@]}" --tmpfs /t --dir /t/d --symlink d /t/l --ro-bind /etc/hostname /t/l/child \
		cat /t/d/child
}

# 0.12 never mounts on a symlink: DEST itself a symlink (to a directory,
# to a file, dangling, relative or absolute) is refused for every kind of
# mount, merged-/usr's /bin included. Debian's 0.8 follows it instead.
t_symlink_destination_refused() {
	local c
	mkdir -p "$T_TMP/src"
	while IFS= read -r c; do
		eval "set -- $c"
		"$CL" bwrap "${SYS[@]}" --tmpfs /t --symlink /usr /t/ldir --symlink /etc/hostname /t/lfile \
			--symlink /nonexistent /t/dangling --symlink ../usr /t/rel "$@" true \
			5</etc/hostname 2>"$T_TMP/err"
		assert_eq "1 bwrap: Can't mount on symlink destination ${!#}" "$? $(cat "$T_TMP/err")" "case '$c'"
	done <<CASES
--bind $T_TMP/src /t/ldir
--ro-bind /etc/hostname /t/lfile
--ro-bind /etc/hostname /t/dangling
--bind $T_TMP/src /t/dangling
--bind $T_TMP/src /t/rel
--tmpfs /t/ldir
--tmpfs /t/dangling
--dev /t/ldir
--mqueue /t/rel
--ro-bind-data 5 /t/lfile
--bind-data 5 /t/dangling
--bind $T_TMP/src /bin
CASES
}

# The same for a link that comes with a bound root (--bind ROOT /,
# as --ro-bind / / brings the host's merged-/usr links): DEST a link there
# is refused, a link among DEST's parents is followed inside the new root.
t_symlink_destination_in_bound_root() {
	local r=$T_TMP/root
	mkdir -p "$r/some/dir" "$T_TMP/src"
	ln -s /some/dir "$r/lnk"
	echo hi >"$T_TMP/src/f"
	clr bwrap --bind "$r" / "${SYS[@]}" --bind "$T_TMP/src" /lnk true
	assert_eq "1 bwrap: Can't mount on symlink destination /lnk" "$RC $ERR"
	clr bwrap --bind "$r" / "${SYS[@]}" --bind "$T_TMP/src" /lnk/x cat /some/dir/x/f
	assert_eq "0 hi" "$RC $OUT" "a link among the parents ($ERR)"
}

# A hostile link in a tmpfs the argv made: nothing is ever created or
# mounted outside the new root, whatever the link names (the old root
# that bwrap 0.8 reaches as /oldroot, a host path, /proc/self/fd/N, a
# climb with ".."). Debian's 0.8 creates /t/l/x in the host's directory
# through /oldroot (the advisory 0.12 fixes), so cloister alone is run.
t_hostile_symlink_stays_in_root() {
	local c link
	mkdir -p "$T_TMP/victim" "$T_TMP/src"
	for link in "/oldroot$T_TMP/victim" "$T_TMP/victim" /proc/self/fd/5 "../../..$T_TMP/victim"; do
		while IFS= read -r c; do
			eval "set -- $c"
			"$CL" bwrap "${SYS[@]}" --tmpfs /t --symlink "$link" /t/l "$@" true \
				5<"$T_TMP/victim" 6</etc/hostname 2>"$T_TMP/err"
			assert_eq 1 "$?" "exit code ($link, $c: $(cat "$T_TMP/err"))"
			assert_contains "$(cat "$T_TMP/err")" "bwrap: " "stderr ($link, $c)"
			assert_eq "" "$(ls -A "$T_TMP/victim")" "host directory after $link, $c"
		done <<CASES
--dir /t/l/x
--bind $T_TMP/src /t/l/x
--ro-bind /etc/hostname /t/l/f
--tmpfs /t/l/x
--file 6 /t/l/f
--symlink y /t/l/s
--perms 0755 --dir /t/l/p/q
CASES
	done
}

# ".." cannot climb out of the new root: a link to ../../.. from /t/l is
# "/" inside, so the mount lands on /x, seen through both names.
t_dotdot_symlink_clamped_to_root() {
	mkdir -p "$T_TMP/src"
	echo hi >"$T_TMP/src/f"
	clr bwrap "${SYS[@]}" --tmpfs /t --symlink ../../.. /t/l --bind "$T_TMP/src" /t/l/x \
		cat /x/f /t/l/x/f
	assert_eq "0 hi
hi" "$RC $OUT" "($ERR)"
}

# A dangling link on the way is not followed (mkdir does not follow it):
# what it names is missing, said as bwrap says a failed mkdir -p step.
t_dangling_symlink_parent() {
	clr bwrap "${SYS[@]}" --tmpfs /t --symlink /nonexistent /t/l --ro-bind /etc/hostname /t/l/f true
	assert_eq "1 bwrap: Can't mkdir parents for /t/l/f: No such file or directory" "$RC $ERR"
}

# A parent that is a file: bwrap's words, the same as Debian's 0.8.
t_parent_is_a_file() {
	local op
	for op in "--dir /t/f/sub" "--ro-bind /etc/hostname /t/f/sub" "--tmpfs /t/f/a/b" \
		"--symlink x /t/f/a/l" "--file 5 /t/f/a/g"; do
		# shellcheck disable=SC2086 # the operation's words
		FD5=/etc/hostname both_err "${SYS[@]}" --tmpfs /t --ro-bind /etc/hostname /t/f $op true
		assert_eq 1 "$CRC" "$op: exit code"
	done
}

run_tests
