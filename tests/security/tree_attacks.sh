#!/bin/bash
# Trees a sandbox builds to defeat cloister's own walks (issue #29, class
# 7, the tree parts). A directory chain deeper than the fd limit: its
# removal held one fd per level and stopped at EMFILE, and the callers
# said nothing, so the run's state outlived run and gc. Each attack
# follows its control. docs/security.md, "Tree walks".
. "$(dirname "$0")/../lib.sh"

WSR=()
is_root && WSR=(--host-root)
export CLOISTER_STATE_DIR

# State dirs left under the state dir's workspaces/.
left() { ls -A "$CLOISTER_STATE_DIR/workspaces" 2>/dev/null | grep -E '^(run|kept|sticky)-' ; }
# DEPTH nested directories under the workspace's /w (cd, so no path
# grows past PATH_MAX).
DEEP='i=0; cd "$W"; while [ $i -lt $DEPTH ]; do mkdir d && cd d || exit 1; i=$((i+1)); done'

t_deep_tree_in_a_workspace_is_removed() {
	CLOISTER_STATE_DIR=$T_TMP/state
	W=$T_TMP/ws
	mkdir -p "$W" && echo base >"$W/f"
	# The removal's fd limit, low enough for a quick chain to pass it.
	ulimit -n 256
	# Control: a shallow tree goes with the run.
	clr run "${WSR[@]}" --workspace "$W" --env W="$W" --env DEPTH=10 -- sh -c "$DEEP"
	assert_eq 0 "$RC" "control: the shallow run ($ERR)"
	assert_eq "" "$(left)" "control: a 10-deep tree outlived the run"
	# The attack: deeper than the fd limit.
	clr run "${WSR[@]}" --workspace "$W" --env W="$W" --env DEPTH=400 -- sh -c "$DEEP"
	assert_eq 0 "$RC" "the deep run ($ERR)"
	assert_eq "" "$(left)" "a 400-deep tree outlived the run (fd limit 256)"
	clr gc
	assert_eq 0 "$RC" "gc ($ERR)"
	assert_eq "" "$(left)" "a 400-deep tree outlived gc"
	[ -z "$(find "$CLOISTER_STATE_DIR" -name '.cloister-rm-*' 2>/dev/null | head -1)" ] ||
		fail "a moved-up part of the tree stayed"
}

run_tests
