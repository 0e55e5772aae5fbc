#!/bin/bash
# Workspaces under real agent work (issue 34): a node tree's
# node_modules/.bin links, a Python venv, retargeted and replaced links.
# Each run's bundle must turn a fresh copy of the base into the tree the
# sandbox saw, through `cloister diff apply` and through `git apply`; and
# apply must never write through a symlink of the target.
. "$(dirname "$0")/../lib.sh"

WSR=()
is_root && WSR=(--host-root)
export CLOISTER_STATE_DIR

py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }

# Files and links of a tree (directories are implied, as in git): path,
# exec bit and sha256, or the link's target. Names as Python's repr of
# their bytes, so that odd names compare exactly.
write_digest() {
	mkdir -p "$T_TMP/tools"
	cat >"$T_TMP/tools/digest.py" <<'PY'
import hashlib, os, sys
root = os.fsencode(sys.argv[1])
out = []
for dp, dns, fns in os.walk(root):
    dns[:] = [d for d in dns if d.lower() != b".git"]
    for f in dns + fns:
        p = os.path.join(dp, f)
        rel = os.path.relpath(p, root)
        if os.path.islink(p):
            out.append("l %r %r" % (rel, os.readlink(p)))
        elif os.path.isfile(p):
            x = os.stat(p).st_mode & 0o100
            out.append("f %r %s %s" % (rel, bool(x), hashlib.sha256(open(p, "rb").read()).hexdigest()))
for l in sorted(set(out)):
    print(l)
PY
}
digest() { /usr/bin/python3 "$T_TMP/tools/digest.py" "$1"; }

setup() {
	CLOISTER_STATE_DIR=$T_TMP/state
	W=$T_TMP/ws
	mkdir -p "$W"
	write_digest
}

# Runs SCRIPT in the workspace, the sandbox's own digest of W after it as
# $SEEN, then applies the bundle to two fresh copies of the base (made
# before the run) with `diff apply` and with `git apply` and compares.
run_and_round_trip() {  # script
	rm -rf "$T_TMP/base" "$T_TMP/t-cl" "$T_TMP/t-git"
	cp -a "$W" "$T_TMP/base"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --env W="$W" \
		--ro "$T_TMP/tools" -- sh -c "cd \"\$W\" && $1 && /usr/bin/python3 $T_TMP/tools/digest.py \"\$W\""
	assert_eq 0 "$RC" "run ($ERR)"
	SEEN=$OUT
	[ -n "$SEEN" ] || fail "the sandbox printed no digest"
	cp -a "$T_TMP/base" "$T_TMP/t-cl"
	cp -a "$T_TMP/base" "$T_TMP/t-git"
	clr diff apply "$T_TMP/b.json" "$T_TMP/t-cl"
	assert_eq 0 "$RC" "diff apply ($ERR)"
	assert_eq "$SEEN" "$(digest "$T_TMP/t-cl")" "diff apply's tree against the sandbox's"
	py '"".join(p["diff"] for p in j["patches"])' <"$T_TMP/b.json" >"$T_TMP/all.patch"
	(cd "$T_TMP/t-git" && GIT_CEILING_DIRECTORIES=$T_TMP git apply "$T_TMP/all.patch") 2>"$T_TMP/git.err" ||
		fail "git apply: $(cat "$T_TMP/git.err")"
	assert_eq "$SEEN" "$(digest "$T_TMP/t-git")" "git apply's tree against the sandbox's"
	assert_eq "$(digest "$T_TMP/base")" "$(digest "$W")" "the host DIR was written"
}

# A node project whose dependency install made node_modules/.bin links
# (done by hand: no registry), a retargeted link, a file replaced by a
# link, a link replaced by a file, and an absolute link.
t_node_modules_bin_links_round_trip() {
	setup
	mkdir -p "$W/node_modules/left-pad/bin" "$W/docs" "$W/v1" "$W/v2"
	printf '{"name":"app","dependencies":{"left-pad":"1"}}\n' >"$W/package.json"
	printf 'console.log(1)\n' >"$W/app.js"
	printf '#!/usr/bin/env node\nconsole.log("pad")\n' >"$W/node_modules/left-pad/bin/cli.js"
	chmod +x "$W/node_modules/left-pad/bin/cli.js"
	echo docs >"$W/docs/README.md"; echo readme >"$W/README.md"
	echo one >"$W/v1/x"; echo two >"$W/v2/x"
	ln -s v1 "$W/current"; ln -s app.js "$W/main.js"
	run_and_round_trip 'mkdir -p node_modules/.bin &&
		ln -s ../left-pad/bin/cli.js node_modules/.bin/left-pad &&
		echo "console.log(2)" >>app.js && ln -sfn v2 current &&
		rm README.md && ln -s docs/README.md README.md &&
		rm main.js && echo "require(\"./app\")" >main.js && ln -s /usr/bin/env abs-env'
	assert_eq "add:README.md add:abs-env add:current add:main.js add:node_modules/.bin/left-pad" \
		"$(py '" ".join(p["operation"] + ":" + p["path"] for p in j["patches"] if p["operation"] == "add")' <"$T_TMP/b.json")" \
		"adds"
	assert_contains "$(cat "$T_TMP/b.json")" 'new file mode 120000' "links carried as mode 120000"
	# The absolute link is carried and flagged; apply can refuse it.
	clr diff show "$T_TMP/b.json"
	assert_eq 0 "$RC" "show ($ERR)"
	assert_contains "$OUT" "+../left-pad/bin/cli.js" "show prints the link's target"
	assert_contains "$ERR" "abs-env is a symlink that points out of the tree (to /usr/bin/env)"
	assert_not_contains "$ERR" "node_modules/.bin/left-pad is a symlink" "an inner link is not flagged"
	rm -rf "$T_TMP/t-ref"; cp -a "$T_TMP/base" "$T_TMP/t-ref"
	clr diff apply "$T_TMP/b.json" "$T_TMP/t-ref" --refuse-outside-links
	assert_eq 1 "$RC" "apply --refuse-outside-links ($ERR)"
	assert_contains "$ERR" "conflict: abs-env: a symlink that points out of the tree"
	assert_eq "$(digest "$T_TMP/base")" "$(digest "$T_TMP/t-ref")" "written despite the conflict"
}

# The copy fallback carries links the same way, byte for byte.
t_links_copy_mode_gives_the_same_bundle() {
	setup
	echo a >"$W/a"; ln -s a "$W/old"
	CLOISTER_WORKSPACE_MODE=overlay run_and_round_trip 'ln -s a new && ln -sfn new old'
	mv "$T_TMP/b.json" "$T_TMP/overlay.json"
	CLOISTER_WORKSPACE_MODE=copy run_and_round_trip 'ln -s a new && ln -sfn new old'
	cmp "$T_TMP/overlay.json" "$T_TMP/b.json" || fail "copy mode's bundle differs from the overlay's"
}

t_python_venv_round_trips() {
	setup
	[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
	printf 'print("app")\n' >"$W/app.py"
	run_and_round_trip '/usr/bin/python3 -m venv --without-pip .venv && echo "print(2)" >>app.py'
	assert_contains "$(py '" ".join(p["path"] for p in j["patches"])' <"$T_TMP/b.json")" ".venv/bin/python" "venv links"
	assert_eq python3 "$(readlink "$T_TMP/t-cl/.venv/bin/python")" "bin/python applied as a link"
}

# A target whose src is a planted link to a directory holding the same
# files: the preimages match through it, but nothing is written there.
t_apply_through_a_planted_link_is_a_conflict() {
	setup
	mkdir -p "$W/src"; echo x >"$W/src/main.c"
	cp -a "$W" "$T_TMP/base"
	clr run "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/b.json" --env W="$W" -- \
		sh -c 'cd "$W" && echo y >>src/main.c && echo new >src/new.c'
	assert_eq 0 "$RC" "run ($ERR)"
	mkdir -p "$T_TMP/target" "$T_TMP/outside"
	echo x >"$T_TMP/outside/main.c"
	ln -s "$T_TMP/outside" "$T_TMP/target/src"
	clr diff apply "$T_TMP/b.json" "$T_TMP/target"
	assert_eq 1 "$RC" "apply through the link ($ERR)"
	assert_contains "$ERR" "conflict: src/main.c: its path goes through a symlink in the target"
	assert_contains "$ERR" "conflict: src/new.c: its path goes through a symlink in the target"
	assert_eq "x" "$(cat "$T_TMP/outside/main.c")" "written through the link"
	assert_eq "main.c" "$(ls -A "$T_TMP/outside")" "added through the link"
	assert_eq "src" "$(ls -A "$T_TMP/target")" "written into the target"
	# git refuses it too.
	py '"".join(p["diff"] for p in j["patches"])' <"$T_TMP/b.json" >"$T_TMP/all.patch"
	(cd "$T_TMP/target" && GIT_CEILING_DIRECTORIES=$T_TMP git apply "$T_TMP/all.patch") 2>/dev/null &&
		fail "git apply wrote through the link"
	assert_eq "x" "$(cat "$T_TMP/outside/main.c")" "git wrote through the link"
}

# A bundle that adds a link and then a file beneath it: the file would
# land wherever the link points.
t_a_file_beneath_an_added_link_is_a_conflict() {
	setup
	mkdir -p "$T_TMP/target" "$T_TMP/outside"
	python3 - "$T_TMP/outside" >"$T_TMP/evil.json" <<'PY'
import hashlib, json, sys
def oid(b): return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()
z = "0" * 40
t = sys.argv[1]
link = ("diff --git a/a b/a\nnew file mode 120000\nindex %s..%s\n--- /dev/null\n+++ b/a\n"
        "@@ -0,0 +1 @@\n+%s\n\\ No newline at end of file\n") % (z, oid(t.encode()), t)
f = ("diff --git a/a/x b/a/x\nnew file mode 100644\nindex %s..%s\n--- /dev/null\n+++ b/a/x\n"
     "@@ -0,0 +1 @@\n+x\n") % (z, oid(b"x\n"))
print(json.dumps({"seq": 1, "baseRef": "sha256:0", "patches": [
    {"path": "a", "operation": "add", "diff": link}, {"path": "a/x", "operation": "add", "diff": f}]}))
PY
	clr diff show "$T_TMP/evil.json"
	assert_eq 0 "$RC" "show ($ERR)"
	assert_contains "$ERR" "a is a symlink that points out of the tree"
	clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
	assert_eq 1 "$RC" "apply ($ERR)"
	assert_contains "$ERR" "conflict: a/x: a parent of it is a file or symlink this bundle adds"
	assert_eq "" "$(ls -A "$T_TMP/outside")" "written outside the target"
	assert_eq "" "$(ls -A "$T_TMP/target")" "written into the target"
}

# Names with a newline, a tab, a quote, a backslash, UTF-8 and a byte that
# is not UTF-8: carried losslessly, headers as `git diff` writes them.
t_odd_names_round_trip() {
	setup
	printf 'old\n' >"$W/$(printf 'had\nnewline')"
	printf 'cafe\n' >"$W/café.txt"
	printf 'tab\n' >"$W/$(printf 'a\tb')"
	run_and_round_trip 'printf "more\n" >>"$(printf "had\nnewline")" && printf "x\n" >>café.txt &&
		printf "n\n" >"$(printf "new\nline.txt")" && printf "q\n" >"quo\"te\\back" &&
		printf "b\n" >"$(printf "bad\377name")" && mkdir -p "$(printf "d\001ir")" &&
		printf "s\n" >"$(printf "d\001ir/sub")" && rm "$(printf "a\tb")"'
	assert_eq '"a\tb" "bad\377name" "d\001ir/sub" "had\nnewline" "new\nline.txt" café.txt quo"te\back' \
		"$(py '" ".join(sorted(p["path"] for p in j["patches"]))' <"$T_TMP/b.json")" "JSON paths (quoted when odd)"
	# The headers are git's own: a repository of the base, the bundle
	# applied, and git's diff of it name every file the same way.
	rm -rf "$T_TMP/repo"; cp -a "$T_TMP/base" "$T_TMP/repo"
	(cd "$T_TMP/repo" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base &&
		git apply "$T_TMP/all.patch" && git add -A &&
		git diff --cached --no-renames --full-index) >"$T_TMP/git.diff" 2>"$T_TMP/git.err" ||
		fail "git: $(cat "$T_TMP/git.err")"
	assert_eq "$(grep -a '^diff --git\|^--- \|^+++ ' "$T_TMP/git.diff" | sort)" \
		"$(grep -a '^diff --git\|^--- \|^+++ ' "$T_TMP/all.patch" | sort)" "headers against git diff's"
	assert_contains "$(cat "$T_TMP/all.patch")" 'diff --git "a/caf\303\251.txt" "b/caf\303\251.txt"'
	clr diff show "$T_TMP/b.json"
	assert_eq 0 "$RC" "show ($ERR)"
	assert_contains "$OUT" '+++ "b/new\nline.txt"'
}

# One spelling per name: a raw control byte, a quoted plain name or a
# needless octal escape is refused before anything is read.
t_odd_names_in_another_form_are_refused() {
	setup
	mkdir -p "$T_TMP/target"
	for p in $'raw\nnewline' '"plain"' '"\\141"' '"a\\000b"' '"unterminated'; do
		python3 - "$p" >"$T_TMP/evil.json" <<'PY2'
import json, sys
p = sys.argv[1]
d = "diff --git a/x b/x\nnew file mode 100644\nindex %s..%s\n" % ("0" * 40, "0" * 40)
print(json.dumps({"seq": 1, "baseRef": "sha256:0", "patches": [{"path": p, "operation": "add", "diff": d}]}))
PY2
		clr diff apply "$T_TMP/evil.json" "$T_TMP/target"
		assert_eq 125 "$RC" "apply of $p ($ERR)"
		assert_contains "$ERR" "TOOL_PATH_INVALID" "$p"
	done
	assert_eq "" "$(ls -A "$T_TMP/target")" "written into the target"
}

run_tests
