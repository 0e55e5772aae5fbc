#!/bin/bash
# The supervisor believes only init. bwrap mode keeps init dumpable when
# the caller asked for its child-pid (--info-fd/--json-status-fd), so the
# command (same uid, init without capabilities) can take a copy of init's
# sync socket with pidfd_getfd. Messages it sends there must change
# nothing: they carry the command's pid, not init's (SCM_CREDENTIALS).
# Without a child-pid document init is not dumpable at all.
source "$(dirname "$0")/../lib.sh"
SYS=(--ro-bind /usr /usr --ro-bind /bin /bin --ro-bind /lib /lib --ro-bind /lib64 /lib64)
FORGE=$HELPERS/forge_sync

forge() {  # extra bwrap options...
	clr bwrap --unshare-user --unshare-pid --proc /proc --dev /dev "${SYS[@]}" \
		--ro-bind "$FORGE" /forge "$@" -- /forge
}

t_forged_messages_are_ignored() {
	forge --info-fd 9 9>"$T_TMP/info"
	# The attack had a socket to write on: otherwise this proves nothing.
	assert_contains "$OUT" "sent on 1 socket" "the command took init's socket"
	assert_eq 0 "$RC" "exit status (a forged EXIT says 42, a forged setup error 1: $ERR)"
	assert_not_contains "$ERR" "FORGED" "stderr"
	assert_contains "$(cat "$T_TMP/info")" '"child-pid"' "info document"
}

t_forged_status_document_unchanged() {
	forge --json-status-fd 9 9>"$T_TMP/status"
	assert_contains "$OUT" "sent on 1 socket" "the command took init's socket"
	assert_eq 0 "$RC" "exit status ($ERR)"
	assert_contains "$(cat "$T_TMP/status")" '"exit-code": 0' "json-status exit-code"
}

t_init_not_dumpable_without_child_pid() {
	forge
	assert_eq 0 "$RC" "exit status ($ERR)"
	assert_contains "$OUT" "sent on 0 socket" "pidfd_getfd of a non-dumpable init"
}

run_tests
