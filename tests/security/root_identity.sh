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

# Issue 29, class 1: what the sandbox writes through an idmapped --rw bind
# is host root's, so it must never become setuid, setgid or file-capable.
# Control first: the same chmod on a file the sandbox owns in its /tmp
# works without the special bits (the guard denies only those).
setid_attack() {  # extra run options...
	mkdir -m 700 "$T_TMP/w"
	clr run "$SC" "$@" --rw "$T_TMP/w" -- sh -c "cd $T_TMP/w; echo x > f; chmod 755 f && echo plain-ok
		chmod 6755 f 2>/dev/null; chmod u+s f 2>/dev/null; chmod g+s f 2>/dev/null
		mkdir d; chmod 2755 d 2>/dev/null
		perl -e 'sysopen(F, \"o\", 0101, 04755); syswrite(F, \"x\")' 2>/dev/null
		perl -e 'syscall(133, \"n\", 0100000 | 06755, 0)' 2>/dev/null; echo done"
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "plain-ok
done" "$OUT" "the control chmod"
	assert_eq "0 755" "$(stat -c '%u %a' "$T_TMP/w/f")" "chmod 6755/u+s/g+s of a --rw file"
	assert_eq "0 755" "$(stat -c '%u %a' "$T_TMP/w/d")" "chmod 2755 of a --rw directory"
	[ ! -e "$T_TMP/w/o" ] || assert_eq "" "$(find "$T_TMP/w/o" -perm /6000)" "open(O_CREAT, 04755)"
	[ ! -e "$T_TMP/w/n" ] || assert_eq "" "$(find "$T_TMP/w/n" -perm /6000)" "mknod(S_IFREG|06755)"
	assert_eq "" "$(find "$T_TMP/w" -perm /6000)" "no setuid/setgid file or directory"
}
t_rw_setid_denied() { setid_attack; }
# The guard does not rest on the profile: unconfined keeps it.
t_rw_setid_denied_unconfined() { SC=--seccomp=unconfined setid_attack; }

t_rw_file_caps_denied() {
	command -v setcap >/dev/null || fail "no setcap on this host to test with"
	mkdir -m 700 "$T_TMP/w"; cp /bin/true "$T_TMP/w/t"
	# Control: host root can set the capability on the same filesystem.
	cp /bin/true "$T_TMP/ctl"; setcap cap_net_raw+ep "$T_TMP/ctl" || fail "setcap control"
	clr run "$SC" --rw "$T_TMP/w" -- python3 -c "import os
try: os.setxattr('$T_TMP/w/t', 'security.capability', open('/dev/stdin','rb').read())
except OSError as e: print(e.errno)" < <(getfattr -e hex --only-values -n security.capability "$T_TMP/ctl" 2>/dev/null | xxd -r -p 2>/dev/null || python3 -c "import os,sys; sys.stdout.buffer.write(os.getxattr('$T_TMP/ctl','security.capability'))")
	assert_eq 0 "$RC" "run: $ERR"
	assert_contains "$OUT" "1" "setxattr refused (an errno)"
	assert_eq "" "$(getcap "$T_TMP/w/t")" "file capability on a --rw file"
}

# Issue 29, class 1, CAP_FSETID: the kernel keeps the setid bits of a file
# its writer holds CAP_FSETID for, so a setuid file already in a --rw dir
# would stay setuid after the sandbox rewrites it. It checks the capability
# in the initial user namespace only (should_remove_suid: capable()), which
# no sandbox process has: --cap-add FSETID, ALL, or the full set of a
# nested user namespace (root mapped, which takes SETFCAP) all lose the
# bits. Control first: host root's own write keeps them.
t_rw_setid_file_loses_bits_under_fsetid() {
	mkdir -m 700 "$T_TMP/w"
	local f
	for f in ctl fsetid all nested; do cp /bin/true "$T_TMP/w/$f"; chmod 6755 "$T_TMP/w/$f"; done
	echo x >> "$T_TMP/w/ctl"
	assert_eq 6755 "$(stat -c %a "$T_TMP/w/ctl")" "control: a CAP_FSETID holder of the host keeps the bits"
	clr run "$SC" --cap-add FSETID --rw "$T_TMP/w" -- sh -c "grep CapEff /proc/self/status; echo x >> $T_TMP/w/fsetid"
	assert_eq 0 "$RC" "run --cap-add FSETID: $ERR"
	assert_eq "CapEff:	0000000000000010" "$OUT" "the sandbox holds CAP_FSETID"
	clr run "$SC" --cap-add ALL --rw "$T_TMP/w" -- truncate -s 1 "$T_TMP/w/all"
	assert_eq 0 "$RC" "run --cap-add ALL: $ERR"
	clr run "$SC" --allow-nested --cap-add SETFCAP --rw "$T_TMP/w" -- python3 -c "import ctypes, os
assert ctypes.CDLL(None).unshare(0x10000000) == 0
for f, v in (('setgroups', 'deny'), ('uid_map', '0 0 1'), ('gid_map', '0 0 1')):
    open('/proc/self/' + f, 'w').write(v)
print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])
open('$T_TMP/w/nested', 'a').write('x')"
	assert_eq 0 "$RC" "run --allow-nested: $ERR"
	# The full set is this kernel's: every capability up to cap_last_cap.
	assert_eq "$(python3 -c "print('%016x' % ((1 << (int(open('/proc/sys/kernel/cap_last_cap').read()) + 1)) - 1))")" \
		"$OUT" "full capabilities in the nested user namespace"
	assert_eq "755 755 755" "$(stat -c %a "$T_TMP/w/fsetid" "$T_TMP/w/all" "$T_TMP/w/nested" | tr '\n' ' ' | sed 's/ $//')" \
		"setid bits after the sandbox's writes (FSETID, ALL, nested)"
}

# Class 2: spec mode as root got uid_map 0 0 1 (host root) where run gets
# the unprivileged host id. Control: --host-root keeps host root.
t_spec_mode_is_not_host_root() {
	[ -r /etc/shadow ] || fail "no /etc/shadow on this host to test with"
	mkdir -p "$T_TMP/req"
	python3 - "$T_TMP" > "$T_TMP/spec.json" <<'PY'
import json, sys
t = sys.argv[1]
cmd = ("{ cat /proc/self/uid_map; head -c1 /etc/shadow >/dev/null 2>&1 && echo shadow; } > /result/probe; "
       "echo x > /result/f; chmod 6755 /result/f; echo '{\"status\":\"ok\"}'")
print(json.dumps({"runId": "r1", "sandboxId": "s1", "rootDir": t, "requestBundlePath": t + "/req", "command": cmd}))
PY
	clr sandbox run --spec "$T_TMP/spec.json" --host-root
	# The command's result JSON is not the protocol's (the run may fail
	# after it): what counts is what the command saw and left.
	local ctl; ctl=$(cat "$(find "$T_TMP" -name probe | head -1)")
	assert_contains "$ctl" "shadow" "control: --host-root reads /etc/shadow"
	find "$T_TMP" -name probe -delete; find "$T_TMP" -name f -delete
	sed -i 's/"s1"/"s2"/; s/"r1"/"r2"/' "$T_TMP/spec.json"
	clr sandbox run --spec "$T_TMP/spec.json"
	local got; got=$(cat "$(find "$T_TMP" -name probe | head -1)")
	assert_eq "0 1879048192 1" "$(echo $got)" "uid_map and /etc/shadow of the spec sandbox"
	assert_eq "" "$(find "$T_TMP" -name f -perm /6000)" "no setuid file in result/"
}

# Spec mode's sticky workspace as root: its overlay is made from idmapped
# layers, so the unmapped sandbox edits root's files in rootDir (as a root
# caller expects) while it is still not host root and cannot leave a
# setuid file in the upper dir. Control: the file is root's 0644 on host.
t_spec_sticky_workspace_under_the_root_identity() {
	mkdir -p "$T_TMP/req" "$T_TMP/proj"; echo base > "$T_TMP/proj/a.txt"; chmod 644 "$T_TMP/proj/a.txt"
	assert_eq "0 644" "$(stat -c '%u %a' "$T_TMP/proj/a.txt")" "control: a root-owned 0644 file"
	python3 - "$T_TMP" > "$T_TMP/spec.json" <<'PY'
import json, sys
t = sys.argv[1]
cmd = ("cat /proc/self/uid_map > /result/probe; echo more >> " + t + "/proj/a.txt && echo new > " + t +
       "/proj/n.txt && chmod 4755 " + t + "/proj/n.txt 2>/dev/null; echo '{\"status\":\"finished\"}'")
print(json.dumps({"runId": "r1", "sandboxId": "s1", "rootDir": t + "/proj", "command": cmd,
                  "requestBundlePath": t + "/req",
                  "workspace": {"name": "w1", "persistence": "sticky", "idleTimeoutSecs": 600}}))
PY
	CLOISTER_STATE_DIR=$T_TMP/state clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 125 "$RC" "the run is held for review ($OUT)"
	local kept; kept=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["details"]["diffBundlePath"])' <<<"$ERR")
	assert_eq "a.txt n.txt" "$(python3 -c 'import json,sys; print(" ".join(p["path"] for p in json.load(sys.stdin)["patches"]))' <"$kept")" "the bundle"
	assert_eq "0 1879048192 1" "$(echo $(cat "$(find "$T_TMP" -name probe | head -1)"))" "uid_map of the sandbox"
	assert_eq "base" "$(cat "$T_TMP/proj/a.txt")" "rootDir untouched"
	assert_eq "" "$(find "$T_TMP/state" -perm /6000)" "no setuid file in the upper dir"
}

is_root || exit 0
run_tests
