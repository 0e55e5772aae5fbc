#!/bin/bash
# Die-with-parent: SIGKILL of cloister at the two moments where the sandbox
# could outlive it (issue #14, hole 5). strace holds a setup syscall open
# (delay_enter) so the kill lands exactly in the window, every time; each
# test then waits, on pidfds, for the tree cloister started to be gone.
source "$(dirname "$0")/../lib.sh"
SC=${CORE_SECCOMP:---seccomp=default}
PT="$TOP/tests/helpers/proctree.py"
# Long enough for the kill to land inside even on a loaded 2-CPU machine
# (each test pays about twice the delay: strace finishes it before the
# killed tracee is reaped); the kill checks it landed inside
# (PT_KILL_BY), so a machine too slow for it fails instead of passing idly.
DELAY_US=${DWP_DELAY_US:-6000000}
# The latest moment for the kill: the window opened (about) now.
kill_by() { echo $(( $(date +%s%N) + DELAY_US * 1000 - 500000000 )); }

# Starts cloister under strace with each process's first prctl (init's and
# the command's PR_SET_PDEATHSIG) held for DELAY_US; sets ST (strace's pid)
# and CLP (cloister's).
start_traced() {
	command -v strace >/dev/null || skip "strace is missing (tests/deps.sh install)"
	# -q, not -qq: the log keeps each process's exit, for a failure.
	strace -f -q -o "$T_TMP/st" -e trace=clone3,prctl,vfork \
		-e inject=prctl:delay_enter=$DELAY_US:when=1 "$CL" "$@" >/dev/null 2>"$T_TMP/cl.err" &
	ST=$!
	# By argv[0]: strace's first children are its own probes, not cloister.
	CLP=$(python3 "$PT" wait_child "$ST" "$CL") || fail "cloister did not start under strace"
}

# The child of cloister is killed before its prctl has run: it must see
# that its parent is gone and exit instead of setting up the sandbox.
init_window() {  # cloister args...
	start_traced "$@"
	wait_line "$T_TMP/st" "clone3(\(| resumed>).*= [0-9]+$" >/dev/null || { kill -KILL $CLP; fail "no clone3 in strace log: $(tail -c 300 "$T_TMP/st")"; }
	PT_KILL_BY=$(kill_by) kill_tree_and_wait "$CLP" "$T_TMP/cl.err" "$T_TMP/st"
	wait $ST 2>/dev/null   # strace re-raises the SIGKILL its tracee got
	return 0
}

# init is killed (it dies with cloister) while the command, just forked, has
# not yet set its own parent-death signal: it must not run orphaned.
command_window() {  # cloister args...
	local init
	start_traced "$@"
	init=$(wait_line "$T_TMP/st" "^[0-9]+ +vfork\(") || { kill -KILL $CLP; fail "no vfork in strace log: $(tail -c 300 "$T_TMP/st")"; }
	local by; by=$(kill_by)
	init=${init%% *}
	python3 "$PT" wait_child "$init" >/dev/null || { kill -KILL $CLP; fail "no command"; }
	PT_KILL_BY=$by kill_tree_and_wait "$CLP" "$T_TMP/cl.err" "$T_TMP/st"
	wait $ST 2>/dev/null   # strace re-raises the SIGKILL its tracee got
	return 0
}

t_run_sigkill_before_init_pdeathsig() { init_window run "$SC" -- sleep 300; }
t_run_sigkill_before_command_pdeathsig() { command_window run "$SC" -- sleep 300; }
t_bwrap_sigkill_before_init_pdeathsig() {
	init_window bwrap --die-with-parent --unshare-user --ro-bind / / -- sleep 300
}
t_bwrap_no_pidns_sigkill_before_command_pdeathsig() {
	# No pid namespace: init's death does not end the command; only its
	# own parent-death signal and the check after it do. (Without a pid
	# namespace bwrap mode has an init only when something needs one, as
	# --lock-file does; otherwise the command is cloister's child, as with
	# bwrap, and t_bwrap_sigkill_before_init_pdeathsig covers its window.)
	touch "$T_TMP/lock"
	command_window bwrap --die-with-parent --unshare-user --ro-bind / / --bind "$T_TMP" "$T_TMP" \
		--lock-file "$T_TMP/lock" -- sleep 300
}

run_tests
