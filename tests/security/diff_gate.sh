#!/bin/bash
# The review gate of a diff bundle (issue #29, classes 3 and 9): what
# `cloister diff show` prints is what `diff apply` writes, or both refuse
# the bundle with one line naming the patch. Hand-made bundles whose
# fields disagree (a text hunk in front of binaryContent, a delete that
# shows other content, mode lines against the index line, a line without
# newline that apply would join to the next one, an unknown field); a
# capture of a text file with a NUL past its first 8000 bytes that applies
# back byte for byte; and what a session shows of the host: /proc/1/cmdline
# and the workspace overlay's mount options.
source "$(dirname "$0")/../lib.sh"
export CLOISTER_STATE_DIR

oid() { git hash-object --stdin; }
# bundle FILE PATH OP DIFF [BINARYCONTENT [EXTRA-JSON-FIELDS]]
bundle() {
	python3 - "$@" <<'PY'
import json, sys
f, path, op, diff = sys.argv[1:5]
p = {"path": path, "operation": op, "diff": diff}
if len(sys.argv) > 5 and sys.argv[5]:
    p["binaryContent"] = sys.argv[5]
if len(sys.argv) > 6:
    p.update(json.loads(sys.argv[6]))
json.dump({"seq": 1, "baseRef": "sha256:" + "0" * 64, "patches": [p]}, open(f, "w"))
PY
}
# The bundle is refused by show, apply --check and apply alike, with one
# line naming the patch; the target's n.txt is still WANT.
refused_everywhere() {  # BUNDLE WANT WHY
	local v
	for v in "diff show $1" "diff apply --check $1 $T_TMP/t" "diff apply $1 $T_TMP/t"; do
		# shellcheck disable=SC2086
		clr $v
		[ "$RC" != 0 ] || fail "$3: '$v' accepted it (printed: $OUT)"
		assert_contains "$ERR" "patch n.txt: " "$3: '$v'"
		[ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] || [ "$RC" = 1 ] || fail "$3: '$v' said more than one line: $ERR"
	done
	assert_eq "$2" "$(cat "$T_TMP/t/n.txt" 2>/dev/null)" "$3: n.txt after the apply"
}

t_binary_content_behind_a_text_hunk_is_refused() {
	mkdir "$T_TMP/t"; printf 'hello\n' >"$T_TMP/t/n.txt"
	local o n e
	o=$(printf 'hello\n' | oid); n=$(printf 'hello world\n' | oid)
	# control: the honest text patch shows its hunk and applies
	bundle "$T_TMP/ok.json" n.txt modify "diff --git a/n.txt b/n.txt
index $o..$n 100644
--- a/n.txt
+++ b/n.txt
@@ -1 +1 @@
-hello
+hello world
"
	clr diff show "$T_TMP/ok.json"; assert_eq 0 "$RC" "show of the honest patch: $ERR"
	assert_contains "$OUT" "+hello world"
	clr diff apply --check "$T_TMP/ok.json" "$T_TMP/t"; assert_eq 0 "$RC" "check of the honest patch: $ERR"
	# the attack: the same hunk for the reviewer, other bytes for apply
	e=$(printf 'evil\0payload\n' | oid)
	bundle "$T_TMP/b.json" n.txt modify "diff --git a/n.txt b/n.txt
index $o..$e 100644
Binary files a/n.txt and b/n.txt differ
--- a/n.txt
+++ b/n.txt
@@ -1 +1 @@
-hello
+hello world
" "$(printf 'evil\0payload\n' | base64 -w0)"
	refused_everywhere "$T_TMP/b.json" hello "a Binary line with a text hunk"
}

t_text_patch_with_binary_content_is_refused() {
	mkdir "$T_TMP/t"
	local n
	n=$(printf 'benign\n' | oid)
	bundle "$T_TMP/b.json" n.txt add "diff --git a/n.txt b/n.txt
new file mode 100644
index 0000000000000000000000000000000000000000..$n
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+benign
" "$(printf 'other\0bytes' | base64 -w0)"
	refused_everywhere "$T_TMP/b.json" "" "binaryContent on a text patch"
	[ ! -e "$T_TMP/t/n.txt" ] || fail "n.txt was written"
}

t_delete_showing_other_content_is_refused() {
	mkdir "$T_TMP/t"; printf 'important\n' >"$T_TMP/t/n.txt"
	local o
	o=$(printf 'important\n' | oid)
	bundle "$T_TMP/b.json" n.txt delete "diff --git a/n.txt b/n.txt
deleted file mode 100644
index $o..0000000000000000000000000000000000000000
--- a/n.txt
+++ /dev/null
@@ -1 +0,0 @@
-harmless
"
	clr diff apply "$T_TMP/b.json" "$T_TMP/t"
	[ "$RC" != 0 ] || fail "a delete showing '-harmless' removed a file holding 'important'"
	assert_contains "$ERR$OUT" "n.txt"
	assert_eq important "$(cat "$T_TMP/t/n.txt")" "n.txt after the apply"
}

t_joined_lines_are_refused() {
	mkdir "$T_TMP/t"
	local n
	n=$(printf 'foobar\n' | oid)
	# shown as the lines "foo" and "bar"; written as "foobar"
	bundle "$T_TMP/b.json" n.txt add "diff --git a/n.txt b/n.txt
new file mode 100644
index 0000000000000000000000000000000000000000..$n
--- /dev/null
+++ b/n.txt
@@ -0,0 +1,2 @@
+foo
\\ No newline at end of file
+bar
"
	refused_everywhere "$T_TMP/b.json" "" "a line after a line without newline"
}

t_mode_lines_against_the_index_line_are_refused() {
	mkdir "$T_TMP/t"; printf 'hello\n' >"$T_TMP/t/n.txt"
	local o
	o=$(printf 'hello\n' | oid)
	# shown: new mode 100755; the index line says 100644
	bundle "$T_TMP/b.json" n.txt modify "diff --git a/n.txt b/n.txt
old mode 100644
new mode 100755
index $o..$o 100644
"
	refused_everywhere "$T_TMP/b.json" hello "mode lines and an index line with a mode"
}

t_unknown_field_is_refused() {
	mkdir "$T_TMP/t"
	local n
	n=$(printf 'x\n' | oid)
	bundle "$T_TMP/b.json" n.txt add "diff --git a/n.txt b/n.txt
new file mode 100644
index 0000000000000000000000000000000000000000..$n
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+x
" "" '{"mode": "100755"}'
	refused_everywhere "$T_TMP/b.json" "" "an unknown field"
	assert_contains "$ERR" 'unknown field "mode"'
}

# A NUL past byte 8000 made the capture's text diff stop at the NUL (a JSON
# string cannot hold one), and apply refused it with a conflict.
t_nul_after_8000_bytes_round_trips() {
	CLOISTER_STATE_DIR=$T_TMP/state
	mkdir "$T_TMP/w"; yes 'a line of text' | head -n 1000 >"$T_TMP/w/m.txt"
	cp -a "$T_TMP/w" "$T_TMP/t"
	local ws=(); is_root && ws=(--host-root)
	clr run "${ws[@]}" --workspace "$T_TMP/w" --diff-out "$T_TMP/b.json" -- sh -c \
		"cd $T_TMP/w && yes 'more text' | head -n 900 >big.txt && printf 'x\\0y\\n' >>big.txt && printf 'z\\0\\n' >>m.txt"
	assert_eq 0 "$RC" "run: $ERR"
	clr diff show "$T_TMP/b.json"; assert_eq 0 "$RC" "show: $ERR"
	clr diff apply "$T_TMP/b.json" "$T_TMP/t"; assert_eq 0 "$RC" "apply: $OUT $ERR"
	{ yes 'more text' | head -n 900; printf 'x\0y\n'; } | cmp - "$T_TMP/t/big.txt" || fail "big.txt differs after the apply"
	{ yes 'a line of text' | head -n 1000; printf 'z\0\n'; } | cmp - "$T_TMP/t/m.txt" || fail "m.txt differs after the apply"
}

t_init_cmdline_hides_the_host_command_line() {
	local m; m=$(marker cmdline)
	clr run --env "X=$m" -- sh -c 'tr -d "\0" </proc/1/cmdline'
	assert_eq 0 "$RC" "run: $ERR"
	assert_not_contains "$OUT" "$m" "/proc/1/cmdline of a run"
	assert_eq cloister-init "$OUT" "/proc/1/cmdline of a run"
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	clr create --env "X=$m"; assert_eq 0 "$RC" "create: $ERR"
	local sid=$OUT
	trap '"$CL" rm "$sid" >/dev/null 2>&1' EXIT
	# control: the host command line the session was made from has it
	[ -n "$(procs_with "$m" | tr -d ' ')" ] || fail "control: no host process carries the marker"
	clr exec "$sid" -- sh -c 'tr -d "\0" </proc/1/cmdline; echo; cat /proc/1/comm'
	assert_eq 0 "$RC" "exec: $ERR"
	assert_not_contains "$OUT" "$m" "/proc/1/cmdline of a session"
	assert_not_contains "$OUT" "create" "/proc/1/cmdline of a session"
	assert_eq "cloister-init
cloister-init" "$OUT" "/proc/1/cmdline and comm of a session"
}

# The overlay's layers are given as /proc/self/fd/N (ns/mounts_extra.c), and
# overlayfs shows the strings it was given. (The copy fallback, which a root
# caller's default identity gets, is a bind whose root the kernel shows as
# its path on the host filesystem: docs/security.md.)
t_workspace_mountinfo_has_no_state_path() {
	CLOISTER_STATE_DIR=$T_TMP/state
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	mkdir "$T_TMP/w"; echo a >"$T_TMP/w/a"
	local ws=(); is_root && ws=(--host-root)
	clr create "${ws[@]}" --workspace "$T_TMP/w"; assert_eq 0 "$RC" "create: $ERR"
	local sid=$OUT
	trap '"$CL" rm "$sid" >/dev/null 2>&1' EXIT
	clr exec "$sid" -- cat /proc/self/mountinfo
	assert_eq 0 "$RC" "exec: $ERR"
	# control: the workspace is the overlay, and it is listed
	assert_contains "$OUT" " $T_TMP/w rw," "the workspace mount"
	assert_contains "$OUT" "overlay" "the workspace mount"
	assert_not_contains "$OUT" "$T_TMP/state" "mountinfo inside a workspace session"
	assert_not_contains "$OUT" "$CLOISTER_RUNTIME_DIR" "mountinfo inside a workspace session"
}

run_tests
