# Differential harness for tests/bwrap/*.sh: runs one argv under Debian's
# real bwrap ($BW) and under `cloister bwrap`, and compares what each run
# shows (exit code, stdout normalised, stderr where bwrap documents it).
source "$(dirname "$0")/../lib.sh"
BW=${BWRAP:-/usr/bin/bwrap}
PROBE=$TOP/tests/bwrap/probe
# A minimal system for probes: /usr and /etc read-only, merged-/usr links,
# a fresh /dev.
SYS=(--ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/sbin /sbin
     --symlink usr/lib /lib --symlink usr/lib64 /lib64 --dev /dev --ro-bind "$PROBE" /probe)

need_bwrap() { [ -x "$BW" ] || fail "Debian's bwrap is missing ($BW): tests/deps.sh installs bubblewrap"; }

impl() {  # WHO ARGS...: runs ARGS under bwrap or cloister
	local who=$1; shift
	if [ "$who" = bwrap ]; then "$BW" "$@"; else "$CL" bwrap "$@"; fi
}

# Namespace ids equal to the host's read "host", others "new".
HOST_NS_IDS=""
for n in cgroup ipc mnt net pid uts user; do HOST_NS_IDS="$HOST_NS_IDS $(readlink /proc/self/ns/$n)"; done
normalize() {
	local s id
	s=$(cat "$1")
	for id in $HOST_NS_IDS; do s=${s//"$id"/host}; done
	printf '%s\n' "$s" | sed -E 's/[a-z]+:\[[0-9]+\]/new/g'
}

run_both() {  # ARGS...: fills $T_TMP/{bwrap,cloister}.{out,err} and BRC/CRC
	local who
	need_bwrap
	# FD5/FD6/FD7=FILE: each run gets its own fd on FILE (an fd's offset
	# is shared, so one descriptor cannot feed both runs).
	for who in bwrap cloister; do
		(
			[ -z "${FD5:-}" ] || exec 5<"$FD5"
			[ -z "${FD6:-}" ] || exec 6<"$FD6"
			[ -z "${FD7:-}" ] || exec 7<"$FD7"
			impl $who "$@"
		) >"$T_TMP/$who.out" 2>"$T_TMP/$who.err"
		echo $? >"$T_TMP/$who.rc"
	done
	BRC=$(cat "$T_TMP/bwrap.rc"); CRC=$(cat "$T_TMP/cloister.rc")
}

same_out() {
	local d
	d=$(diff <(normalize "$T_TMP/bwrap.out") <(normalize "$T_TMP/cloister.out")) ||
		fail "stdout differs (< bwrap, > cloister): $d"
}

# Same exit code and same stdout. bwrap exiting 1 means it could not set
# the sandbox up: that would make the comparison vacuous, so it fails the
# test unless ALLOW_FAIL=1.
both() {
	run_both "$@"
	[ "$BRC" != 1 ] || [ "${ALLOW_FAIL:-0}" = 1 ] ||
		fail "Debian's bwrap failed, the case proves nothing: $(head -c 300 "$T_TMP/bwrap.err")"
	assert_eq "$BRC" "$CRC" "exit code (bwrap stderr: $(head -c 300 "$T_TMP/bwrap.err"); cloister stderr: $(head -c 300 "$T_TMP/cloister.err"))"
	same_out
}

# Same exit code, same first stderr line (bwrap's documented messages).
both_err() {
	run_both "$@"
	assert_eq "$BRC" "$CRC" "exit code"
	# usage names the program as invoked (/usr/bin/bwrap vs bwrap).
	assert_eq "$(head -n1 "$T_TMP/bwrap.err" | sed 's/^usage: [^ ]*/usage: bwrap/')" \
		"$(head -n1 "$T_TMP/cloister.err")" "stderr"
}

# Same exit code, both fail with a "bwrap: " line (wording may differ:
# setup failures are described by each implementation in its own words).
both_fail() {
	run_both "$@"
	assert_eq "$BRC" "$CRC" "exit code"
	[ "$BRC" != 0 ] || fail "expected a failure"
	assert_contains "$(cat "$T_TMP/cloister.err")" "bwrap: " "cloister stderr"
}

# Lists a host directory (names, types, modes, owners) for comparing effects.
host_tree() { (cd "$1" && find . -printf '%p %y %m %u %s\n' | LC_ALL=C sort); }
