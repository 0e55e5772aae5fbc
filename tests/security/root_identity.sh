#!/bin/bash
# A root caller's sandbox is not host root (issue #14, hole 2): its ids map to
# an unprivileged host id, host-only files stay unreadable, and what it writes
# into --rw/--here binds is still root's on the host. --host-root restores
# host root. Each test only applies to a root caller: for anyone else the
# sandbox has always been the caller's own identity, so the file defines no
# test then (rather than passing ones that assert nothing).
source "$(dirname "$0")/../lib.sh"
SC=${CORE_SECCOMP:---seccomp=default}

t_shadow_unreadable() {
	[ -r /etc/shadow ] || fail "no /etc/shadow on this host to test with"
	clr run "$SC" -- sh -c 'head -c 1 /etc/shadow >/dev/null 2>&1 && echo readable; echo done'
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq done "$OUT" "/etc/shadow from the default /etc bind"
}

t_private_dirs_unreadable() {
	mkdir -m 700 "$T_TMP/secret"; echo key > "$T_TMP/secret/k"; chmod 600 "$T_TMP/secret/k"
	clr run "$SC" --ro /root:/r --ro "$T_TMP/secret:/s" -- sh -c 'ls /r >/dev/null 2>&1 && echo root-listed; cat /s/k 2>/dev/null; ls /s >/dev/null 2>&1 && echo secret-listed; echo done'
	assert_eq 0 "$RC" "run: $ERR"
	if [ "$(stat -c %a /root)" = 700 ]; then
		assert_eq done "$OUT" "/root and a 0700 root directory bound read-only"
	else   # /root is not private on this host: only the stand-in counts
		assert_eq done "$(printf '%s\n' "$OUT" | grep -v root-listed)" "a 0700 root directory bound read-only"
	fi
}

t_etc_stays_useful() {
	clr run "$SC" -- sh -c 'head -1 /etc/passwd | cut -d: -f1; id -un; test -r /etc/hostname -o ! -e /etc/hostname && echo ok'
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "root
root
ok" "$OUT" "world-readable /etc files and name lookups"
}

t_rw_writes_are_root_owned_on_host() {
	mkdir -m 700 "$T_TMP/w"; echo old > "$T_TMP/w/mine"; chmod 600 "$T_TMP/w/mine"
	clr run "$SC" --rw "$T_TMP/w" -- sh -c "cat $T_TMP/w/mine; echo new > $T_TMP/w/made; mkdir $T_TMP/w/dir; stat -c %u:%g $T_TMP/w/mine"
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "old
0:0" "$OUT" "the caller's private file is the sandbox's own inside"
	assert_eq "0:0 0:0" "$(stat -c %u:%g "$T_TMP/w/made" "$T_TMP/w/dir" | tr '\n' ' ' | sed 's/ $//')" "owners on the host"
}

t_here_writes_are_root_owned_on_host() {
	mkdir -m 700 "$T_TMP/proj"; cd "$T_TMP/proj" || fail "cd"
	clr run "$SC" --here -- sh -c 'echo x > out; pwd'
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "$T_TMP/proj" "$OUT" "--here"
	assert_eq "0:0" "$(stat -c %u:%g out)" "owner on the host"
}

t_host_identity_is_unprivileged() {
	clr run "$SC" -- sh -c 'cat /proc/self/uid_map /proc/self/gid_map; grep Groups /proc/self/status'
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "0 1879048192 1 0 1879048192 1 Groups:" "$(echo $OUT)" "maps and no supplementary groups"
	getent passwd 1879048192 >/dev/null && fail "uid 1879048192 belongs to an account here"
	return 0
}

# overlayfs (a container's root, the CI guest's) cannot be idmapped: a
# writable bind there must fail before the command runs, naming the way out,
# not run with a bind the sandbox cannot write (or as host root).
t_unidmappable_rw_bind_fails_clearly() {
	mkdir -p "$T_TMP/l" "$T_TMP/u" "$T_TMP/w" "$T_TMP/m"
	mount -t overlay overlay -o "lowerdir=$T_TMP/l,upperdir=$T_TMP/u,workdir=$T_TMP/w" "$T_TMP/m" ||
		fail "cannot mount an overlay to test with"
	chmod 700 "$T_TMP/m"
	# The control: can this host's kernel idmap a mount of this overlay?
	local ns host; unshare -Ur sleep 30 & ns=$!
	sleep 0.2
	host=$(python3 "$TOP/tests/helpers/idmappable.py" "$T_TMP/m" "$ns")
	kill "$ns"; wait "$ns" 2>/dev/null
	note "host: overlay $host"
	clr run "$SC" --rw "$T_TMP/m" -- sh -c "echo ran; echo x > $T_TMP/m/f"
	local rc1=$RC err1=$ERR out1=$OUT
	if [ "$host" = idmappable ]; then
		umount "$T_TMP/m"
		assert_eq 0 "$rc1" "--rw on an idmappable overlay ($err1)"
		assert_eq ran "$out1" "the command ran"
		return
	fi
	[[ "$host" == "not idmappable: "* ]] || fail "idmap control: $host"
	clr run "$SC" --host-root --rw "$T_TMP/m" -- sh -c "echo x > $T_TMP/m/f"
	local rc2=$RC err2=$ERR owner; owner=$(stat -c %u "$T_TMP/m/f" 2>/dev/null)
	umount "$T_TMP/m"
	assert_eq 125 "$rc1" "--rw on overlayfs as root ($out1)"
	assert_eq "" "$out1" "the command must not run"
	assert_contains "$err1" "$T_TMP/m: its filesystem cannot be idmapped" "message"
	assert_contains "$err1" "--host-root" "message names the way out"
	assert_eq 0 "$rc2" "--host-root on overlayfs: $err2"
	assert_eq 0 "$owner" "owner of the file written with --host-root"
}

t_host_root_option_restores_host_root() {
	clr run "$SC" --host-root -- sh -c 'cat /proc/self/uid_map; head -c 1 /etc/shadow >/dev/null && echo shadow-readable'
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "0 0 1 shadow-readable" "$(echo $OUT)" "--host-root"
}

t_bwrap_mode_keeps_bwraps_identity() {
	clr bwrap --unshare-user --uid 0 --ro-bind / / --dev /dev -- sh -c 'cat /proc/self/uid_map; head -c 1 /etc/shadow >/dev/null && echo shadow-readable'
	assert_eq 0 "$RC" "bwrap: $ERR"
	assert_eq "0 0 1 shadow-readable" "$(echo $OUT)" "bwrap as root maps root, as bwrap does"
}

# The child fails in its first step, before it has read the id maps the
# parent writes for a root caller: its own error must be the one line the
# user sees, whether it exited before the parent wrote the maps (early:
# that write or the "maps" message then fails) or after the message was
# sent (late: the child closed with it unread). A probe makes the failure.
child_fails_before_maps() {  # early|late
	local probe=$HELPERS/fail_pdeathsig.so
	# An LD_PRELOAD probe cannot go in front of an ASan build's runtime:
	# checked on the plain build (make check-asan too).
	local CL=${CLOISTER:-$TOP/build/cloister}   # CLOISTER: a mutant (make mutate)
	[ -f "$probe" ] || fail "missing $probe (make build/tests/fail_pdeathsig.so)"
	FAIL_PDEATHSIG=$1 LD_PRELOAD=$probe clr run "$SC" -- echo ran
	assert_eq 125 "$RC" "run with a failing first child step ($1)"
	assert_eq "" "$OUT" "the command must not run"
	assert_eq "cloister: setting the parent-death signal: Operation not permitted" "$ERR" \
		"the child's error, as one line ($1)"
}
t_child_error_before_maps_early() { child_fails_before_maps early; }
t_child_error_before_maps_late() { child_fails_before_maps late; }

is_root || exit 0
run_tests
