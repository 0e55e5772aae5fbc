#!/bin/bash
# Workspace snapshots: `cloister workspace snapshot NAME [--id ID]`,
# `snapshots [--json]`, `rm-snapshot ID`, and spec workspace.snapshotId.
# A snapshot is what the sticky workspace's next run would see (deletions
# and opaque dirs applied, symlinks kept as links, never followed); a run
# from it starts from its tree and diffs against it; refusals leave
# nothing; a killed snapshot leaves nothing that reads as one.
. "$(dirname "$0")/../lib.sh"

export CLOISTER_STATE_DIR
ok='echo "{\"status\":\"finished\"}"'
py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }

setup() {
	CLOISTER_STATE_DIR=$T_TMP/state
	P=$T_TMP/proj
	mkdir -p "$T_TMP/req" "$P/src" "$P/olddir" "$T_TMP/gate"
	echo original >"$P/src/file.txt"
	echo doomed >"$P/gone.txt"
	echo x >"$P/olddir/x"
	echo same >"$P/kept.txt"
}
# spec FILE RUNID COMMAND WORKSPACE-JSON [extra members]: a spec with
# rootDir $P, no review (the diff lands in the result), /gate mounted.
spec() {
	python3 - "$T_TMP" "$P" "$@" >"$1" <<'PY'
import json, sys
tmp, proj, out, run, cmd, ws = sys.argv[1:7]
extra = sys.argv[7] if len(sys.argv) > 7 else ""
s = {"runId": run, "sandboxId": "s1", "rootDir": proj, "command": cmd,
     "requestBundlePath": tmp + "/req", "workspace": json.loads(ws), "reviewDiffs": False,
     "volumes": [{"host": tmp + "/gate", "container": "/gate", "readonly": False}]}
if extra:
    s.update(json.loads("{" + extra + "}"))
print(json.dumps(s))
PY
}
run_spec() { clr sandbox run --spec "$1" --json; }
# A sticky workspace w1 whose upper dir holds a modify, an add (0750), a
# deletion (whiteout) and an opaque dir (olddir replaced), plus whatever
# extra shell the caller adds. Its own bundle is not applied.
sticky_w1() {  # [extra command]
	spec "$T_TMP/w1.json" r1 "cd $P && echo changed >src/file.txt && echo new >new.txt && chmod 750 new.txt &&
		rm gone.txt && rm -r olddir && mkdir olddir && echo y >olddir/y ${1:+&& $1}; $ok" \
		'{"name":"w1","persistence":"sticky"}' '"reviewDiffs":true'
	run_spec "$T_TMP/w1.json"
	[ -d "$CLOISTER_STATE_DIR/workspaces/sticky-w1/upper" ] || fail "no sticky workspace made ($RC $OUT $ERR)"
}
snapdir() { echo "$CLOISTER_STATE_DIR/snapshots"; }

t_snapshot_is_the_next_runs_tree_and_a_run_starts_from_it() {
	setup
	sticky_w1
	clr workspace snapshot w1 --id base1
	assert_eq 0 "$RC" "snapshot ($ERR)"
	assert_eq "base1" "$OUT" "the id printed"
	tree=$(snapdir)/base1/tree
	assert_eq "changed" "$(cat "$tree/src/file.txt")" "modify"
	assert_eq "750" "$(stat -c %a "$tree/new.txt")" "mode kept"
	[ ! -e "$tree/gone.txt" ] || fail "a deletion in the upper came back in the snapshot"
	[ ! -e "$tree/olddir/x" ] || fail "an opaque dir's lower content came back in the snapshot"
	assert_eq "y" "$(cat "$tree/olddir/y")" "opaque dir's new content"
	[ ! -e "$tree/.smithers" ] || fail ".smithers (run state) was snapshotted"
	clr workspace snapshots --json
	assert_eq 0 "$RC" "list ($ERR)"
	assert_eq "base1 w1 $P" "$(py '" ".join(s["id"]+" "+s["workspace"]+" "+s["rootDir"] for s in j)' <<<"$OUT")" "listed"
	# rootDir is what it was: the snapshot is cloister's, not the host's.
	assert_eq "original" "$(cat "$P/src/file.txt")" "rootDir untouched"
	# An ephemeral run from it sees the snapshot, not rootDir.
	spec "$T_TMP/e.json" r2 "cd $P && test \"\$(cat src/file.txt)\" = changed && test ! -e gone.txt && test ! -e olddir/x && test -e new.txt || exit 9; $ok" \
		'{"name":"e","snapshotId":"base1"}'
	run_spec "$T_TMP/e.json"
	assert_eq 0 "$RC" "run from the snapshot ($OUT $ERR)"
	assert_eq "0" "$(py 'len(j["diffBundle"]["patches"])' <<<"$OUT")" "no changes: nothing relative to the snapshot"
	assert_eq "" "$(ls -A "$CLOISTER_STATE_DIR/workspaces" | grep -v sticky-w1)" "ephemeral state left"
}

t_diff_of_a_snapshot_run_is_relative_to_the_snapshot() {
	setup
	sticky_w1
	clr workspace snapshot w1 --id base2
	assert_eq 0 "$RC" "snapshot ($ERR)"
	spec "$T_TMP/e.json" r2 "cd $P && echo more >>olddir/y && rm new.txt && $ok" '{"name":"e","snapshotId":"base2"}' \
		'"reviewDiffs":true'
	run_spec "$T_TMP/e.json"
	assert_eq 125 "$RC" "held for review ($OUT)"
	b=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "delete:new.txt modify:olddir/y" "$(py '" ".join(p["operation"]+":"+p["path"] for p in j["patches"])' <"$b")" \
		"only this run's changes"
	# The copy fallback starts from the same tree and gives the same bundle.
	spec "$T_TMP/c.json" r3 "cd $P && echo more >>olddir/y && rm new.txt && $ok" '{"name":"e","snapshotId":"base2"}' \
		'"reviewDiffs":true'
	CLOISTER_WORKSPACE_MODE=copy run_spec "$T_TMP/c.json"
	assert_eq 125 "$RC" "copy mode: held for review ($OUT)"
	cmp "$b" "$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")" || fail "copy mode's bundle differs from the overlay's"
	# baseRef: the hash of the snapshot's tree, as a workspace of a plain
	# copy of that tree names it.
	cp -a "$(snapdir)/base2/tree" "$T_TMP/equiv"
	WSR=(); is_root && WSR=(--host-root)
	clr run "${WSR[@]}" --workspace "$T_TMP/equiv" --diff-out "$T_TMP/eq.json" -- true
	assert_eq 0 "$RC" "reference run ($ERR)"
	assert_eq "$(py 'j["baseRef"]' <"$T_TMP/eq.json")" "$(py 'j["baseRef"]' <"$b")" "baseRef is the snapshot tree's"
}

t_symlink_in_the_upper_is_kept_as_a_link_never_followed() {
	setup
	echo host-secret-$$ >"$T_TMP/secret"
	mkdir -p "$T_TMP/hostdir"; echo host-file-$$ >"$T_TMP/hostdir/f"
	sticky_w1 "ln -s $T_TMP/secret evil && ln -s $T_TMP/hostdir evildir"
	clr workspace snapshot w1 --id links
	assert_eq 0 "$RC" "snapshot ($ERR)"
	tree=$(snapdir)/links/tree
	[ -L "$tree/evil" ] || fail "evil is not a symlink in the snapshot"
	assert_eq "$T_TMP/secret" "$(readlink "$tree/evil")" "link target"
	[ -L "$tree/evildir" ] || fail "evildir is not a symlink in the snapshot"
	! grep -rq "host-secret-$$\|host-file-$$" "$tree" || fail "host content was read into the snapshot"
}

t_special_file_in_the_upper_is_refused_and_leaves_nothing() {
	setup
	sticky_w1 "mkfifo pipe"
	clr workspace snapshot w1 --id fifo
	assert_eq 125 "$RC" "a fifo in the workspace"
	assert_contains "$ERR" "pipe is a special file"
	assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line"
	assert_eq "" "$(ls -A "$(snapdir)")" "nothing left in the store"
}

t_bad_ids_and_names_are_refused() {
	setup
	sticky_w1
	long=$(printf 'a%.0s' $(seq 65))
	for id in "" .hidden -dash a/b "a b" .. "$long" "x;y"; do
		clr workspace snapshot w1 --id "$id"
		assert_eq 125 "$RC" "id '$id'"
		assert_contains "$ERR" "snapshot id '$id'" "id '$id'"
		assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line for '$id'"
	done
	clr workspace snapshot w1 --id "$(printf 'a%.0s' $(seq 64))"
	assert_eq 0 "$RC" "64 characters is allowed ($ERR)"
	clr workspace snapshot nosuch
	assert_eq 125 "$RC" "unknown workspace"
	assert_contains "$ERR" "there is no sticky workspace nosuch"
	clr workspace snapshot ../x
	assert_eq 125 "$RC" "a name with a slash"
	clr workspace snapshot w1 --id dup
	assert_eq 0 "$RC" "first dup ($ERR)"
	clr workspace snapshot w1 --id dup
	assert_eq 125 "$RC" "an id that exists"
	assert_contains "$ERR" "snapshot dup exists already"
	clr workspace rm-snapshot ../dup
	assert_eq 125 "$RC" "rm of a bad id"
	clr workspace rm-snapshot nosuch
	assert_eq 125 "$RC" "rm of an unknown id"
	assert_eq "$(printf 'a%.0s' $(seq 64)) dup" "$(ls "$(snapdir)" | tr '\n' ' ' | sed 's/ $//')" "the store holds the two good ones only"
	# The spec: a bad id is INVALID_INPUT on the field, an unknown one too.
	spec "$T_TMP/e.json" r2 "$ok" '{"name":"e","snapshotId":"../dup"}'
	run_spec "$T_TMP/e.json"
	assert_eq 125 "$RC" "spec with a bad id"
	assert_eq "INVALID_INPUT workspace.snapshotId" "$(py 'j["code"]+" "+j["details"]["field"]' <<<"$ERR")" "bad id error"
	spec "$T_TMP/e.json" r3 "$ok" '{"name":"e","snapshotId":"nosuch"}'
	run_spec "$T_TMP/e.json"
	assert_eq 125 "$RC" "spec with an unknown id"
	assert_eq "INVALID_INPUT workspace.snapshotId" "$(py 'j["code"]+" "+j["details"]["field"]' <<<"$ERR")" "unknown id error"
	assert_contains "$(py 'j["message"]' <<<"$ERR")" 'Sandbox workspace snapshot "nosuch" does not exist'
	# rm-snapshot removes it, and a run can no longer name it.
	clr workspace rm-snapshot dup
	assert_eq 0 "$RC" "rm ($ERR)"
	[ ! -e "$(snapdir)/dup" ] || fail "dup still there"
}

# Each sandbox blocks on its own fifo in /gate until the test writes it.
t_busy_workspace_and_snapshot_in_use_are_refused() {
	setup
	sticky_w1
	clr workspace snapshot w1 --id held
	assert_eq 0 "$RC" "snapshot ($ERR)"
	local m; m=$(marker busy)
	mkfifo "$T_TMP/gate/go1" "$T_TMP/gate/go2"
	spec "$T_TMP/b.json" r2 ": >/gate/started; read x </gate/go1; : $m; $ok" '{"name":"w1","persistence":"sticky"}'
	"$CL" sandbox run --spec "$T_TMP/b.json" --json >"$T_TMP/b.out" 2>&1 &
	pid=$!
	spec "$T_TMP/c.json" r3 ": >/gate/started2; read x </gate/go2; : $m; $ok" '{"name":"e","snapshotId":"held"}'
	"$CL" sandbox run --spec "$T_TMP/c.json" --json >"$T_TMP/c.out" 2>&1 &
	pid2=$!
	wait_until test -e "$T_TMP/gate/started" -a -e "$T_TMP/gate/started2" ||
		fail "the runs did not start: $(cat "$T_TMP/b.out" "$T_TMP/c.out")"
	clr workspace snapshot w1 --id during
	assert_eq 125 "$RC" "snapshot of a workspace in use"
	assert_contains "$ERR" "sticky workspace w1 is in use by a running sandbox"
	clr workspace rm-snapshot held
	assert_eq 125 "$RC" "rm of a snapshot a run uses"
	assert_contains "$ERR" "workspace snapshot held is in use by a running sandbox"
	assert_eq "held" "$(ls -A "$(snapdir)")" "nothing made or removed"
	echo go >"$T_TMP/gate/go1"; echo go >"$T_TMP/gate/go2"
	wait "$pid" || fail "the sticky run failed: $(cat "$T_TMP/b.out")"
	wait "$pid2" || fail "the snapshot run failed: $(cat "$T_TMP/c.out")"
	assert_gone "$m"
	clr workspace snapshot w1 --id during
	assert_eq 0 "$RC" "once the run has ended ($ERR)"
	clr workspace rm-snapshot held
	assert_eq 0 "$RC" "rm once the run has ended ($ERR)"
}

# SIGKILL while the tree is being copied (seen: the temp dir has files):
# nothing is listed, the id is free, gc removes the rest. A machine fast
# enough to finish first is told apart (the snapshot exists) and the tree
# grows.
copying_or_done() {
	compgen -G "$(snapdir)/.tmp-*/tree/big/d*" >/dev/null || [ -e "$(snapdir)/killed" ]
}
t_killed_snapshot_leaves_no_half_snapshot() {
	setup
	sticky_w1
	local n=40 tries=0 done=""
	while [ $tries -lt 4 ] && [ -z "$done" ]; do
		tries=$((tries + 1))
		python3 - "$P/big" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for d in range(n):
    os.makedirs(f"{root}/d{d}", exist_ok=True)
    for f in range(250):
        with open(f"{root}/d{d}/f{f}", "w") as fh:
            fh.write("x" * 512)
PY
		"$CL" workspace snapshot w1 --id killed >/dev/null 2>&1 &
		pid=$!
		wait_until copying_or_done || fail "the snapshot never started copying"
		kill -KILL "$pid"; wait "$pid" 2>/dev/null
		if [ -e "$(snapdir)/killed" ]; then
			"$CL" workspace rm-snapshot killed; n=$((n * 4))   # finished first: more to copy
		else
			done=1
		fi
	done
	[ -n "$done" ] || fail "the snapshot always finished before the kill"
	clr workspace snapshots --json
	assert_eq "[]" "$OUT" "nothing listed"
	compgen -G "$(snapdir)/.tmp-*" >/dev/null || fail "no temp dir: the kill was not mid-copy"
	spec "$T_TMP/e.json" r2 "$ok" '{"name":"e","snapshotId":"killed"}'
	run_spec "$T_TMP/e.json"
	assert_eq 125 "$RC" "a run cannot use the half snapshot"
	assert_contains "$ERR" 'snapshot \"killed\" does not exist'
	clr gc
	assert_contains "$OUT" "removed unfinished workspace snapshot .tmp-"
	assert_eq "" "$(ls -A "$(snapdir)")" "gc removed the rest"
	clr workspace snapshot w1 --id killed
	assert_eq 0 "$RC" "the id is free ($ERR)"
}

t_sticky_seeded_from_a_snapshot_keeps_its_base() {
	setup
	sticky_w1
	clr workspace snapshot w1 --id seed
	assert_eq 0 "$RC" "snapshot ($ERR)"
	clr workspace snapshot w1 --id other
	spec "$T_TMP/s.json" r2 "cd $P && test \"\$(cat src/file.txt)\" = changed || exit 9; echo s2 >s2.txt; $ok" \
		'{"name":"w2","persistence":"sticky","snapshotId":"seed"}' '"reviewDiffs":true'
	run_spec "$T_TMP/s.json"
	assert_eq 125 "$RC" "held for review ($OUT)"
	b=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "add:s2.txt" "$(py '" ".join(p["operation"]+":"+p["path"] for p in j["patches"])' <"$b")" "seeded run's diff"
	# The seed can go: the sticky workspace has its own copy.
	clr workspace rm-snapshot seed
	assert_eq 0 "$RC" "rm seed ($ERR)"
	spec "$T_TMP/s.json" r3 "cd $P && test -e s2.txt && test \"\$(cat src/file.txt)\" = changed || exit 9; $ok" \
		'{"name":"w2","persistence":"sticky"}' '"reviewDiffs":true'
	run_spec "$T_TMP/s.json"
	assert_eq 125 "$RC" "second run, no snapshot named: goes on ($OUT $ERR)"
	assert_contains "$ERR" "require review approval"
	spec "$T_TMP/s.json" r4 "$ok" '{"name":"w2","persistence":"sticky","snapshotId":"other"}'
	run_spec "$T_TMP/s.json"
	assert_eq 125 "$RC" "another snapshot for a known sticky workspace"
	assert_contains "$ERR" "sticky workspace w2 was made from snapshot seed, not other"
	spec "$T_TMP/s.json" r5 "$ok" '{"name":"w1","persistence":"sticky","snapshotId":"other"}'
	run_spec "$T_TMP/s.json"
	assert_eq 125 "$RC" "a snapshot for a sticky workspace made from rootDir"
	assert_contains "$ERR" "sticky workspace w1 was made from its rootDir, not a snapshot"
	# A snapshot of the seeded one is its base plus its upper.
	clr workspace snapshot w2 --id of-w2
	assert_eq 0 "$RC" "snapshot of w2 ($ERR)"
	assert_eq "changed s2" "$(cat "$(snapdir)/of-w2/tree/src/file.txt") $(cat "$(snapdir)/of-w2/tree/s2.txt")" "w2's tree"
}

t_gc_keeps_snapshots_of_removed_sticky_workspaces() {
	setup
	spec "$T_TMP/w.json" r1 "echo a >$P/a.txt; $ok" '{"name":"idle","persistence":"sticky","idleTimeoutSecs":60}' \
		'"reviewDiffs":true'
	run_spec "$T_TMP/w.json"
	clr workspace snapshot idle --id keep
	assert_eq 0 "$RC" "snapshot ($ERR)"
	touch -d '1 hour ago' "$CLOISTER_STATE_DIR/workspaces/sticky-idle/idle"
	clr gc
	assert_contains "$OUT" "removed idle sticky workspace idle"
	assert_eq "a" "$(cat "$(snapdir)/keep/tree/a.txt")" "the snapshot stays"
	clr workspace snapshots --json
	assert_eq "keep" "$(py '" ".join(s["id"] for s in j)' <<<"$OUT")" "still listed"
}

# A sticky dir without its "root" record: its first run was killed while
# making it. Nothing to snapshot; the next run makes it again from scratch.
t_unfinished_sticky_is_refused_then_made_again() {
	setup
	mkdir -p "$CLOISTER_STATE_DIR/workspaces/sticky-half/upper"
	echo junk >"$CLOISTER_STATE_DIR/workspaces/sticky-half/upper/junk.txt"
	clr workspace snapshot half
	assert_eq 125 "$RC" "snapshot of an unfinished workspace"
	assert_contains "$ERR" "sticky workspace half was never completed"
	assert_eq "" "$(ls -A "$(snapdir)" 2>/dev/null)" "nothing made"
	spec "$T_TMP/h.json" r1 "test ! -e $P/junk.txt || exit 9; $ok" '{"name":"half","persistence":"sticky"}'
	run_spec "$T_TMP/h.json"
	assert_eq 0 "$RC" "the next run makes it again ($OUT $ERR)"
	assert_eq "$P" "$(cat "$CLOISTER_STATE_DIR/workspaces/sticky-half/root")" "recorded now"
}

# A file the sandbox made sparse (truncate: 256 MiB that take no space) is
# copied as data plus holes, by the snapshot (across filesystems) and by
# a sticky workspace seeded from it (within one), never written out.
t_sparse_file_stays_sparse() {
	setup
	sticky_w1 "truncate -s 256M sparse.bin && printf tail >>sparse.bin"
	clr workspace snapshot w1 --id sparse
	assert_eq 0 "$RC" "snapshot ($ERR)"
	f=$(snapdir)/sparse/tree/sparse.bin
	assert_eq "$((256 * 1024 * 1024 + 4)) tail" "$(stat -c %s "$f") $(tail -c 4 "$f")" "size and data"
	[ "$(stat -c %b "$f")" -lt 2048 ] || fail "the snapshot's copy takes $(stat -c %b "$f") blocks"
	spec "$T_TMP/s.json" r2 "$ok" '{"name":"w2","persistence":"sticky","snapshotId":"sparse"}'
	run_spec "$T_TMP/s.json"
	f=$CLOISTER_STATE_DIR/workspaces/sticky-w2/base/sparse.bin
	assert_eq "$((256 * 1024 * 1024 + 4)) tail" "$(stat -c %s "$f") $(tail -c 4 "$f")" "seeded base ($OUT $ERR)"
	[ "$(stat -c %b "$f")" -lt 2048 ] || fail "the seeded base's copy takes $(stat -c %b "$f") blocks"
}

# `cloister run --workspace DIR --snapshot ID` and `create ... --snapshot
# ID`: the snapshot's tree at DIR, the diff relative to it, DIR untouched;
# a bad or unknown id or a missing --workspace is refused and leaves
# nothing; a session holds its snapshot until rm.
t_run_and_create_start_from_a_snapshot() {
	local WSR=() ck
	setup
	sticky_w1
	clr workspace snapshot w1 --id base1; assert_eq 0 "$RC" "snapshot ($ERR)"
	# as in workspace.sh: root keeps host root, so the overlay is tested
	is_root && WSR=(--host-root)
	ck="test \"\$(cat $P/src/file.txt)\" = changed && test ! -e $P/gone.txt && test ! -e $P/olddir/x"
	clr run "${WSR[@]}" --workspace "$P" --snapshot base1 --diff-out "$T_TMP/d.json" -- \
		sh -c "$ck && echo more >>$P/kept.txt"
	assert_eq 0 "$RC" "run from the snapshot ($ERR)"
	assert_eq "kept.txt:modify" "$(py '" ".join(p["path"]+":"+p["operation"] for p in j["patches"])' <"$T_TMP/d.json")" \
		"the run's diff is relative to the snapshot"
	assert_eq "original same" "$(echo $(cat "$P/src/file.txt" "$P/kept.txt"))" "DIR untouched"
	for bad in nosuch 'a/b' ''; do
		clr run "${WSR[@]}" --workspace "$P" --snapshot "$bad" -- true
		assert_eq 125 "$RC" "--snapshot '$bad'"
		assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c .)" "one line for '$bad': $ERR"
	done
	assert_contains "$(clr run --workspace "$P" --snapshot nosuch -- true; echo "$ERR")" "no workspace snapshot nosuch"
	clr run --snapshot base1 -- true
	assert_eq 125 "$RC" "--snapshot without --workspace"
	assert_contains "$ERR" "--snapshot needs --workspace"
	assert_eq "sticky-w1" "$(ls -A "$CLOISTER_STATE_DIR/workspaces")" "state left by the refusals"
	# A session: every exec sees the snapshot; it is held until rm.
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	clr create "${WSR[@]}" --workspace "$P" --snapshot base1 --diff-out "$T_TMP/s.json"
	assert_eq 0 "$RC" "create from the snapshot ($ERR)"
	local sid=$OUT
	"$CL" exec "$sid" -- sh -c "$ck && echo n >$P/n.txt" || { "$CL" rm "$sid"; fail "exec in the session"; }
	clr workspace rm-snapshot base1
	assert_eq 125 "$RC" "rm-snapshot while a session holds it"
	clr rm "$sid"; assert_eq 0 "$RC" "rm ($ERR)"
	assert_eq "n.txt:add" "$(py '" ".join(p["path"]+":"+p["operation"] for p in j["patches"])' <"$T_TMP/s.json")" \
		"the session's diff is relative to the snapshot"
	clr workspace rm-snapshot base1; assert_eq 0 "$RC" "rm-snapshot after rm ($ERR)"
	assert_eq "sticky-w1" "$(ls -A "$CLOISTER_STATE_DIR/workspaces")" "state left"
}

run_tests
