#!/bin/bash
# Sessions with a workspace: the diff at rm, copy mode, snapshots of a
# running session (it is paused meanwhile; a killed snapshot worker leaves
# nothing).
. "$(dirname "$0")/session_lib.bash"

# --workspace: the session's execs share one overlay of DIR (each sees the
# others' changes, the host DIR is never written), `cloister gc` leaves a
# live session's state alone, and rm writes the diff bundle before it
# returns (a capture failure is rm's error), leaving no state.
t_workspace_diff_at_rm() {
	local W=$T_TMP/ws WSR=()
	# as in workspace.sh: root keeps host root, so the overlay is tested
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W/sub"; echo base >"$W/a.txt"; echo keep >"$W/sub/k.txt"
	# relative --diff-out: the caller's directory, not the supervisor's
	mk "${WSR[@]}" --workspace "$W" --diff-out b.json
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo changed >"$W/a.txt"; echo new >"$W/n.txt"; rm "$W/sub/k.txt"' ||
		fail "changing the workspace"
	assert_eq "changed new" "$("$CL" exec "$SID" --env W="$W" -- sh -c 'echo $(cat "$W/a.txt" "$W/n.txt")')" 		"a later exec sees the changes"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR while the session runs"
	"$CL" gc >/dev/null 2>&1
	assert_eq 1 "$(ls "$T_TMP/state/workspaces" | wc -l)" "the live session's workspace state after gc"
	clr exec "$SID" -- true; assert_eq 0 "$RC" "exec after gc ($ERR)"
	clr rm "$SID"; assert_eq 0 "$RC" "rm ($ERR)"
	# rm returned: the bundle is there and the state is gone
	assert_eq "a.txt:modify n.txt:add sub/k.txt:delete" 		"$(py '" ".join(sorted(p["path"]+":"+p["operation"] for p in j["patches"]))' <"$T_TMP/b.json")" "the bundle"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after rm"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR after rm"
	clr diff apply "$T_TMP/b.json" "$W"; assert_eq 0 "$RC" "applying the bundle ($ERR)"
	assert_eq "changed new" "$(echo $(cat "$W/a.txt" "$W/n.txt"))" "applied"
	# a capture that fails (more files than a bundle's 1000 patches) is rm's error
	mk "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/c.json"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'cd "$W" && for i in $(seq 1001); do : >f$i; done' ||
		fail "making 1001 files"
	clr rm "$SID"; assert_eq 125 "$RC" "rm after a failed capture"
	assert_contains "$ERR" "capturing the diff"
	[ ! -e "$T_TMP/c.json" ] || fail "a bundle written for a failed capture"
	# ... and keeps the work, named with the command that captures it.
	kept=$(ls -d "$T_TMP/state/workspaces/kept-"* 2>/dev/null)
	[ -n "$kept" ] && [ -e "$kept/upper/f1001" ] || fail "the session's changes were not kept: $ERR"
	assert_contains "$ERR" "changes are kept in $kept"
	assert_contains "$ERR" "\`cloister diff capture $kept $T_TMP/c.json\`"
	touch -d '8 days ago' "$kept/kept-lower"
	clr gc
	[ ! -e "$kept" ] || fail "gc left an old kept dir ($OUT $ERR)"
	not_listed "$SID" || fail "the session is still listed"
	# without --diff-out: changes dropped; a failed create leaves nothing
	mk "${WSR[@]}" --workspace "$W"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo x >"$W/x"' || fail "writing"
	clr rm "$SID"; assert_eq 0 "$RC" "rm without --diff-out ($ERR)"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state without --diff-out"
	clr create "${WSR[@]}" --workspace "$W" --ro /nonexistent-src; assert_eq 125 "$RC" "a create that fails"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after a failed create"
	clr create --workspace "$W" --diff-out -; assert_eq 125 "$RC" "--diff-out - for a session"
	[ ! -e "$W/x" ] || fail "the host DIR was written"
}

# Where an overlay cannot be made (an overlay-backed /tmp, a kernel
# without unprivileged overlay), a session's workspace is a copy, as a
# run's is: the same bundle at rm, the host DIR untouched meanwhile.
t_workspace_copy_mode() {
	local W=$T_TMP/ws
	# root's copy is bound idmapped: --host-root where /tmp cannot be
	# (the CI guest's tmpfs on Linux 6.1)
	rw_id_probe
	export CLOISTER_STATE_DIR=$T_TMP/state CLOISTER_WORKSPACE_MODE=copy
	mkdir -p "$W/sub"; echo base >"$W/a.txt"; echo keep >"$W/sub/k.txt"
	mk "${RW_ID[@]}" --workspace "$W" --diff-out "$T_TMP/b.json"
	# the copy holds the whole tree (an overlay's upper only what changed)
	[ -f "$(echo "$T_TMP"/state/workspaces/*/upper/sub/k.txt)" ] || fail "no copy of DIR in the state dir"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo changed >"$W/a.txt"; echo new >"$W/n.txt"; rm "$W/sub/k.txt"' ||
		fail "changing the workspace"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR while the session runs"
	clr rm "$SID"; assert_eq 0 "$RC" "rm ($ERR)"
	assert_eq "a.txt:modify n.txt:add sub/k.txt:delete" \
		"$(py '" ".join(sorted(p["path"]+":"+p["operation"] for p in j["patches"]))' <"$T_TMP/b.json")" "the bundle"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after rm"
}

# The session's freezer as the host sees it: "frozen", "thawed", or
# "none" when the session has no cgroup that can be frozen (v1: its own
# freezer dir; v2: its own cgroup).
freezer_of() {  # SID
	local init cg; init=$(field "$1" init_pid)
	cg=$(sed -n 's/^[0-9]*:freezer://p' "/proc/$init/cgroup")
	if [ -n "$cg" ] && [ "$cg" != / ] && [ -f "/sys/fs/cgroup/freezer$cg/freezer.state" ]; then
		case $(cat "/sys/fs/cgroup/freezer$cg/freezer.state") in
		FROZEN) echo frozen ;; THAWED) echo thawed ;; *) echo freezing ;;
		esac
		return
	fi
	cg=$(sed -n 's/^0:://p' "/proc/$init/cgroup")
	if [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -n "$cg" ] && [ "$cg" != / ]; then
		grep -qx 'frozen 1' "/sys/fs/cgroup$cg/cgroup.events" && echo frozen || echo thawed
		return
	fi
	echo none
}
# Root gets a freezer (a limit makes a v2 cgroup too); the user on this
# kind of host (v1 hybrid, no delegation) gets none and is told so.
snap_limits() { is_root && echo --pids 1000; }
snaps_left() { ls -A "$T_TMP/state/snapshots" 2>/dev/null | tr '\n' ' '; }

# A session's workspace snapshot: the session's own view (changes, new
# files, deletions), DIR untouched, usable by run --snapshot; the session
# runs on; refusals leave nothing; links are kept as links, a fifo refuses
# the snapshot (and the session is thawed after that too).
snapshot_of_a_session() {
	local W=$T_TMP/ws WSR=() S=$T_TMP/state/snapshots
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W/sub"; echo base >"$W/a.txt"; echo keep >"$W/sub/k.txt"
	mk "${WSR[@]}" $(snap_limits) --workspace "$W"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo changed >"$W/a.txt"; echo new >"$W/n.txt"; rm "$W/sub/k.txt";
		ln -s /etc/passwd "$W/link"; truncate -s 1G "$W/sparse"' || fail "changing the workspace"
	clr workspace snapshot --session "$SID" --id mid
	assert_eq "0 mid" "$RC $OUT" "snapshot of the session ($ERR)"
	is_root && assert_eq "" "$ERR" "stderr of a paused snapshot"
	is_root || assert_contains "$ERR" "was not paused"
	assert_eq "a.txt:changed link n.txt:new sparse sub" \
		"$(cd "$S/mid/tree" && for f in $(ls); do [ -f "$f" ] && [ ! -L "$f" ] && [ "$f" != sparse ] && f="$f:$(cat "$f")"; echo "$f"; done | tr '\n' ' ' | sed 's/ $//')" "the snapshot's tree"
	assert_eq "" "$(ls -A "$S/mid/tree/sub")" "the deletion is in the snapshot"
	assert_eq /etc/passwd "$(readlink "$S/mid/tree/link")" "a link kept as a link"
	assert_eq "1073741824" "$(stat -c %s "$S/mid/tree/sparse")" "the sparse file's size"
	[ "$(du -k "$S/mid/tree/sparse" | cut -f1)" -lt 1024 ] || fail "the sparse file was written out in full"
	assert_eq "session:$SID $W" "$("$CL" workspace snapshots --json | py '" ".join([s["workspace"]+" "+s["rootDir"] for s in j if s["id"]=="mid"])')" "listed"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR"
	[ ! -e "$W/n.txt" ] || fail "the snapshot wrote DIR"
	# the session runs on, thawed, and writes on; the snapshot stays as it was
	[ "$(freezer_of "$SID")" != frozen ] || fail "the session is still frozen after the snapshot"
	clr exec "$SID" --env W="$W" -- sh -c 'echo later >"$W/a.txt"; cat "$W/a.txt"'
	assert_eq "0 later" "$RC $OUT" "an exec after the snapshot ($ERR)"
	assert_eq changed "$(cat "$S/mid/tree/a.txt")" "the snapshot after the session wrote on"
	clr run "${WSR[@]}" --workspace "$W" --snapshot mid -- sh -c "cat $W/a.txt $W/n.txt; ls $W/sub"
	assert_eq "0 changed new" "$RC $(echo $OUT)" "a run started from the session's snapshot ($ERR)"
	# refusals: one line, exit 125, nothing made
	clr workspace snapshot --session "$SID" --id mid; assert_eq 125 "$RC" "an existing id"
	assert_contains "$ERR" "exists already"
	clr workspace snapshot --session "$SID" --id ../x; assert_eq 125 "$RC" "a bad id"
	assert_eq 1 "$(echo "$ERR" | wc -l)" "one line for a bad id"
	clr workspace snapshot --session nosuchsession; assert_eq 125 "$RC" "an unknown session"
	assert_contains "$ERR" "no session 'nosuchsession'"
	clr workspace snapshot --session "$SID" mid2; assert_eq 125 "$RC" "a NAME and --session"
	local with=$SID
	mk
	clr workspace snapshot --session "$SID" --id none; assert_eq 125 "$RC" "a session without --workspace"
	assert_contains "$ERR" "has no workspace"
	"$CL" rm "$SID"
	assert_eq "mid " "$(snaps_left)" "snapshots after the refusals"
	# a fifo in the tree refuses the snapshot: nothing left, session thawed
	"$CL" exec "$with" --env W="$W" -- mkfifo "$W/fifo" || fail "making a fifo"
	clr workspace snapshot --session "$with" --id withfifo; assert_eq 125 "$RC" "a fifo in the tree"
	assert_eq "mid " "$(snaps_left)" "snapshots after a refused tree"
	[ "$(freezer_of "$with")" != frozen ] || fail "the session is frozen after a failed snapshot"
	clr exec "$with" -- true; assert_eq 0 "$RC" "an exec after a failed snapshot ($ERR)"
	"$CL" rm "$with"
}
t_workspace_snapshot_of_a_session() { snapshot_of_a_session; }
t_workspace_snapshot_of_a_session_copy_mode() { CLOISTER_WORKSPACE_MODE=copy snapshot_of_a_session; }

# While the tree is copied the session is frozen: a writer appending a
# counter stops (what the copy has is what the file held at the freeze,
# every line whole), and runs on after the thaw. The test hook holds the
# worker once frozen and once thawed (SS_SNAP_HOLD_ENV: it tells its pid
# and waits for SIGUSR1), so each state is looked at while it holds, not
# guessed at by timing.
snapshot_pauses() {
	local W=$T_TMP/ws WSR=() S=$T_TMP/state/snapshots H=$T_TMP/hold pid at n up
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W"; mkfifo "$H"
	CLOISTER_TEST_SNAP_HOLD=$H mk "${WSR[@]}" $(snap_limits) --workspace "$W"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'i=0; while :; do i=$((i+1)); echo $i >>"$W/count"; done' >/dev/null 2>&1 &
	up=$(echo "$T_TMP"/state/workspaces/run-*/upper)
	wait_until test -s "$up/count" || fail "the writer never wrote"
	"$CL" workspace snapshot --session "$SID" --id paused >"$T_TMP/snap.out" 2>"$T_TMP/snap.err" &
	local client=$!
	read -r pid <"$H"   # frozen, nothing copied yet: held until SIGUSR1
	if is_root; then
		assert_eq frozen "$(freezer_of "$SID")" "the session's cgroup while the snapshot holds"
	else
		assert_eq none "$(freezer_of "$SID")" "no freezer for the user here"
	fi
	at=$(wc -l <"$up/count")
	kill -USR1 "$pid"
	read -r pid <"$H"   # copied and thawed, not yet answered
	[ "$(freezer_of "$SID")" != frozen ] || fail "still frozen after the copy, before the reply"
	kill -USR1 "$pid"
	wait "$client"; assert_eq "0 paused" "$? $(cat "$T_TMP/snap.out")" "the snapshot ($(cat "$T_TMP/snap.err"))"
	n=$(wc -l <"$S/paused/tree/count")
	# every line whole and in sequence: no write was half copied
	assert_eq "$n" "$(awk 'NR==$1 {c++} END {print c+0}' "$S/paused/tree/count")" "lines of the copy in sequence"
	if is_root; then
		assert_eq "$at" "$n" "lines at the freeze and in the copy"
	else
		assert_contains "$(cat "$T_TMP/snap.err")" "was not paused"
	fi
	wait_until test "$(wc -l <"$up/count")" -gt "$n" || fail "the writer did not go on after the snapshot"
	"$CL" rm "$SID"
}
t_workspace_snapshot_pauses_the_session() { snapshot_pauses; }
t_workspace_snapshot_pauses_the_session_copy_mode() { CLOISTER_WORKSPACE_MODE=copy snapshot_pauses; }

# A snapshot worker SIGKILLed while the session is frozen: the supervisor
# thaws it and sweeps the half-built snapshot before the client hears the
# hang-up; the session serves on, the next snapshot works.
t_workspace_snapshot_worker_killed() {
	local W=$T_TMP/ws WSR=() H=$T_TMP/hold pid
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W"; echo x >"$W/f"; mkfifo "$H"
	CLOISTER_TEST_SNAP_HOLD=$H mk "${WSR[@]}" $(snap_limits) --workspace "$W"
	"$CL" workspace snapshot --session "$SID" --id killed >"$T_TMP/snap.out" 2>"$T_TMP/snap.err" &
	local client=$!
	read -r pid <"$H"
	is_root && assert_eq frozen "$(freezer_of "$SID")" "frozen while held"
	case $(snaps_left) in .tmp-*) ;; *) fail "no build in progress while held: '$(snaps_left)'" ;; esac
	kill -9 "$pid"
	wait "$client"; assert_eq 125 "$?" "the client of a killed snapshot"
	assert_contains "$(cat "$T_TMP/snap.err")" "ended before answering"
	[ "$(freezer_of "$SID")" != frozen ] || fail "the session is still frozen after its snapshot worker died"
	assert_eq "" "$(snaps_left)" "what a killed snapshot left"
	clr exec "$SID" -- echo alive; assert_eq "0 alive" "$RC $OUT" "the session after a killed snapshot"
	"$CL" workspace snapshot --session "$SID" --id after >"$T_TMP/snap.out" 2>&1 &
	client=$!
	read -r pid <"$H"; kill -USR1 "$pid"
	read -r pid <"$H"; kill -USR1 "$pid"
	wait "$client"; assert_eq 0 "$?" "the next snapshot ($(cat "$T_TMP/snap.out"))"
	assert_eq x "$(cat "$T_TMP/state/snapshots/after/tree/f")" "the next snapshot's tree"
	"$CL" rm "$SID"
}

run_tests
