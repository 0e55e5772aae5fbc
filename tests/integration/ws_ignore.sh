#!/bin/bash
# Workspace captures honour git's ignore rules of the base tree (issue 34
# item 4): .gitignore at every level with negation, .git/info/exclude, the
# caller's core.excludesFile; an ignored directory is not walked; the
# tree's hostile rule files (a fifo, a link, a repository config naming
# a fifo) neither hang the capture nor reach outside the tree.
. "$(dirname "$0")/../lib.sh"

WSR=()
is_root && WSR=(--host-root)
export CLOISTER_STATE_DIR

py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }
paths() { py '" ".join(p["path"] for p in j["patches"])' <"$1"; }

setup() {
	CLOISTER_STATE_DIR=$T_TMP/state
	W=$T_TMP/ws
	mkdir -p "$W/src" "$T_TMP/home"
	# The caller's git config is part of the rules: a clean one.
	export HOME=$T_TMP/home
	echo 'print(1)' >"$W/src/app.py"
}

# Runs script in W with --diff-out b.json, extra options first.
ws_run() {  # script [options...]
	local s=$1
	shift
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" "$@" --env W="$W" -- \
		sh -c "cd \"\$W\" && $s"
}

VENV='mkdir -p .venv/bin .venv/lib/python3/site-packages node_modules/.bin node_modules/left-pad &&
	echo x >.venv/bin/activate && ln -s /usr/bin/python3 .venv/bin/python &&
	echo y >.venv/lib/python3/site-packages/mod.py && echo z >node_modules/left-pad/index.js &&
	ln -s ../left-pad/index.js node_modules/.bin/left-pad && echo c >src/app.pyc &&
	echo "print(2)" >src/app.py && echo n >notes.txt'

t_gitignore_leaves_a_venv_and_node_modules_out() {
	setup
	printf '.venv/\nnode_modules/\n*.pyc\n' >"$W/.gitignore"
	# Control: without the rules every generated file is carried.
	ws_run "$VENV" --workspace-ignore none
	assert_eq 0 "$RC" "none ($ERR)"
	assert_eq ".venv/bin/activate .venv/bin/python .venv/lib/python3/site-packages/mod.py node_modules/.bin/left-pad node_modules/left-pad/index.js notes.txt src/app.py src/app.pyc" \
		"$(paths "$T_TMP/b.json")" "--workspace-ignore none carries everything"
	for mode in overlay copy; do
		CLOISTER_WORKSPACE_MODE=$mode ws_run "$VENV"
		assert_eq 0 "$RC" "$mode ($ERR)"
		assert_eq "notes.txt src/app.py" "$(paths "$T_TMP/b.json")" "$mode: the default is git's rules"
		CLOISTER_WORKSPACE_MODE=$mode ws_run "$VENV" --workspace-ignore git
		assert_eq "notes.txt src/app.py" "$(paths "$T_TMP/b.json")" "$mode: --workspace-ignore git"
	done
	clr run --workspace "$W" --workspace-ignore none --dry-run --json -- true
	assert_eq none "$(py 'j["workspace_ignore"]' <<<"$OUT")" "dry-run json"
	clr run --workspace "$W" --dry-run --json -- true
	assert_eq git "$(py 'j["workspace_ignore"]' <<<"$OUT")" "dry-run json default"
}

t_ignored_base_paths_are_not_in_baseref() {
	setup
	printf 'build/\n' >"$W/.gitignore"
	ws_run true
	ref1=$(py 'j["baseRef"]' <"$T_TMP/b.json")
	mkdir -p "$W/build" && echo o >"$W/build/out.o"
	ws_run true
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "$ref1" "$(py 'j["baseRef"]' <"$T_TMP/b.json")" "an ignored file does not change baseRef"
	ws_run true --workspace-ignore none
	[ "$ref1" != "$(py 'j["baseRef"]' <"$T_TMP/b.json")" ] || fail "none: baseRef should count build/out.o"
	# Deleting an ignored base file is no patch either.
	ws_run 'rm -rf build && echo d >src/app.py'
	assert_eq "src/app.py" "$(paths "$T_TMP/b.json")" "an ignored delete"
}

t_nested_gitignore_with_negation() {
	setup
	printf '*.log\n/only-top\n' >"$W/.gitignore"
	mkdir -p "$W/sub"
	printf '!keep.log\ngen/\n/anch\n' >"$W/sub/.gitignore"
	s='mkdir -p sub/deep sub/gen gen sub/x/anch && for p in a.log sub/x.log sub/keep.log sub/deep/keep.log sub/gen/f gen/f only-top sub/only-top sub/anch sub/x/anch/f; do echo v >$p; done'
	for mode in overlay copy; do
		CLOISTER_WORKSPACE_MODE=$mode ws_run "$s"
		assert_eq 0 "$RC" "$mode ($ERR)"
		assert_eq "gen/f sub/deep/keep.log sub/keep.log sub/only-top sub/x/anch/f" "$(paths "$T_TMP/b.json")" "$mode"
	done
	# git itself agrees on the sandbox's tree (a control on the rules).
	cp -a "$W" "$T_TMP/g" && (cd "$T_TMP/g" && sh -c "$s" && git init -q . &&
		git ls-files -o --exclude-standard | grep -v '^\.gitignore$\|^sub/.gitignore$\|^src/' | sort | tr '\n' ' ') >"$T_TMP/git.txt"
	assert_eq "gen/f sub/deep/keep.log sub/keep.log sub/only-top sub/x/anch/f " "$(cat "$T_TMP/git.txt")" "git's answer"
}

t_info_exclude_and_core_excludesfile() {
	setup
	mkdir -p "$W/.git/info"
	echo 'secret.txt' >"$W/.git/info/exclude"
	printf '[core]\n\texcludesFile = %s\n' "$T_TMP/home/ignore" >"$T_TMP/home/.gitconfig"
	echo '*.tmp' >"$T_TMP/home/ignore"
	ws_run 'echo s >secret.txt && echo t >x.tmp && echo o >other.txt && mkdir -p d && echo s >d/secret.txt'
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "other.txt" "$(paths "$T_TMP/b.json")" "info/exclude and core.excludesFile"
	# A .gitignore negation wins over info/exclude (git's order).
	echo '!d/secret.txt' >"$W/.gitignore"
	ws_run 'mkdir -p d && echo s >d/secret.txt && echo s >secret.txt'
	assert_eq "d/secret.txt" "$(paths "$T_TMP/b.json")" ".gitignore over info/exclude"
}

# The base has 2000 ignored files and an unreadable ignored directory; the
# sandbox deletes the first and fills another ignored one: neither is
# walked (an unreadable one would fail baseRef, 2000 deletes the patch limit).
t_an_ignored_dir_is_not_walked() {
	setup
	printf 'big/\ngen/\nlocked/\n' >"$W/.gitignore"
	mkdir -p "$W/big" "$W/locked/in"
	(cd "$W/big" && for i in $(seq 2000); do : >"f$i"; done)
	chmod 000 "$W/locked"
	ws_run 'rm -rf big && mkdir gen && (cd gen && for i in $(seq 1500); do : >"g$i"; done) && echo e >src/app.py'
	chmod 700 "$W/locked"
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "src/app.py" "$(paths "$T_TMP/b.json")" "only the edit"
}

# Rule files are hostile input: a fifo .gitignore, a .gitignore that links
# out of the tree, a repository config whose excludesFile and include.path
# are fifos. None hangs the capture; none adds a rule.
t_hostile_rule_files_neither_hang_nor_reach_out() {
	setup
	echo '*.o' >"$W/.gitignore"
	mkdir -p "$W/sub" "$W/other" "$W/.git/info"
	mkfifo "$W/sub/.gitignore" "$T_TMP/fifo"
	echo '*.txt' >"$T_TMP/outside"
	ln -s "$T_TMP/outside" "$W/other/.gitignore"
	mkfifo "$W/.git/info/exclude"
	printf '[core]\n\texcludesFile = %s\n[include]\n\tpath = %s\n' "$T_TMP/fifo" "$T_TMP/fifo" >"$W/.git/config"
	echo '*.txt' >"$T_TMP/ex"
	local o e
	o=$T_TMP/o e=$T_TMP/e
	timeout 60 "$CL" run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --env W="$W" -- \
		sh -c 'cd "$W" && echo a >sub/a.txt && echo b >other/b.txt && echo o >x.o' >"$o" 2>"$e"
	RC=$?
	assert_eq 0 "$RC" "no hang ($(cat "$e"))"
	assert_eq "other/b.txt sub/a.txt" "$(paths "$T_TMP/b.json")" "only the top .gitignore counts"
}

t_spec_workspace_ignore() {
	CLOISTER_STATE_DIR=$T_TMP/state
	export HOME=$T_TMP
	mkdir -p "$T_TMP/req" "$T_TMP/proj/src"
	echo '*.log' >"$T_TMP/proj/.gitignore"
	spec() {
		python3 - "$T_TMP" "$1" "$2" >"$T_TMP/spec.json" <<'PY'
import json, sys
tmp, ign, run = sys.argv[1:4]
w = {"name": "w"}
if ign:
    w["ignore"] = json.loads(ign)
cmd = "echo e >%s/proj/src/f.txt && echo l >%s/proj/a.log && echo '{\"status\":\"finished\"}'" % (tmp, tmp)
print(json.dumps({"runId": run, "sandboxId": "s1", "rootDir": tmp + "/proj", "command": cmd,
                  "requestBundlePath": tmp + "/req", "workspace": w}))
PY
	}
	spec '' r1
	clr sandbox run --spec "$T_TMP/spec.json" --json
	# Review by default: the run stops with the bundle kept.
	kept=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "src/f.txt" "$(paths "$kept")" "default git"
	spec '"none"' r2
	clr sandbox run --spec "$T_TMP/spec.json" --json
	kept=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "a.log src/f.txt" "$(paths "$kept")" "ignore none"
	spec '"maybe"' r3
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 125 "$RC" "bad value"
	assert_eq "workspace.ignore" "$(py 'j["details"]["field"]' <<<"$ERR")" field
}

t_session_workspace_ignore() {
	setup
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	echo '*.log' >"$W/.gitignore"
	for ign in git none; do
		clr create "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/s-$ign.json" --workspace-ignore $ign
		assert_eq 0 "$RC" "create $ign ($ERR)"
		SID=$OUT
		trap '"$CL" rm "$SID" >/dev/null 2>&1' EXIT
		"$CL" exec "$SID" --env W="$W" -- sh -c 'echo l >"$W/a.log" && echo t >"$W/t.txt"' || fail "exec $ign"
		clr rm "$SID"
		assert_eq 0 "$RC" "rm $ign ($ERR)"
		trap - EXIT
	done
	assert_eq "t.txt" "$(paths "$T_TMP/s-git.json")" "session, git"
	assert_eq "a.log t.txt" "$(paths "$T_TMP/s-none.json")" "session, none"
}

# A failed capture's kept dir records the choice for `diff capture`.
t_diff_capture_of_kept_changes_keeps_the_choice() {
	setup
	echo '*.log' >"$W/.gitignore"
	for ign in git none; do
		clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/no/dir/b.json" --workspace-ignore $ign \
			--env W="$W" -- sh -c 'echo l >"$W/a.log" && echo t >"$W/t.txt"'
		assert_eq 125 "$RC" "$ign: unwritable --diff-out ($ERR)"
		[[ $ERR =~ "changes are kept in "([^ ]+)" " ]] || fail "$ign: no kept line: $ERR"
		clr diff capture "${BASH_REMATCH[1]}" "$T_TMP/k-$ign.json"
		assert_eq 0 "$RC" "$ign: diff capture ($ERR)"
	done
	assert_eq "t.txt" "$(paths "$T_TMP/k-git.json")" "kept, git"
	assert_eq "a.log t.txt" "$(paths "$T_TMP/k-none.json")" "kept, none"
}

t_bad_option_value_is_one_line() {
	setup
	clr run --workspace "$W" --workspace-ignore maybe -- true
	assert_eq 125 "$RC" "exit"
	assert_contains "$ERR" "--workspace-ignore 'maybe': expected git"
	assert_eq 1 "$(wc -l <<<"$ERR")" "one line: $ERR"
	clr run --workspace-ignore none -- true
	assert_eq 125 "$RC" "without --workspace"
	assert_contains "$ERR" "--workspace-ignore needs --workspace DIR"
}

run_tests
