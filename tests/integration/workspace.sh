#!/bin/bash
# `cloister run --workspace DIR --diff-out FILE`, `cloister diff apply` and
# `diff show`: every kind of change captured, apply reproducing the
# sandbox's final tree byte for byte, the host DIR never written, state
# removed, conflicts and escaping paths refused with nothing written.
. "$(dirname "$0")/../lib.sh"

# Root's default sandbox identity gets the copy, not the overlay
# (docs/workspaces.md): as root the suite keeps host root so that the
# overlay is what it tests; root_default_identity tests the copy.
WSR=()
is_root && WSR=(--host-root)
export CLOISTER_STATE_DIR

py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }
# A digest of a tree: every dir, file (exec bit, sha256) and symlink.
digest() {
	python3 - "$1" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
for dp, dns, fns in sorted(os.walk(root)):
    dns.sort()
    rel = os.path.relpath(dp, root)
    print("d", rel)
    for f in sorted(fns):
        p = os.path.join(dp, f)
        if os.path.islink(p):
            print("l", os.path.join(rel, f), os.readlink(p))
        else:
            x = os.stat(p).st_mode & 0o100
            print("f", os.path.join(rel, f), bool(x), hashlib.sha256(open(p, "rb").read()).hexdigest())
PY
}
# A base tree with text, binary, empty, executable and deep files.
make_base() {  # dir
	mkdir -p "$1/src/deep/er/still" "$1/gone/sub" "$1/replaced" "$1/keep"
	printf 'line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\n' >"$1/src/main.c"
	printf 'no newline at end' >"$1/src/nonl.txt"
	printf '\x00\x01\x02binary' >"$1/blob.bin"
	: >"$1/empty"
	printf '#!/bin/sh\necho hi\n' >"$1/run.sh"
	echo deep >"$1/src/deep/er/still/file.txt"
	echo a >"$1/gone/a"; echo b >"$1/gone/sub/b"
	echo old >"$1/replaced/old.txt"
	echo k >"$1/keep/k.txt"
	echo torename >"$1/before.txt"
	ln -s src/main.c "$1/tolink"
}
# What the sandbox does: one of every kind of change.
CHANGES='cd "$W" &&
	sed -i "s/line4/LINE4/" src/main.c && echo line9 >>src/main.c &&
	printf "no newline, changed" >src/nonl.txt &&
	printf "\000\377new binary" >blob.bin && printf "\000\001" >new.bin &&
	: >new-empty && echo now-text >>empty &&
	chmod +x run.sh && echo fresh >src/deep/er/still/new.txt &&
	mkdir -p a/b/c/d && echo deepadd >a/b/c/d/e.txt &&
	rm -rf gone && rm -rf replaced && mkdir replaced && echo new >replaced/new.txt &&
	mv before.txt after.txt && rm keep/k.txt &&
	rm tolink && echo now-a-file >tolink'

setup() {
	CLOISTER_STATE_DIR=$T_TMP/state
	W=$T_TMP/ws
	make_base "$W"
	mkdir -p "$T_TMP/out"
}
sandbox_changes() {  # extra command after the changes
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --rw "$T_TMP/out" \
		--env W="$W" -- sh -c "$CHANGES && ${1:-true}"
}

t_every_kind_of_change_is_captured() {
	setup
	sandbox_changes
	assert_eq 0 "$RC" "run ($ERR)"
	ops=$(py '" ".join(p["operation"][0] + ":" + p["path"] for p in j["patches"])' <"$T_TMP/b.json")
	assert_eq "a:a/b/c/d/e.txt a:after.txt d:before.txt m:blob.bin m:empty d:gone/a d:gone/sub/b d:keep/k.txt a:new-empty a:new.bin a:replaced/new.txt d:replaced/old.txt m:run.sh a:src/deep/er/still/new.txt m:src/main.c m:src/nonl.txt d:tolink a:tolink" "$ops" "patches in path order"
	assert_eq 1 "$(py 'j["seq"]' <"$T_TMP/b.json")" seq
	assert_contains "$(py 'j["baseRef"]' <"$T_TMP/b.json")" "sha256:"
	diff=$(py '[p for p in j["patches"] if p["path"]=="run.sh"][0]["diff"]' <"$T_TMP/b.json")
	assert_contains "$diff" $'old mode 100644\nnew mode 100755' "exec bit"
	assert_eq "AP9uZXcgYmluYXJ5" "$(py '[p for p in j["patches"] if p["path"]=="blob.bin"][0]["binaryContent"]' <"$T_TMP/b.json")" "binary as base64"
	assert_eq "False" "$(py '"binaryContent" in [p for p in j["patches"] if p["path"]=="src/main.c"][0]' <"$T_TMP/b.json")" "no base64 for text"
	diff=$(py '[p for p in j["patches"] if p["path"]=="src/main.c"][0]["diff"]' <"$T_TMP/b.json")
	assert_contains "$diff" $'-line4\n+LINE4' "unified hunk"
	assert_contains "$diff" $'--- a/src/main.c\n+++ b/src/main.c' "git-style names"
	diff=$(py '[p for p in j["patches"] if p["path"]=="src/nonl.txt"][0]["diff"]' <"$T_TMP/b.json")
	assert_contains "$diff" '\ No newline at end of file' "no-newline marker"
	diff=$(py '[p for p in j["patches"] if p["path"]=="new-empty"][0]["diff"]' <"$T_TMP/b.json")
	assert_contains "$diff" $'new file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391' "empty add"
}

t_the_same_changes_give_the_same_bundle() {
	setup
	cp -a "$W" "$T_TMP/base"
	sandbox_changes
	assert_eq 0 "$RC" "first run ($ERR)"
	mv "$T_TMP/b.json" "$T_TMP/first.json"
	sandbox_changes
	assert_eq 0 "$RC" "second run ($ERR)"
	cmp "$T_TMP/first.json" "$T_TMP/b.json" || fail "two runs of the same change differ"
}

t_host_dir_untouched_and_state_removed() {
	setup
	before=$(digest "$W")
	sandbox_changes 'test "$(cat src/deep/er/still/new.txt)" = fresh'
	assert_eq 0 "$RC" "run sees its own changes ($ERR)"
	assert_eq "$before" "$(digest "$W")" "host DIR after the run"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state left behind"
	# A failing command and a failing setup leave nothing either.
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/c.json" -- sh -c 'echo x >"$0/n"; exit 3' "$W"
	assert_eq 3 "$RC" "command's code ($ERR)"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "state after a failing command"
	clr run "${WSR[@]}" --workspace "$W" -- /nonexistent/cmd
	assert_eq 127 "$RC" "not found ($ERR)"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "state after exec failure"
	clr run "${WSR[@]}" --workspace "$T_TMP/missing" --diff-out "$T_TMP/d.json" -- true
	assert_eq 125 "$RC" "missing DIR"
	assert_contains "$ERR" "--workspace $T_TMP/missing"
	[ ! -e "$T_TMP/d.json" ] || fail "bundle written for a failed setup"
	assert_eq "$before" "$(digest "$W")" "host DIR at the end"
}

t_apply_reproduces_the_final_tree_byte_for_byte() {
	setup
	cp -a "$W" "$T_TMP/target"
	# The sandbox's own final tree, copied out by the same run.
	sandbox_changes "cp -a \"\$W/.\" $T_TMP/out/"
	assert_eq 0 "$RC" "run ($ERR)"
	clr diff apply "$T_TMP/b.json" "$T_TMP/target" --check
	assert_eq 0 "$RC" "check ($ERR)"
	assert_eq "$(digest "$W")" "$(digest "$T_TMP/target")" "--check wrote something"
	clr diff apply "$T_TMP/b.json" "$T_TMP/target"
	assert_eq 0 "$RC" "apply ($ERR)"
	assert_contains "$OUT" "applied 18 patches"
	# An empty dir is not carried by a bundle (git's rule): gone/ and
	# keep/ are removed by apply, and so compared without empty dirs.
	find "$T_TMP/out" -type d -empty -delete
	assert_eq "$(digest "$T_TMP/out")" "$(digest "$T_TMP/target")" "target after apply vs the sandbox's tree"
	assert_eq "" "$(ls -d "$T_TMP"/target/.cloister-apply-* 2>/dev/null)" "staging dir left"
}

t_git_apply_accepts_the_text_patches() {
	setup
	cp -a "$W" "$T_TMP/target"
	sandbox_changes
	assert_eq 0 "$RC" "run ($ERR)"
	py '"".join(p["diff"] for p in j["patches"] if "binaryContent" not in p and "Binary" not in p["diff"])' \
		<"$T_TMP/b.json" >"$T_TMP/text.patch"
	(cd "$T_TMP/target" && git apply --check "$T_TMP/text.patch") 2>"$T_TMP/git.err" ||
		fail "git apply rejects the bundle's diffs: $(cat "$T_TMP/git.err")"
}

t_conflicts_name_each_path_and_write_nothing() {
	setup
	cp -a "$W" "$T_TMP/target"
	sandbox_changes
	assert_eq 0 "$RC" "run ($ERR)"
	echo changed-by-human >>"$T_TMP/target/src/main.c"
	echo here-first >"$T_TMP/target/after.txt"
	rm "$T_TMP/target/keep/k.txt"
	before=$(digest "$T_TMP/target")
	clr diff apply "$T_TMP/b.json" "$T_TMP/target"
	assert_eq 1 "$RC" "conflict exit ($ERR)"
	assert_contains "$ERR" "conflict: src/main.c: changed since the bundle's base"
	assert_contains "$ERR" "conflict: after.txt: already exists in the target"
	assert_contains "$ERR" "conflict: keep/k.txt: missing in the target"
	assert_contains "$ERR" "nothing was written"
	assert_eq "$before" "$(digest "$T_TMP/target")" "target after a refused apply"
	clr diff apply "$T_TMP/b.json" "$T_TMP/target" --check
	assert_eq 1 "$RC" "--check reports the conflicts too"
}

# A bundle with one patch adding PATH (text "x").
bundle_with() {  # path
	python3 - "$1" >"$T_TMP/evil.json" <<'PY'
import json, sys
p = sys.argv[1]
d = ("diff --git a/%s b/%s\nnew file mode 100644\n"
     "index 0000000000000000000000000000000000000000..587be6b4c3f93f93c489c0111bba5596147a26cb\n"
     "--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+x\n") % (p, p, p)
print(json.dumps({"seq": 1, "baseRef": "sha256:0", "patches": [{"path": p, "operation": "add", "diff": d}]}))
PY
}

t_escaping_paths_are_refused() {
	mkdir -p "$T_TMP/target" "$T_TMP/outside"
	ln -s "$T_TMP/outside" "$T_TMP/target/link"
	bundle_with "ok.txt"
	clr diff apply "$T_TMP/evil.json" "$T_TMP/target" --check
	assert_eq 0 "$RC" "a good bundle_with passes ($ERR)"
	for p in "../x" "/abs/x" "a/../../x" "link/x"; do
		bundle_with "$p"
		clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
		assert_eq 125 "$RC" "apply of $p ($ERR)"
		assert_contains "$ERR" "TOOL_PATH_ESCAPE" "$p"
	done
	for p in "a//b" "./x" "a/"; do
		bundle_with "$p"
		clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
		assert_eq 125 "$RC" "apply of $p ($ERR)"
		assert_contains "$ERR" "TOOL_PATH_INVALID" "$p"
	done
	assert_eq "" "$(ls -A "$T_TMP/outside")" "written outside the target"
	assert_eq "link" "$(ls -A "$T_TMP/target")" "written into the target"
}

t_damaged_bundles_are_refused() {
	mkdir -p "$T_TMP/target"
	bundle_with "f.txt"
	sed -i 's/+x/+y/' "$T_TMP/evil.json"
	clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
	assert_eq 125 "$RC" "content not matching its blob id ($ERR)"
	assert_contains "$ERR" "does not match the blob id"
	echo '{"seq":1}' >"$T_TMP/bad.json"
	clr diff apply "$T_TMP/bad.json" "$T_TMP/target"
	assert_eq 125 "$RC" "bad shape"
	assert_contains "$ERR" "needs seq (integer), baseRef (string) and patches (array)"
	assert_eq "" "$(ls -A "$T_TMP/target")" "written into the target"
}

t_symlink_made_in_the_workspace_fails_the_capture() {
	setup
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- ln -s /etc/passwd "$W/pw"
	assert_eq 125 "$RC" "capture with a symlink ($ERR)"
	assert_contains "$ERR" "workspace path pw is a symlink the sandbox made"
	[ ! -e "$T_TMP/b.json" ] || fail "a partial bundle was written"
	[[ $(ls -A "$T_TMP/state/workspaces") == kept-* ]] || fail "the work was not kept"
}

# Fifos, sockets and device nodes have no content a patch could carry
# (git skips them too): they are left out, each named once on stderr and
# in the status, and the rest of the run's work is captured.
t_special_files_are_skipped_and_the_rest_captured() {
	setup
	mkfifo "$W/base.fifo"
	cp -a "$W" "$T_TMP/target"
	for mode in overlay copy; do
		rm -f "$T_TMP/b.json" "$T_TMP/st.json"
		CLOISTER_WORKSPACE_MODE=$mode clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" \
			--json-status "$T_TMP/st.json" --env W="$W" -- sh -c 'cd "$W" && echo edited >>src/main.c &&
			mkfifo made.fifo && mkdir -p run && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"run/dev.sock\")" &&
			{ test ! -p base.fifo || chmod 600 base.fifo; }'
		assert_eq 0 "$RC" "$mode: run ($ERR)"
		assert_eq "src/main.c" "$(py '" ".join(p["path"] for p in j["patches"])' <"$T_TMP/b.json")" "$mode: patches"
		assert_eq 1 "$(grep -c 'made.fifo' <<<"$ERR")" "$mode: made.fifo named once: $ERR"
		assert_contains "$ERR" "left run/dev.sock out of the diff: a socket" "$mode"
		assert_not_contains "$ERR" "base.fifo" "$mode: a base fifo is not the sandbox's"
		assert_eq "made.fifo:fifo run/dev.sock:socket" \
			"$(py '" ".join(e["path"] + ":" + e["type"] for e in j["skipped"])' <"$T_TMP/st.json")" "$mode: status"
	done
	clr diff apply "$T_TMP/b.json" "$T_TMP/target"
	assert_eq 0 "$RC" "apply ($ERR)"
	assert_contains "$(cat "$T_TMP/target/src/main.c")" "edited"
	# No status "skipped" when nothing was.
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --json-status "$T_TMP/st.json" -- true
	assert_eq "False" "$(py '"skipped" in j' <"$T_TMP/st.json")" "no skipped key"
}

t_spec_skipped_special_files_are_an_event() {
	CLOISTER_STATE_DIR=$T_TMP/state
	spec_ws "echo changed >$T_TMP/proj/src/file.txt && mkfifo $T_TMP/proj/f && $ok" '"autoAcceptDiffs":true'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "accepted ($ERR)"
	assert_eq "src/file.txt" "$(py '" ".join(p["path"] for p in j["diffBundle"]["patches"])' <<<"$OUT")" patches
	ev=$("$CL" events r1 --root "$T_TMP/proj" | python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "SandboxWorkspaceSkipped": print(json.dumps(e["skipped"]))')
	assert_contains "$ev" '"path": "f", "type": "fifo"'
	[ -p "$T_TMP/proj/f" ] && fail "the fifo was applied to rootDir"
	assert_eq "changed" "$(cat "$T_TMP/proj/src/file.txt")" applied
}

# A capture that fails loses nothing: the run dir becomes kept-*, named
# on one line with the command that captures it again; gc leaves it for
# 7 days.
t_failed_capture_keeps_the_changes_for_diff_capture() {
	setup
	sandbox_changes
	assert_eq 0 "$RC" "reference run ($ERR)"
	mv "$T_TMP/b.json" "$T_TMP/want.json"
	for mode in overlay copy; do
		CLOISTER_WORKSPACE_MODE=$mode clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/no/such/dir/b.json" \
			--env W="$W" -- sh -c "$CHANGES"
		assert_eq 125 "$RC" "$mode: unwritable --diff-out ($ERR)"
		[[ $ERR =~ "changes are kept in "([^ ]+)" (\`cloister gc\` removes them after 7 days); \`cloister diff capture "([^ ]+)" $T_TMP/no/such/dir/b.json\` captures them again" ]] ||
			fail "$mode: no kept line: $ERR"
		kept=${BASH_REMATCH[1]}
		assert_eq "$kept" "${BASH_REMATCH[2]}" "$mode: the command names the kept dir"
		assert_eq "$T_TMP/state/workspaces/kept-" "${kept%kept-*}kept-" "$mode: under the state dir"
		clr diff capture "$kept" "$T_TMP/again.json"
		assert_eq 0 "$RC" "$mode: diff capture ($ERR)"
		cmp "$T_TMP/want.json" "$T_TMP/again.json" || fail "$mode: the recaptured bundle differs"
		clr gc
		[ -d "$kept" ] || fail "$mode: gc removed a fresh kept dir"
		touch -d '8 days ago' "$kept/kept-lower"
		clr gc
		assert_contains "$OUT" "removed kept (failed capture) workspace ${kept##*/}" "$mode"
		[ ! -e "$kept" ] || fail "$mode: an old kept dir survived gc"
	done
	# Over the limit: kept as well.
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- sh -c 'cd "$0" && for i in $(seq 1001); do : >f$i; done' "$W"
	assert_eq 125 "$RC" "over the limit"
	assert_contains "$ERR" "changes are kept in $T_TMP/state/workspaces/kept-"
	assert_eq 1 "$(ls "$T_TMP/state/workspaces/kept-"*/upper | grep -c '^f1001$')" "the 1001st file is kept"
	clr diff capture "$T_TMP/nowhere" "$T_TMP/x.json"
	assert_eq 125 "$RC" "not a kept dir"
}

t_spec_failed_capture_keeps_the_changes() {
	CLOISTER_STATE_DIR=$T_TMP/state
	spec_ws "cd $T_TMP/proj && for i in \$(seq 1001); do : >f\$i; done && $ok" '"autoAcceptDiffs":true'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 1 "$RC" "over the limit ($OUT)"
	kept=$(py 'j["details"]["keptChangesPath"]' <<<"$ERR")
	assert_eq "cloister diff capture $kept FILE" "$(py 'j["details"]["recaptureCommand"]' <<<"$ERR")" command
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "they are kept in $kept"
	[ -e "$kept/upper/f1001" ] || fail "the changes are not in $kept"
	[ ! -e "$T_TMP/proj/f1" ] || fail "rootDir written"
	clr diff capture "$kept" "$T_TMP/again.json"
	assert_eq 125 "$RC" "still over the limit"
	assert_contains "$ERR" "more than 1000"
}

t_over_the_patch_limit_fails_with_nothing_written() {
	setup
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- sh -c 'cd "$0" && for i in $(seq 1001); do : >f$i; done' "$W"
	assert_eq 125 "$RC" "over the limit ($ERR)"
	assert_contains "$ERR" "1000"
	[ ! -e "$T_TMP/b.json" ] || fail "a partial bundle was written"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- sh -c 'cd "$0" && for i in $(seq 999); do : >f$i; done' "$W"
	assert_eq 0 "$RC" "under the limit ($ERR)"
	assert_eq 999 "$(py 'len(j["patches"])' <"$T_TMP/b.json")" "patches"
}

t_diff_show_prints_git_diff_and_stat() {
	setup
	sandbox_changes
	assert_eq 0 "$RC" "run ($ERR)"
	clr diff show "$T_TMP/b.json"
	assert_eq 0 "$RC" "show ($ERR)"
	assert_contains "$OUT" $'diff --git a/src/main.c b/src/main.c'
	assert_contains "$OUT" 'Binary files a/blob.bin and b/blob.bin differ'
	clr diff show "$T_TMP/b.json" --stat
	[[ $OUT =~ " src/main.c "+"| 3 ++-" ]] || fail "stat line of src/main.c: $OUT"
	[[ $OUT =~ " new.bin "+"| Bin 2 bytes" ]] || fail "stat line of new.bin: $OUT"
	assert_contains "$OUT" "18 files changed"
}

t_bwrap_front_end_has_the_workspace_extension() {
	setup
	before=$(digest "$W")
	clr bwrap --ro-bind / / --dev /dev --unshare-all --die-with-parent --workspace "$W" --diff-out "$T_TMP/b.json" \
		-- sh -c "echo made-in-bwrap >$W/bw.txt && rm $W/keep/k.txt"
	assert_eq 0 "$RC" "bwrap run ($ERR)"
	assert_eq "a:bw.txt d:keep/k.txt" "$(py '" ".join(p["operation"][0] + ":" + p["path"] for p in j["patches"])' <"$T_TMP/b.json")" "bwrap bundle"
	assert_eq "$before" "$(digest "$W")" "host DIR after bwrap"
	clr bwrap --ro-bind / / --diff-out "$T_TMP/x.json" -- true
	assert_eq 1 "$RC" "--diff-out alone"
	assert_contains "$ERR" "--diff-out needs --workspace DIR"
}

ref_base() {  # dir: baseRef as docs/workspaces.md defines it
	python3 - "$1" <<'PY'
import hashlib, os, sys
def blob(b): return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()
out = b""
def walk(d, rel):
    global out
    for n in sorted(os.listdir(d), key=os.fsencode):
        if n.lower() == ".git": continue
        p, r = os.path.join(d, n), (rel + "/" + n if rel else n)
        if os.path.islink(p):
            out += b"120000 %s\0%s\n" % (r.encode(), blob(os.fsencode(os.readlink(p))).encode())
        elif os.path.isdir(p):
            walk(p, r)
        elif os.path.isfile(p):
            m = b"100755" if os.stat(p).st_mode & 0o100 else b"100644"
            out += b"%s %s\0%s\n" % (m, r.encode(), blob(open(p, "rb").read()).encode())
walk(sys.argv[1], "")
print("sha256:" + hashlib.sha256(out).hexdigest())
PY
}

t_base_ref_is_the_documented_tree_hash() {
	setup
	mkdir -p "$W/.git/objects" "$W/sub/.GIT"; echo ignored >"$W/.git/objects/x"; echo ignored >"$W/sub/.GIT/y"
	head -c 3000000 /dev/urandom >"$W/big.bin"   # hashed streaming (over 1 MiB)
	ln -s src/main.c "$W/link"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- true
	assert_eq 0 "$RC" "run ($ERR)"
	want=$(ref_base "$W")
	assert_eq "$want" "$(py 'j["baseRef"]' <"$T_TMP/b.json")" baseRef
}

# The blob id cache trusts only files unchanged for 2 s (a later change in
# the same clock tick could keep the same stat): this test has to let its
# base age that long, it orders nothing.
t_base_ref_cache_sees_a_same_size_same_mtime_change() {
	setup
	sleep 3
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b1.json" -- true
	assert_eq 0 "$RC" "first ($ERR)"
	[ -n "$(ls -A "$T_TMP/state/oidcache")" ] || fail "no blob id cache written"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b2.json" -- true
	assert_eq "$(py 'j["baseRef"]' <"$T_TMP/b1.json")" "$(py 'j["baseRef"]' <"$T_TMP/b2.json")" "cached baseRef"
	# Same inode, same size, mtime put back: only the ctime says it changed.
	cp -p "$W/src/main.c" "$T_TMP/orig"
	printf LINE1 | dd of="$W/src/main.c" conv=notrunc status=none; touch -r "$T_TMP/orig" "$W/src/main.c"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b3.json" -- true
	assert_eq "$(ref_base "$W")" "$(py 'j["baseRef"]' <"$T_TMP/b3.json")" "baseRef after the change"
	# A damaged cache is ignored, not trusted.
	for f in "$T_TMP"/state/oidcache/*; do printf 'garbage' >"$f"; done
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b4.json" -- true
	assert_eq "$(ref_base "$W")" "$(py 'j["baseRef"]' <"$T_TMP/b4.json")" "baseRef with a damaged cache"
}

t_git_metadata_is_never_carried() {
	setup
	mkdir -p "$W/.git/hooks"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- sh -c "echo evil >$W/.git/hooks/pre-commit && mkdir -p $W/sub/.Git && echo x >$W/sub/.Git/config && echo ok >$W/ok.txt"
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "ok.txt" "$(py '" ".join(p["path"] for p in j["patches"])' <"$T_TMP/b.json")" "patches"
	mkdir -p "$T_TMP/target"
	for p in ".git/config" "sub/.GIT/hooks/x"; do
		bundle_with "$p"
		clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
		assert_eq 125 "$RC" "apply of $p ($ERR)"
		assert_contains "$ERR" "TOOL_PATH_ESCAPE: patch path $p is inside a .git directory"
	done
	assert_eq "" "$(ls -A "$T_TMP/target")" "written into the target"
}

t_control_characters_in_names_are_refused() {
	setup
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" -- sh -c "printf x >\"$W/src/a\$(printf '\\nb')\""
	assert_eq 125 "$RC" "capture ($ERR)"
	assert_contains "$ERR" "file name holding control characters"
	[ ! -e "$T_TMP/b.json" ] || fail "bundle written"
	mkdir -p "$T_TMP/target"
	bundle_with $'a\nb'
	clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
	assert_eq 125 "$RC" "apply ($ERR)"
	assert_contains "$ERR" "TOOL_PATH_INVALID: patch 0: path has a control character"
}

t_state_dir_inside_the_workspace_is_refused_clearly() {
	setup
	CLOISTER_STATE_DIR=$W/.state
	clr run "${WSR[@]}" --workspace "$W" -- true
	assert_eq 125 "$RC"
	assert_contains "$ERR" "--workspace $W contains cloister's state directory $W/.state/workspaces; set CLOISTER_STATE_DIR"
	[ ! -e "$W/.state" ] || fail "the state dir was made inside DIR"
	# Through a symlink too.
	ln -s "$W" "$T_TMP/alias"
	CLOISTER_STATE_DIR=$T_TMP/alias/.s2
	clr run "${WSR[@]}" --workspace "$W" -- true
	assert_eq 125 "$RC" "state dir through a symlink"
	assert_contains "$ERR" "contains cloister's state directory $W/.s2/workspaces"
	[ ! -e "$W/.s2" ] || fail "the state dir was made inside DIR through the link"
	# A state dir reached through a symlink elsewhere is fine.
	mkdir -p "$T_TMP/real-state"; ln -s "$T_TMP/real-state" "$T_TMP/state-link"
	CLOISTER_STATE_DIR=$T_TMP/state-link/s
	clr run "${WSR[@]}" --workspace "$W" -- true
	assert_eq 0 "$RC" "state through a symlink outside DIR ($ERR)"
	assert_eq "" "$(ls -A "$T_TMP/real-state/s/workspaces")" "state left"
}

t_copy_fallback_gives_the_same_bundle() {
	setup
	ln -s src/main.c "$W/kept-link"
	before=$(digest "$W")
	CLOISTER_WORKSPACE_MODE=overlay sandbox_changes
	assert_eq 0 "$RC" "overlay run ($ERR)"
	mv "$T_TMP/b.json" "$T_TMP/overlay.json"
	CLOISTER_WORKSPACE_MODE=copy sandbox_changes 'test -L kept-link && test "$(cat src/deep/er/still/new.txt)" = fresh'
	assert_eq 0 "$RC" "copy run ($ERR)"
	cmp "$T_TMP/overlay.json" "$T_TMP/b.json" || fail "copy mode's bundle differs from the overlay's"
	assert_eq "$before" "$(digest "$W")" "host DIR after the copy run"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "state left by the copy run"
	CLOISTER_WORKSPACE_MODE=copy clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/c.json" -- ln -s /etc/passwd "$W/pw"
	assert_eq 125 "$RC" "copy mode: a new symlink ($ERR)"
	assert_contains "$ERR" "workspace path pw is a symlink the sandbox made"
}

t_diff_out_needs_workspace() {
	clr run --diff-out "$T_TMP/x.json" -- true
	assert_eq 125 "$RC"
	assert_contains "$ERR" "--diff-out needs --workspace DIR"
}

# Spec mode: rootDir with a workspace, the command changes it.
spec_ws() {  # command [extra-json-members]
	mkdir -p "$T_TMP/req" "$T_TMP/proj/src"
	echo original >"$T_TMP/proj/src/file.txt"
	python3 - "$T_TMP" "$1" "${2:-}" >"$T_TMP/spec.json" <<'PY'
import json, sys
tmp, cmd, extra = sys.argv[1:4]
s = {"runId": "r1", "sandboxId": "s1", "rootDir": tmp + "/proj", "command": cmd,
     "requestBundlePath": tmp + "/req", "workspace": {"name": "w"}}
if extra:
    s.update(json.loads("{" + extra + "}"))
print(json.dumps(s))
PY
}
ok='echo "{\"status\":\"finished\"}"'
event_types() { "$CL" events r1 --root "$T_TMP/proj" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in sys.stdin))'; }

t_spec_review_rejects_by_default_and_keeps_the_bundle() {
	CLOISTER_STATE_DIR=$T_TMP/state
	spec_ws "echo changed >$T_TMP/proj/src/file.txt && echo new >$T_TMP/proj/n.txt && echo hidden >$T_TMP/proj/.smithers/x && $ok"
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 125 "$RC" "rejected ($OUT)"
	assert_eq "INVALID_INPUT" "$(py 'j["code"]' <<<"$ERR")" code
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "require review approval"
	kept=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "n.txt src/file.txt" "$(py '" ".join(p["path"] for p in j["patches"])' <"$kept")" "kept bundle (no .smithers)"
	assert_eq "original" "$(cat "$T_TMP/proj/src/file.txt")" "rootDir untouched"
	[ ! -e "$T_TMP/proj/n.txt" ] || fail "rootDir got n.txt"
	assert_contains "$(event_types)" "SandboxDiffReviewRequested SandboxDiffRejected SandboxFailed"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state left"
	# The kept bundle applies later, by hand.
	clr diff apply "$kept" "$T_TMP/proj"
	assert_eq 0 "$RC" "later apply ($ERR)"
	assert_eq "changed" "$(cat "$T_TMP/proj/src/file.txt")" "after the later apply"
}

t_spec_auto_accept_applies_to_root_dir() {
	CLOISTER_STATE_DIR=$T_TMP/state
	spec_ws "echo changed >$T_TMP/proj/src/file.txt && rm -r $T_TMP/proj/src && mkdir $T_TMP/proj/src && echo again >$T_TMP/proj/src/other && $ok" '"autoAcceptDiffs":true'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "accepted ($ERR)"
	assert_eq "finished" "$(py 'j["status"]' <<<"$OUT")" status
	assert_eq "delete:src/file.txt add:src/other" "$(py '" ".join(p["operation"]+":"+p["path"] for p in j["diffBundle"]["patches"])' <<<"$OUT")" "diffBundle in the result"
	assert_eq "again" "$(cat "$T_TMP/proj/src/other")" "applied to rootDir"
	[ ! -e "$T_TMP/proj/src/file.txt" ] || fail "deleted file still in rootDir"
	assert_contains "$(event_types)" "SandboxDiffReviewRequested SandboxDiffAccepted SandboxCompleted"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state left"
}

t_spec_without_changes_needs_no_review() {
	CLOISTER_STATE_DIR=$T_TMP/state
	spec_ws "cat $T_TMP/proj/src/file.txt >/dev/null && $ok"
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "no changes ($ERR)"
	assert_eq "0" "$(py 'len(j["diffBundle"]["patches"])' <<<"$OUT")" "empty bundle"
	assert_not_contains "$(event_types)" "SandboxDiffReview"
}

t_spec_sticky_workspace_persists_and_seq_continues() {
	CLOISTER_STATE_DIR=$T_TMP/state
	local st='"workspace":{"name":"w1","persistence":"sticky","idleTimeoutSecs":600}'
	spec_ws "echo one >$T_TMP/proj/a.txt && $ok" "$st"
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 125 "$RC" "first run is rejected for review ($OUT)"
	first=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "1 a.txt" "$(py 'str(j["seq"]) + " " + " ".join(p["path"] for p in j["patches"])' <"$first")" "first bundle"
	[ ! -e "$T_TMP/proj/a.txt" ] || fail "rootDir written"
	spec_ws "test \"\$(cat $T_TMP/proj/a.txt)\" = one || exit 9; echo two >>$T_TMP/proj/a.txt && $ok" "\"runId\":\"r2\",$st"
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 125 "$RC" "second run sees the first one's change ($OUT $ERR)"
	second=$(py 'j["details"]["diffBundlePath"]' <<<"$ERR")
	assert_eq "2" "$(py 'j["seq"]' <"$second")" "seq continues"
	assert_contains "$(py 'j["patches"][0]["diff"]' <"$second")" $'+one\n+two'
	assert_eq "sticky-w1" "$(ls -A "$T_TMP/state/workspaces")" "the sticky workspace stays"
	# The same name for another rootDir is refused.
	mkdir -p "$T_TMP/other"
	sed "s|$T_TMP/proj\"|$T_TMP/other\"|; s|\"r2\"|\"r3\"|" "$T_TMP/spec.json" >"$T_TMP/other.json"
	clr sandbox run --spec "$T_TMP/other.json" --json
	assert_eq 125 "$RC" "other rootDir"
	assert_contains "$ERR" "sticky workspace w1 belongs to $T_TMP/proj"
}

t_gc_removes_idle_sticky_and_abandoned_workspaces_only() {
	CLOISTER_STATE_DIR=$T_TMP/state
	local m; m=$(marker gc)
	spec_ws "echo x >$T_TMP/proj/a.txt && $ok" '"workspace":{"name":"idle","persistence":"sticky","idleTimeoutSecs":600}'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	spec_ws "echo x >$T_TMP/proj/b.txt && $ok" '"runId":"r2","workspace":{"name":"fresh","persistence":"sticky","idleTimeoutSecs":600}'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	touch -d '1 hour ago' "$T_TMP/state/workspaces/sticky-idle/idle"
	mkdir -p "$T_TMP/state/workspaces/run-1-abandoned/upper"
	# A live run's dir must survive gc: its command waits on a gate.
	mkdir -p "$T_TMP/g" "$T_TMP/ws"; mkfifo "$T_TMP/g/gate"
	"$CL" run "${WSR[@]}" --workspace "$T_TMP/ws" --rw "$T_TMP/g" -- sh -c ": >$T_TMP/g/started; read x <$T_TMP/g/gate; : $m" &
	pid=$!
	wait_until test -e "$T_TMP/g/started" || fail "the live run did not start"
	clr gc
	assert_contains "$OUT" "removed idle sticky workspace idle"
	assert_contains "$OUT" "removed abandoned workspace run-1-abandoned"
	live=$(ls -A "$T_TMP/state/workspaces" | tr '\n' ' ')
	assert_contains "$live" "sticky-fresh"
	assert_contains "$live" "run-$pid-" "live run dir kept"
	echo go >"$T_TMP/g/gate"
	wait "$pid" || fail "the live run failed"
	assert_gone "$m"
	assert_eq "sticky-fresh" "$(ls -A "$T_TMP/state/workspaces")" "after the live run ended"
}

if is_root; then
t_root_default_identity_gets_an_idmapped_copy() {
	setup
	before=$(digest "$W")
	clr run --workspace "$W" --diff-out "$T_TMP/b.json" -- sh -c "id -u >$W/who && echo more >>$W/src/main.c && rm $W/keep/k.txt"
	assert_eq 0 "$RC" "root's default identity writes root's files ($ERR)"
	assert_eq "m:src/main.c a:who d:keep/k.txt" "$(py '" ".join(p["operation"][0] + ":" + p["path"] for p in sorted(j["patches"], key=lambda p: p["operation"]=="delete"))' <"$T_TMP/b.json")" patches
	assert_contains "$(py '[p for p in j["patches"] if p["path"]=="who"][0]["diff"]' <"$T_TMP/b.json")" "+0" "root inside"
	assert_eq "$before" "$(digest "$W")" "host DIR"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "state left"
}
fi

# Text that is not UTF-8 (Latin-1 here) cannot be a JSON string: it goes
# as binary content and applies back byte for byte; a name that is not
# UTF-8 is refused with the rest of the capture, never half-written.
t_non_utf8_content_and_names() {
	setup
	cp -a "$W" "$T_TMP/target"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --env W="$W" -- \
		sh -c 'printf "caf\351\n" >"$W/latin1.txt" && printf "\377\376x" >"$W/src/main.c"'
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "True True" "$(py '" ".join(str("binaryContent" in p) for p in j["patches"])' <"$T_TMP/b.json")" "both as binary"
	clr diff apply "$T_TMP/b.json" "$T_TMP/target"
	assert_eq 0 "$RC" "apply ($ERR)"
	cmp "$T_TMP/target/latin1.txt" <(printf 'caf\351\n') || fail "latin1.txt differs after apply"
	cmp "$T_TMP/target/src/main.c" <(printf '\377\376x') || fail "main.c differs after apply"
	rm -f "$T_TMP/b.json"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --env W="$W" -- \
		sh -c 'printf x >"$W/$(printf "bad\377")"'
	assert_eq 125 "$RC" "a name that is not UTF-8"
	assert_contains "$ERR" "invalid UTF-8"
	[ ! -e "$T_TMP/b.json" ] || fail "a bundle was written"
}

t_workspace_refused_on_other_runtimes() {
	local d; d=$(mktemp -d "$T_TMP/wsrt.XXXXXX")
	for rt in docker codeplane; do
		clr run --runtime $rt --workspace "$d" -- true
		assert_eq 125 "$RC" "--runtime $rt --workspace"
		assert_contains "$ERR" "--workspace needs the native runtime" "$rt"
	done
}

# The overlay probe runs once per boot: its answer is kept in the state
# dir (.overlay-probe, "<boot_id> 1|0"); an answer for another boot, or a
# file others could write, is not trusted and is probed again.
t_overlay_probe_answer_is_cached_per_boot() {
	setup
	local boot cache=$T_TMP/state/.overlay-probe
	boot=$(cat /proc/sys/kernel/random/boot_id)
	fstype() { "$CL" run "${WSR[@]}" --workspace "$W" -- stat -f -c %T "$W"; }
	assert_eq "overlayfs" "$(fstype)" "first launch (probed)"
	assert_eq "$boot 1" "$(cat "$cache")" "the answer kept"
	echo "$boot 0" >"$cache"
	t=$(fstype)
	[ -n "$t" ] && [ "$t" != overlayfs ] || fail "a cached 'no' must give the copy, got '$t'"
	echo "another-boot 0" >"$cache"
	assert_eq "overlayfs" "$(fstype)" "another boot's answer is probed again"
	assert_eq "$boot 1" "$(cat "$cache")" "rewritten for this boot"
	echo "$boot 0" >"$cache"; chmod 666 "$cache"
	assert_eq "overlayfs" "$(fstype)" "a file others can write is not trusted"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspaces/ holds no cache"
}

run_tests
