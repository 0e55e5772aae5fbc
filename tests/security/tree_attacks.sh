#!/bin/bash
# Trees a sandbox builds to defeat cloister's own walks (issue #29, class
# 7, the tree parts). A directory chain deeper than the fd limit: its
# removal held one fd per level and stopped at EMFILE, and the callers
# said nothing, so the run's state outlived run and gc. Many hard links
# to one big file: the snapshot copied every name. A 15 TiB sparse file:
# every --diff-out run hashed its holes. Each attack follows its
# control. docs/security.md, "Tree walks".
. "$(dirname "$0")/../lib.sh"

WSR=()
is_root && WSR=(--host-root)
export CLOISTER_STATE_DIR

# State dirs left under the state dir's workspaces/.
left() { ls -A "$CLOISTER_STATE_DIR/workspaces" 2>/dev/null | grep -E '^(run|kept|sticky)-' ; }
# DEPTH nested directories under the workspace's /w (cd, so no path
# grows past PATH_MAX).
DEEP='i=0; cd "$W"; while [ $i -lt $DEPTH ]; do mkdir d && cd d || exit 1; i=$((i+1)); done'
# The same in steps of 100 (DEPTH a multiple of it): a shell's cd one
# level at a time took 20 s for 1100 levels on an overlay.
DEEP100='p=d; j=1; while [ $j -lt 100 ]; do p=$p/d; j=$((j+1)); done; cd "$W"; i=0;
	while [ $i -lt $((DEPTH / 100)) ]; do mkdir -p $p && cd -P $p || exit 1; i=$((i+1)); done'

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

# A spec with a sticky workspace NAME over $P running CMD (no review).
sticky_spec() {  # file name cmd
	python3 - "$T_TMP" "$P" "$@" <<'PY'
import json, sys
tmp, proj, out, name, cmd = sys.argv[1:6]
json.dump({"runId": "r-" + name, "sandboxId": "s1", "rootDir": proj, "command": cmd,
           "requestBundlePath": tmp + "/req", "reviewDiffs": True,
           "workspace": {"name": name, "persistence": "sticky"}}, open(out, "w"))
PY
}
# KiB a tree takes on disk, each inode once (du's own rule).
kib() { du -sk "$1" | cut -f1; }

t_hard_links_do_not_multiply_a_snapshot() {
	CLOISTER_STATE_DIR=$T_TMP/state
	P=$T_TMP/proj
	mkdir -p "$P" "$T_TMP/req" && echo base >"$P/f"
	# Control: the host's filesystem keeps hard links (du counts one).
	mkdir "$T_TMP/c" && head -c 1048576 /dev/urandom >"$T_TMP/c/a" && ln "$T_TMP/c/a" "$T_TMP/c/b" ||
		skip "no hard links in $T_TMP"
	[ "$(kib "$T_TMP/c")" -lt 1800 ] || skip "du counts hard links twice here"
	# The attack: one 16 MiB file and 64 more names for it.
	sticky_spec "$T_TMP/s.json" hl "cd $P && head -c 16777216 /dev/urandom >big &&
		for i in \$(seq 1 64); do ln big l\$i || exit 1; done; echo '{\"status\":\"finished\"}'"
	clr sandbox run --spec "$T_TMP/s.json" --json
	[ -e "$CLOISTER_STATE_DIR/workspaces/sticky-hl/upper/l64" ] || fail "the links were not made ($RC $OUT $ERR)"
	clr workspace snapshot hl --id hl1
	assert_eq 0 "$RC" "snapshot ($ERR)"
	tree=$CLOISTER_STATE_DIR/snapshots/hl1/tree
	assert_eq 65 "$(stat -c %h "$tree/big")" "the snapshot's names of big"
	k=$(kib "$tree")
	[ "$k" -lt 40000 ] || fail "the snapshot takes $k KiB for one 16 MiB file with 64 links"
	cmp -s "$tree/big" "$tree/l64" || fail "a link's content differs in the snapshot"
}

# clr with a time bound: RC 124 when cloister ran past it.
clr_within() {  # seconds args...
	local o e s=$1
	shift
	o=$(mktemp "$T_TMP/out.XXXXXX"); e=$(mktemp "$T_TMP/err.XXXXXX")
	timeout -k 5 "$s" "$CL" "$@" >"$o" 2>"$e"; RC=$?
	OUT=$(cat "$o"); ERR=$(cat "$e"); rm -f "$o" "$e"
}

t_a_sparse_file_does_not_stall_a_diff() {
	CLOISTER_STATE_DIR=$T_TMP/state
	W=$T_TMP/ws
	mkdir -p "$W" && echo base >"$W/f"
	# Control: the filesystem keeps a 15 TiB file sparse.
	truncate -s 15T "$T_TMP/probe" 2>/dev/null || skip "no 15 TiB sparse file in $T_TMP"
	[ "$(stat -c %b "$T_TMP/probe")" -lt 64 ] || skip "$T_TMP does not keep holes"
	rm -f "$T_TMP/probe"
	# Control: a plain run's diff, before the base holds the big file.
	clr_within 60 run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b0.json" --env W="$W" -- \
		sh -c 'echo one >"$W/f"'
	assert_eq 0 "$RC" "control: the run ($ERR)"
	assert_contains "$(cat "$T_TMP/b0.json")" '"baseRef"' "control: the bundle"
	# The attack, part one: 15 TiB of holes in the base, a small change.
	truncate -s 15T "$W/huge"
	SECONDS=0
	clr_within 60 run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b1.json" --env W="$W" -- \
		sh -c 'echo two >"$W/f"'
	t=$SECONDS
	assert_eq 0 "$RC" "the run over a 15 TiB base file ($ERR)"
	[ "$t" -lt 20 ] || fail "the diff over a 15 TiB sparse base file took $t s"
	assert_contains "$(cat "$T_TMP/b1.json")" 'two' "the small change's bundle"
	b1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["baseRef"])' "$T_TMP/b1.json")
	# The base's id follows the big file's content: a byte written far in.
	printf x | dd of="$W/huge" bs=1 seek=$((1 << 40)) conv=notrunc status=none
	clr_within 60 run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b2.json" --env W="$W" -- \
		sh -c 'echo two >"$W/f"'
	assert_eq 0 "$RC" "the run after a byte in the big file ($ERR)"
	b2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["baseRef"])' "$T_TMP/b2.json")
	[ "$b1" != "$b2" ] || fail "a byte 1 TiB into a base file left baseRef as it was"
	# Part two: the sandbox writes a 15 TiB file of its own.
	SECONDS=0
	clr_within 60 run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b3.json" --env W="$W" -- \
		sh -c 'truncate -s 15T "$W/huge2"'
	t=$SECONDS
	[ "$RC" != 124 ] || fail "the run with a 15 TiB file in its writes ran past 60 s"
	[ "$t" -lt 20 ] || fail "the capture of a 15 TiB sparse file took $t s"
	assert_contains "$ERR" "huge2" "the refusal names the file"
	assert_contains "$ERR" "100 MiB" "the refusal names the limit"
	[ ! -e "$T_TMP/b3.json" ] || fail "a bundle was written without the big file"
}

# One line, naming the depth limit, never the whole chain.
assert_depth_error() {  # what
	assert_contains "$ERR" "256 directories deep" "$1: the limit named"
	[ "$(printf '%s\n' "$ERR" | grep -c 'deep')" = 1 ] || fail "$1: not one line: $ERR"
	[ "$(printf '%s\n' "$ERR" | awk 'length > 400' | wc -l)" = 0 ] || fail "$1: a line of the whole chain: $ERR"
}

t_deep_tree_gets_a_clear_limit_in_capture_and_snapshot() {
	CLOISTER_STATE_DIR=$T_TMP/state
	W=$T_TMP/ws
	P=$W
	mkdir -p "$W" "$T_TMP/req" && echo base >"$W/f"
	# Control: a 10-deep tree is captured.
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b0.json" --env W="$W" --env DEPTH=10 -- \
		sh -c "$DEEP && echo x >leaf"
	assert_eq 0 "$RC" "control: the shallow run ($ERR)"
	assert_contains "$(cat "$T_TMP/b0.json")" "d/d/d" "control: the shallow tree's bundle"
	# The attack on the capture: 1100 levels.
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b1.json" --env W="$W" --env DEPTH=1100 -- sh -c "$DEEP100"
	[ "$RC" != 0 ] || fail "a 1100-deep tree was captured"
	assert_depth_error "the capture"
	assert_contains "$ERR" "changes are kept in" "the work kept"
	[ ! -e "$T_TMP/b1.json" ] || fail "a bundle was written"
	# The attack on a snapshot: a sticky workspace 1100 deep.
	sticky_spec "$T_TMP/s.json" deep "W=$W DEPTH=1100; $DEEP100; echo '{\"status\":\"finished\"}'"
	clr sandbox run --spec "$T_TMP/s.json" --json
	[ -d "$CLOISTER_STATE_DIR/workspaces/sticky-deep/upper/d/d/d" ] || fail "no deep sticky tree ($RC $OUT $ERR)"
	clr workspace snapshot deep --id deep1
	[ "$RC" != 0 ] || fail "a 1100-deep tree was snapshotted"
	assert_depth_error "the snapshot"
	[ -z "$(ls -A "$CLOISTER_STATE_DIR/snapshots" 2>/dev/null)" ] || fail "the failed snapshot left $(ls -A "$CLOISTER_STATE_DIR/snapshots")"
}

run_tests
