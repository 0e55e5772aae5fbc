#!/bin/bash
# The cgroup v2 group, run as root inside the guest of tests/vm/run-in-vm.sh
# (pure v2 hierarchy): limits, OOM, peak, cgroup.kill, CLONE_INTO_CGROUP
# placement, `cloister gc`, as root and as an unprivileged user in a
# delegated subtree (chowned the way systemd delegates). One PASS/FAIL line
# per test, in tests/lib.sh's format.
source "$(dirname "$0")/../lib.sh"
TFILE=vm-v2
U=${CLOISTER_TEST_USER:-cloister-test}
G=/sys/fs/cgroup
DELEG=$G/deleg

# The user must be able to read the binaries wherever the build lives.
BIN=$(mktemp -d /tmp/vmbin.XXXXXX)
cp "$CL" "$BIN/cloister"; cp "$HELPERS/cg_hog" "$BIN/cg_hog"
chmod 755 "$BIN" "$BIN"/*
CL=$BIN/cloister
RUN=(run --ro "$BIN:/h")

# A delegated subtree as systemd makes one: the directory and its
# cgroup.procs/subtree_control/threads belong to the user; the user's
# session lives in a leaf below it.
deleg_make() {  # dir
	mkdir -p "$1/session"
	chown "$U" "$1" "$1/cgroup.procs" "$1/cgroup.subtree_control" "$1/cgroup.threads"
	chown -R "$U" "$1/session"
}
deleg_make "$DELEG"
# Background processes below never hold the test's stderr: run_tests waits
# for every writer, so a stray one would stall the whole guest on a failure.
# Runs "$@" as the user from cgroup $CGROUP_AT (default: the session leaf).
as_user() {
	sh -c 'u=$1; shift; echo $$ > "$0/cgroup.procs" && exec runuser -u "$u" -- env PATH=/usr/bin:/bin "$@"' \
		"${CGROUP_AT:-$DELEG/session}" "$U" "$@"
}
jget() {
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print("null" if v is None else (str(v).lower() if isinstance(v,bool) else v))' "$1" "$2"
}
leaves() { ls -d "$1"/[0-9]*-* 2>/dev/null; }
has_leaf() { [ -n "$(leaves "$1")" ]; }
wait_leaf() {  # parent -> prints the first sandbox leaf that appears
	wait_until has_leaf "$1" && leaves "$1" | head -1
}
# The sandbox command of the tests below runs until the test closes its
# gate (fd 9), instead of for a guessed number of seconds.
GATED=(/bin/sh -c 'read x || :')
gate_open() { mkfifo "$T_TMP/gate"; chmod 666 "$T_TMP/gate"; }
has_procs() { grep -q . "$1/cgroup.procs" 2>/dev/null; }
no_procs() { ! grep -q . "$1/cgroup.procs" 2>/dev/null; }
userdir() { chmod 777 "$T_TMP"; }

# ---- root ----

t_root_limits_written() {
	gate_open
	"$CL" "${RUN[@]}" --memory 64m --memory-swap 96m --cpus 0.5 --pids 32 -- "${GATED[@]}" <gate >/dev/null 2>&1 &
	local pid=$! l; exec 9>gate; l=$(wait_leaf $G/cloister)
	assert_contains "$l" "$G/cloister/$pid-" "sandbox cgroup"
	assert_eq 67108864 "$(cat "$l/memory.max")" memory.max
	assert_eq 33554432 "$(cat "$l/memory.swap.max")" "memory.swap.max (total - memory)"
	assert_eq "50000 100000" "$(cat "$l/cpu.max")" cpu.max
	assert_eq 32 "$(cat "$l/pids.max")" pids.max
	exec 9>&-
	wait $pid; assert_eq 0 $? "exit code"
	[ ! -e "$l" ] || fail "$l left behind"
}

t_root_oom_killed() {
	clr "${RUN[@]}" --json-status st.json --memory 32m --memory-swap 32m -- /h/cg_hog mem 200
	assert_eq 137 "$RC" "exit code"
	assert_eq true "$(jget st.json oom_killed)" oom_killed
	assert_eq "" "$(leaves $G/cloister)" "leaves left"
}

t_root_under_limit_and_peak() {
	clr "${RUN[@]}" --json-status st.json --memory 128m -- /h/cg_hog mem 40
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq false "$(jget st.json oom_killed)" oom_killed
	local p; p=$(jget st.json memory_peak_bytes)
	[ "$p" -ge $((40 << 20)) ] && [ "$p" -le $((128 << 20)) ] || fail "memory.peak $p out of range"
}

t_root_pids_fork_bomb() {
	clr "${RUN[@]}" --timeout 60 --pids 16 -- /h/cg_hog forks 300
	assert_eq 0 "$RC" "exit code ($ERR)"
	local ok failed; read -r _ ok _ failed <<<"$OUT"
	[ "$ok" -lt 16 ] && [ "$failed" -gt 200 ] || fail "fork bomb not bounded: $OUT"
	/bin/true || fail "host cannot fork"
}

t_root_cpus_half() {
	clr "${RUN[@]}" --json-status st.json --cpus 0.5 -- /h/cg_hog spin 2
	assert_eq 0 "$RC" "exit code ($ERR)"
	python3 -c 'import json,sys; s=json.load(open("st.json")); c=s["user_ms"]+s["sys_ms"]; sys.exit(0 if 100 < c <= 0.7*s["wall_ms"] else 1)' ||
		fail "cpu out of band: $(cat st.json)"
}

# clone3 carries CLONE_INTO_CGROUP and nobody writes cgroup.procs: the
# sandbox is born in its cgroup. Its cgroup namespace is rooted there.
t_root_clone_into_cgroup() {
	strace -f -o trace -e trace=clone3,openat "$CL" "${RUN[@]}" --memory 64m -- /h/cg_hog cgroup >out 2>err
	assert_eq 0 $? "exit code ($(cat err))"
	grep -q 'clone3({flags=.*CLONE_INTO_CGROUP.*cgroup=' trace || fail "no clone3 with CLONE_INTO_CGROUP: $(grep clone3 trace)"
	! grep 'cgroup.procs' trace | grep -q O_WRONLY || fail "cgroup.procs written: $(grep cgroup.procs trace)"
	grep 'cgroup.kill' trace | grep -q O_WRONLY || fail "cleanup did not use cgroup.kill"
	assert_eq "0::/" "$(cat out)" "the command's /proc/self/cgroup"
	gate_open
	"$CL" "${RUN[@]}" --memory 64m -- "${GATED[@]}" <gate >/dev/null 2>&1 &
	local pid=$! l init; exec 9>gate; l=$(wait_leaf $G/cloister)
	wait_until has_procs "$l" || fail "nothing in $l"
	init=$(head -1 "$l/cgroup.procs")
	assert_eq "0::${l#$G}" "$(cat /proc/$init/cgroup)" "host view of the sandbox init"
	exec 9>&-
	wait $pid
}

# A process that is in the sandbox cgroup but not in its pid namespace
# survives the pid namespace teardown; only cgroup.kill gets it.
t_root_cgroup_kill_cleanup() {
	gate_open
	"$CL" "${RUN[@]}" --memory 64m -- "${GATED[@]}" <gate >/dev/null 2>&1 &
	local pid=$! l; exec 9>gate; l=$(wait_leaf $G/cloister)
	sleep 300 >/dev/null 2>&1 9>&- & local stray=$!   # not holding the gate
	echo $stray > "$l/cgroup.procs" || fail "could not move the stray"
	exec 9>&-
	wait $pid; assert_eq 0 $? "exit code"
	wait $stray; assert_eq 137 $? "stray killed by SIGKILL"
	[ ! -e "$l" ] || fail "$l left behind"
}

t_root_sigkill_then_gc() {
	gate_open
	"$CL" "${RUN[@]}" --memory 64m -- "${GATED[@]}" <gate >/dev/null 2>&1 &
	local pid=$! l; exec 9>gate; l=$(wait_leaf $G/cloister)
	wait_until has_procs "$l" || fail "nothing in $l"
	kill -9 $pid; wait $pid 2>/dev/null
	wait_until no_procs "$l" || fail "sandbox outlived SIGKILL of cloister"
	[ -d "$l" ] || fail "killed run left nothing for gc to do"
	clr gc
	assert_contains "$OUT" "removed $l"
	[ ! -e "$l" ] || fail "$l left after gc"
}

t_root_no_limits_no_cgroup() {
	clr "${RUN[@]}" -- /h/cg_hog cgroup
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq "" "$(leaves $G/cloister)" "leaves"
}

# ---- rootless, delegated subtree ----

t_user_limits_written_and_placed() {
	userdir
	gate_open
	as_user "$CL" "${RUN[@]}" --memory 48m --cpus 0.25 --pids 20 -- "${GATED[@]}" <gate >out 2>err &
	local w=$! l init; exec 9>gate; l=$(wait_leaf $DELEG/cloister)
	[ -n "$l" ] || fail "no sandbox cgroup under $DELEG/cloister ($(cat err))"
	assert_eq 50331648 "$(cat "$l/memory.max")" memory.max
	assert_eq "25000 100000" "$(cat "$l/cpu.max")" cpu.max
	assert_eq 20 "$(cat "$l/pids.max")" pids.max
	wait_until has_procs "$l" || fail "nothing in $l"
	init=$(head -1 "$l/cgroup.procs")
	assert_eq "0::${l#$G}" "$(cat /proc/$init/cgroup)" "sandbox init's cgroup"
	exec 9>&-
	wait $w; assert_eq 0 $? "exit code ($(cat err))"
	[ ! -e "$l" ] || fail "$l left behind"
}

t_user_clone_into_cgroup() {
	userdir
	as_user strace -f -o "$T_TMP/trace" -e trace=clone3,openat "$CL" "${RUN[@]}" --memory 64m -- /h/cg_hog cgroup >out 2>err
	assert_eq 0 $? "exit code ($(cat err))"
	grep -q 'clone3({flags=.*CLONE_INTO_CGROUP' trace || fail "no CLONE_INTO_CGROUP: $(grep clone3 trace)"
	! grep 'cgroup.procs' trace | grep -q O_WRONLY || fail "cgroup.procs written"
	assert_eq "0::/" "$(cat out)" "the command's /proc/self/cgroup"
}

t_user_oom_and_peak() {
	userdir
	as_user "$CL" "${RUN[@]}" --json-status "$T_TMP/st.json" --memory 32m --memory-swap 0 -- /h/cg_hog mem 200 >out 2>err
	assert_eq 137 $? "exit code ($(cat err))"
	assert_eq true "$(jget st.json oom_killed)" oom_killed
	as_user "$CL" "${RUN[@]}" --json-status "$T_TMP/st2.json" --memory 96m -- /h/cg_hog mem 24 >out 2>err
	assert_eq 0 $? "exit code ($(cat err))"
	local p; p=$(jget st2.json memory_peak_bytes)
	[ "$p" -ge $((24 << 20)) ] && [ "$p" -le $((96 << 20)) ] || fail "memory.peak $p out of range"
	assert_eq "" "$(leaves $DELEG/cloister)" "leaves left"
}

t_user_cgroup_kill_cleanup() {
	userdir
	gate_open
	as_user "$CL" "${RUN[@]}" --pids 50 -- "${GATED[@]}" <gate >out 2>err &
	local w=$! l; exec 9>gate; l=$(wait_leaf $DELEG/cloister)
	[ -n "$l" ] || fail "no sandbox cgroup ($(cat err))"
	# The user's own process (setpriv execs, so $! is the sleep itself),
	# not holding the gate.
	setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups sleep 300 >/dev/null 2>&1 9>&- &
	local sp=$!
	echo "$sp" > "$l/cgroup.procs" || fail "could not move the stray"
	exec 9>&-
	wait $w; assert_eq 0 $? "exit code ($(cat err))"
	wait $sp; assert_eq 137 $? "stray user process killed by SIGKILL"
	[ ! -e "$l" ] || fail "$l left behind"
}

t_user_sigkill_then_gc() {
	userdir
	gate_open
	as_user "$CL" "${RUN[@]}" --memory 64m -- "${GATED[@]}" <gate >out 2>err &
	local w=$! l pid; exec 9>gate; l=$(wait_leaf $DELEG/cloister)
	wait_until has_procs "$l" || fail "nothing in $l ($(cat err))"
	pid=${l##*/}; pid=${pid%%-*}
	kill -9 "$pid"; wait $w 2>/dev/null
	wait_until no_procs "$l" || fail "sandbox outlived SIGKILL of cloister"
	[ -d "$l" ] || fail "killed run left nothing for gc to do"
	OUT=$(as_user "$CL" gc 2>&1)
	assert_contains "$OUT" "removed $l"
	[ ! -e "$l" ] || fail "$l left after gc"
}

t_user_not_delegated_refused() {
	userdir
	local at
	mkdir -p $G/nd/leaf
	for at in $G $G/nd/leaf; do
		OUT=$(CGROUP_AT=$at as_user "$CL" "${RUN[@]}" --memory 64m -- /bin/true 2>&1); RC=$?
		assert_eq 125 "$RC" "exit code from $at"
		assert_contains "$OUT" "--memory"
		assert_contains "$OUT" "not delegated"
		assert_contains "$OUT" "Delegate=yes"
		assert_eq 1 "$(printf '%s\n' "$OUT" | grep -c .)" "one line"
	done
}

# The parent of the user's cgroup holds a process itself: v2 cannot enable
# controllers there, and cloister says so instead of running unlimited.
t_user_internal_process_refused() {
	local d=$G/deleg2
	deleg_make "$d"
	sleep 30 >/dev/null 2>&1 & local squat=$!
	echo $squat > "$d/cgroup.procs"
	OUT=$(CGROUP_AT=$d/session as_user "$CL" "${RUN[@]}" --pids 10 -- /bin/true 2>&1); RC=$?
	kill $squat
	assert_eq 125 "$RC" "exit code"
	assert_contains "$OUT" "--pids"
	assert_contains "$OUT" "holds processes of its own"
}

t_user_check_probe() {
	OUT=$(as_user "$CL" check 2>&1)
	assert_contains "$OUT" "v2 (controllers:"
	assert_contains "$OUT" "--memory yes, --cpus yes, --pids yes"
	OUT=$(CGROUP_AT=$G as_user "$CL" check 2>&1)
	assert_contains "$OUT" "--memory no"
	assert_contains "$OUT" "not delegated"
}

# VM_ONLY=PATTERN runs a subset (while debugging a test).
for f in $(declare -F | awk '{print $3}' | grep '^t_'); do
	[[ $f == *${VM_ONLY:-}* ]] || unset -f "$f"
done
run_tests
echo "vm-v2: done"
