#!/bin/bash
# Resource limits the caller hands over (issue 35 item 2): cloister's own
# bounds only ever lower a limit. A hard RLIMIT_NPROC below the default
# bound (limits.conf on hardened hosts) is kept, in run, bwrap mode and
# sessions, where raising it would need CAP_SYS_RESOURCE.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/session_lib.bash"

LOW=200   # below CL_DEFAULT_NPROC (2048), above what one test's user runs

under_low() { prlimit --nproc=$LOW:$LOW "$@"; }
nproc_of() { awk '/^Max processes/ {print $3 "/" $4}' <<<"$1"; }

# The control: prlimit sets the hard limit here, and an unprivileged
# process cannot raise it again (so a bound above it would fail).
t_control_hard_limit_binds() {
	local out rc
	out=$(under_low cat /proc/self/limits)
	assert_eq "$LOW/$LOW" "$(nproc_of "$out")" "prlimit's limit on the bare host"
	under_low sh -c "prlimit --pid \$\$ --nproc=$((LOW + 1)):$((LOW + 1))" 2>/dev/null; rc=$?
	if is_root; then
		note "root: raising it back exits $rc (CAP_SYS_RESOURCE decides); cloister keeps $LOW either way"
	else
		[ "$rc" != 0 ] || fail "an unprivileged process raised its hard RLIMIT_NPROC"
		note "user: raising the hard limit is refused, as cloister's default bound would be"
	fi
}

# Above the default, the default bound applies (min of the two).
t_default_bound_under_the_hosts_limit() {
	local hard want=2048
	hard=$(ulimit -Hu)
	[ "$hard" != unlimited ] && [ "$hard" -lt $want ] && want=$hard
	note "host hard limit $hard, so the sandbox gets $want"
	"$CL" run -- cat /proc/self/limits >out 2>err
	assert_eq 0 "$?" "exit code ($(cat err))"
	assert_eq "$want/$want" "$(nproc_of "$(cat out)")" "the default bound"
}

t_run_keeps_a_lower_hard_limit() {
	under_low "$CL" run -- cat /proc/self/limits >out 2>err
	assert_eq 0 "$?" "exit code ($(cat err))"
	assert_eq "$LOW/$LOW" "$(nproc_of "$(cat out)")" "the caller's hard limit"
}

t_bwrap_mode_keeps_a_lower_hard_limit() {
	under_low "$CL" bwrap --ro-bind / / --proc /proc --dev /dev -- cat /proc/self/limits >out 2>err
	assert_eq 0 "$?" "exit code ($(cat err))"
	assert_eq "$LOW/$LOW" "$(nproc_of "$(cat out)")" "the caller's hard limit"
}

t_session_keeps_a_lower_hard_limit() {
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	trap rm_all EXIT
	SID=$(under_low "$CL" create 2>err) || fail "create under a hard limit of $LOW: $(cat err)"
	clr exec "$SID" -- cat /proc/self/limits
	assert_eq 0 "$RC" "exec ($ERR)"
	assert_eq "$LOW/$LOW" "$(nproc_of "$OUT")" "the creator's hard limit"
}

t_check_names_the_bound() {
	under_low "$CL" check >out 2>err
	assert_contains "$(cat out)" "tasks <= $LOW (RLIMIT_NPROC" "cloister check"
}

run_tests
