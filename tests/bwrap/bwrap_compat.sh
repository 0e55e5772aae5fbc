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

run_tests
