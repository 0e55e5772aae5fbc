#!/bin/bash
# Trusted configs and per-user runtime dirs (issue #29, classes 6 and 8).
# 6: the bwrap hardening policy is believed only if nobody but root or the
#    caller could have written it and no sandbox can; the seccomp profile it
#    names gets the same checks (it was read with a plain open: another
#    user's profile governed, a fifo hung every launch), and a policy or
#    profile inside a directory the launch binds writable is refused (the
#    sandbox rewrote it, and the next launch had no filter).
# 8: without XDG_RUNTIME_DIR sessions live in /tmp/cloister-UID; another user
#    who made that name first denied every session. Now a directory of the
#    user's own is taken beside it.
# Each attack is first shown to work (the control), then stopped.
source "$(dirname "$0")/../lib.sh"

# Policy and profile in $T_TMP/cfg (0755, the caller's); a profile that
# makes uname(2) fail, so that whether it governs shows.
setup() {
	mkdir -p "$T_TMP/cfg"; chmod 755 "$T_TMP" "$T_TMP/cfg"
	printf '%s\n' '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["uname"],"action":"SCMP_ACT_ERRNO"}]}' \
		>"$T_TMP/cfg/prof.json"
	chmod 644 "$T_TMP/cfg/prof.json"
	policy "{\"seccomp\":\"$T_TMP/cfg/prof.json\"}"
}
policy() {  # JSON [FILE]
	local f=${2:-$T_TMP/cfg/policy.json}
	printf '%s\n' "$1" >"$f"; chmod 644 "$f"
}
# cloister bwrap with the policy FILE over the host's root (read-only);
# OUT/ERR/RC. The command prints "ran" first.
bw() {  # POLICY-FILE BWRAP-ARGS... -- (command: sh -c SCRIPT)
	local pol=$1; shift
	CLOISTER_BWRAP_POLICY=$pol timeout 10 "$CL" bwrap --ro-bind / / --dev /dev "$@" >"$T_TMP/o" 2>"$T_TMP/e"
	RC=$?; OUT=$(cat "$T_TMP/o"); ERR=$(cat "$T_TMP/e")
}
UNAME='echo ran; uname >/dev/null 2>&1 && echo uname-ok || echo uname-denied'
# The profile governs when it is trusted: the control for every profile test.
profile_governs() {
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	assert_eq "0 ran
uname-denied" "$RC $OUT" "control: the policy's profile applies ($ERR)"
}
refused() {  # EXPECTED-ERR WHAT
	assert_eq 1 "$RC" "$2: exit code ($OUT)"
	assert_eq "bwrap: $1" "$ERR" "$2: the one line"
	assert_eq "" "$OUT" "$2: nothing ran"
}

# ---- class 6: what the policy names ----

# Another user's profile: as root, one owned by uid 65534.
if is_root; then
t_profile_owned_by_other_user_refused() {
	setup; profile_governs
	chown 65534 "$T_TMP/cfg/prof.json"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	refused "policy $T_TMP/cfg/policy.json: seccomp profile $T_TMP/cfg/prof.json: owned by uid 65534, not by root or the caller; refusing it" \
		"a profile owned by uid 65534"
}
# A directory above the policy that another user owns: they can swap it.
t_policy_below_other_users_dir_refused() {
	setup; profile_governs
	chown 65534 "$T_TMP/cfg"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
		"mv '$T_TMP/cfg/policy.json' '$T_TMP/cfg/old' && echo '{}' >'$T_TMP/cfg/policy.json' && rm '$T_TMP/cfg/policy.json' && mv '$T_TMP/cfg/old' '$T_TMP/cfg/policy.json'" \
		|| fail "control: uid 65534 cannot replace a file in the directory it owns"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	refused "policy $T_TMP/cfg/policy.json: directory $T_TMP/cfg is owned by uid 65534, not by root or the caller; refusing it" \
		"a policy in uid 65534's directory"
}
fi

# A profile (or a directory above it) that group or others may write.
t_profile_writable_by_others_refused() {
	setup; profile_governs
	chmod 664 "$T_TMP/cfg/prof.json"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	refused "policy $T_TMP/cfg/policy.json: seccomp profile $T_TMP/cfg/prof.json: writable by group or others (mode 0664); refusing it (chmod go-w)" \
		"a group-writable profile"
	chmod 644 "$T_TMP/cfg/prof.json"; chmod 777 "$T_TMP/cfg"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	refused "policy $T_TMP/cfg/policy.json: directory $T_TMP/cfg is writable by group or others (mode 0777), so others could replace the file; refusing it" \
		"a policy in a world-writable directory"
	# A sticky one (as /tmp) is fine: nobody else can rename our entries.
	chmod 1777 "$T_TMP/cfg"
	profile_governs
}

# A fifo at the profile's path: the launch must not wait for a writer.
t_profile_fifo_does_not_hang() {
	setup; profile_governs
	rm "$T_TMP/cfg/prof.json"; mkfifo -m 644 "$T_TMP/cfg/prof.json"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	[ "$RC" != 124 ] || fail "the launch hung on the fifo (killed after 10 s)"
	refused "policy $T_TMP/cfg/policy.json: seccomp profile $T_TMP/cfg/prof.json: not a regular file" "a fifo"
}

# A symlink at the profile's path is not followed (its target is not what
# the checks were made on).
t_profile_symlink_refused() {
	setup; profile_governs
	mv "$T_TMP/cfg/prof.json" "$T_TMP/cfg/real.json"; ln -s real.json "$T_TMP/cfg/prof.json"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	refused "policy $T_TMP/cfg/policy.json: seccomp profile $T_TMP/cfg/prof.json: a symbolic link; name the file itself" "a symlink"
}

# The sandbox rewrites a caller-owned policy in a directory the launch
# binds writable; the next launch would have no filter. Control: without
# any policy the sandbox can write the file there, and what it writes is
# what the next launch reads.
t_policy_in_writable_bind_refused() {
	local rewrite
	setup; profile_governs
	rewrite="echo ran; echo '{\"seccomp\":\"unconfined\"}' >'$T_TMP/cfg/policy.json'"
	cp "$T_TMP/cfg/policy.json" "$T_TMP/keep.json"
	env -u CLOISTER_BWRAP_POLICY "$CL" bwrap --ro-bind / / --dev /dev --bind "$T_TMP/cfg" "$T_TMP/cfg" \
		sh -c "$rewrite" >/dev/null 2>"$T_TMP/e" || fail "control: $(cat "$T_TMP/e")"
	bw "$T_TMP/cfg/policy.json" sh -c "$UNAME"
	assert_eq "0 ran
uname-ok" "$RC $OUT" "control: the rewritten policy leaves the next launch unfiltered ($ERR)"
	cp "$T_TMP/keep.json" "$T_TMP/cfg/policy.json"
	bw "$T_TMP/cfg/policy.json" --bind "$T_TMP/cfg" "$T_TMP/cfg" sh -c "$rewrite"
	refused "policy $T_TMP/cfg/policy.json: inside $T_TMP/cfg, which this launch binds writable into the sandbox, so the sandbox could rewrite it for later launches; refusing it (keep it outside every writable bind)" \
		"a policy in a writable bind"
	assert_eq "$(cat "$T_TMP/keep.json")" "$(cat "$T_TMP/cfg/policy.json")" "the policy after the refused launch"
	# A bind of a directory above it is the same; a read-only one is not.
	bw "$T_TMP/cfg/policy.json" --bind "$T_TMP" "$T_TMP" sh -c "$rewrite"
	refused "policy $T_TMP/cfg/policy.json: inside $T_TMP, which this launch binds writable into the sandbox, so the sandbox could rewrite it for later launches; refusing it (keep it outside every writable bind)" \
		"a policy below a writable bind"
	bw "$T_TMP/cfg/policy.json" --ro-bind "$T_TMP/cfg" "$T_TMP/cfg" sh -c "$UNAME"
	assert_eq "0 ran
uname-denied" "$RC $OUT" "a read-only bind of the policy's directory ($ERR)"
}

# The profile the policy names, in a writable bind: the same.
t_profile_in_writable_bind_refused() {
	setup
	mkdir -p "$T_TMP/pol"; chmod 755 "$T_TMP/pol"; mv "$T_TMP/cfg/policy.json" "$T_TMP/pol/"
	bw "$T_TMP/pol/policy.json" --bind "$T_TMP/cfg" "$T_TMP/cfg" sh -c \
		"echo ran; echo '{\"defaultAction\":\"SCMP_ACT_ALLOW\"}' >'$T_TMP/cfg/prof.json'"
	refused "policy $T_TMP/pol/policy.json: seccomp profile $T_TMP/cfg/prof.json: inside $T_TMP/cfg, which this launch binds writable into the sandbox, so the sandbox could rewrite it for later launches; refusing it (keep it outside every writable bind)" \
		"a profile in a writable bind"
	# The file itself bound writable.
	bw "$T_TMP/pol/policy.json" --bind "$T_TMP/cfg/prof.json" "$T_TMP/cfg/prof.json" true
	assert_contains "$ERR" "inside $T_TMP/cfg/prof.json, which this launch binds writable" "the profile itself bound"
	assert_eq 1 "$RC" "the profile itself bound: exit code"
}

# ---- class 8: the runtime dir outside XDG_RUNTIME_DIR ----

# As root: a made-up uid V is the victim (its /tmp/cloister-V is unique to
# this test), uid 65534 the other user. As the test user: the victim is the
# test user seen as uid V in a user namespace of its own, and the squatted
# name is a root-owned directory bound there in a private mount namespace
# (root is unmapped in that namespace: another user).
t_runtime_dir_squatted_by_other_user() {
	local v=$((40000 + $$ % 20000)) scen out
	rm -rf "/tmp/cloister-$v" "/tmp/cloister-$v-"*
	mkdir "/tmp/cloister-$v"
	cp "$CL" "$T_TMP/cloister"; chmod 755 "$T_TMP" "$T_TMP/cloister"
	# As the victim: the control (the name is not theirs and they cannot
	# remove or use it), then sessions work anyway.
	scen='
		v=$1 cl=$2; unset XDG_RUNTIME_DIR CLOISTER_RUNTIME_DIR
		echo "uid $(id -u) owner $(stat -c %u /tmp/cloister-$v)"
		mkdir /tmp/cloister-$v/x 2>/dev/null && echo "control: can write it"
		rmdir /tmp/cloister-$v 2>/dev/null && echo "control: can remove it"
		id=$("$cl" create --idle-timeout 60 2>/tmp/cloister-$v.err) || { echo "create failed: $(cat /tmp/cloister-$v.err)"; exit 0; }
		echo "warning: $(cat /tmp/cloister-$v.err)"; rm -f /tmp/cloister-$v.err
		echo "exec: $("$cl" exec "$id" -- echo hello 2>&1)"
		"$cl" ls | grep -q "$id" && echo "ls: listed"
		id2=$("$cl" create --idle-timeout 60 2>&1) && echo "second: same dir $(ls -d /tmp/cloister-$v-* | wc -l)"
		"$cl" rm "$id" "$id2" && echo "rm: ok"'
	if is_root; then
		chown 65534 "/tmp/cloister-$v"
		out=$(setpriv --reuid=$v --regid=$v --clear-groups bash -c "$scen" _ "$v" "$T_TMP/cloister" 2>&1)
	else
		out=$(unshare -r -m --propagation private bash -c '
			mount --bind /usr/share "/tmp/cloister-$1" || exit 1
			exec unshare --map-user="$1" --map-group="$1" bash -c "$3" _ "$1" "$2"' \
			_ "$v" "$T_TMP/cloister" "$scen" 2>&1)
	fi
	rmdir "/tmp/cloister-$v" 2>/dev/null; rm -f "/tmp/cloister-$v.err"
	local alt; alt=$(ls -d "/tmp/cloister-$v-"* 2>/dev/null)
	rm -rf "/tmp/cloister-$v-"*
	assert_contains "$out" "uid $v owner 65534" "control: the victim's view ($out)"
	assert_not_contains "$out" "control: can" "control: the squatted name is out of the victim's reach"
	assert_not_contains "$out" "create failed" "create with /tmp/cloister-$v squatted"
	assert_contains "$out" "warning: cloister: warning: /tmp/cloister-$v belongs to uid 65534, not to you: sessions live in /tmp/cloister-$v-" "the warning"
	assert_contains "$out" "exec: hello" "exec in that session"
	assert_contains "$out" "ls: listed" "ls finds it"
	assert_contains "$out" "second: same dir 1" "a second create uses the same directory"
	assert_contains "$out" "rm: ok" "rm"
	[ -n "$alt" ] || fail "no /tmp/cloister-$v-* directory was made ($out)"
}

# A squatted alternative is never used: only a 0700 directory of the user's.
# (Root only: a decoy of another user needs chown.)
if is_root; then
t_runtime_dir_alternative_must_be_own() {
	local v=$((40000 + ($$ + 1) % 20000)) out
	rm -rf "/tmp/cloister-$v" "/tmp/cloister-$v-"*
	mkdir "/tmp/cloister-$v" "/tmp/cloister-$v-AAAAAA" "/tmp/cloister-$v-BBBBBB"
	chown 65534 "/tmp/cloister-$v" "/tmp/cloister-$v-AAAAAA"   # another user's decoy
	chown $v "/tmp/cloister-$v-BBBBBB"; chmod 755 "/tmp/cloister-$v-BBBBBB"  # the victim's, not private
	cp "$CL" "$T_TMP/cloister"; chmod 755 "$T_TMP" "$T_TMP/cloister"
	out=$(setpriv --reuid=$v --regid=$v --clear-groups env -u XDG_RUNTIME_DIR -u CLOISTER_RUNTIME_DIR \
		bash -c 'id=$("$1" create --idle-timeout 60) || exit 1; ls -d /tmp/cloister-$2-*/"$id"; "$1" rm "$id"' \
		_ "$T_TMP/cloister" "$v" 2>&1)
	rm -rf "/tmp/cloister-$v" "/tmp/cloister-$v-"*
	assert_not_contains "$out" "AAAAAA/" "the decoy of uid 65534 ($out)"
	assert_not_contains "$out" "BBBBBB/" "a directory others may read ($out)"
	assert_contains "$out" "/tmp/cloister-$v-" "a fresh directory ($out)"
}
fi

run_tests
