#!/bin/bash
# Sessions, cp: files and trees copied in and out (`cloister cp`, also
# -r and stdio), never following the sandbox's links out of it, and no
# temporary file left behind.
. "$(dirname "$0")/session_lib.bash"

t_cp_in_and_out() {
	mk
	head -c 200000 /dev/urandom >"$T_TMP/bin"
	chmod 750 "$T_TMP/bin"
	clr cp "$T_TMP/bin" "$SID:/tmp/"; assert_eq 0 "$RC" "cp into a directory ($ERR)"
	assert_eq "$(sha256sum <"$T_TMP/bin" | cut -d' ' -f1)" "$("$CL" exec "$SID" -- sha256sum /tmp/bin | cut -d' ' -f1)" "content in"
	assert_eq 750 "$("$CL" exec "$SID" -- stat -c %a /tmp/bin)" "mode kept"
	clr cp "$SID:/tmp/bin" "$T_TMP/back"; assert_eq 0 "$RC" "cp out ($ERR)"
	cmp "$T_TMP/bin" "$T_TMP/back" || fail "content out differs"
	mkdir "$T_TMP/d"
	clr cp "$SID:/tmp/bin" "$T_TMP/d"; assert_eq 0 "$RC" "cp out into a directory ($ERR)"
	cmp "$T_TMP/bin" "$T_TMP/d/bin" || fail "content out (directory) differs"
	echo piped | "$CL" cp - "$SID:/tmp/p"; assert_eq 0 "$?" "cp from stdin"
	clr cp "$T_TMP/bin" "$SID:/tmp/a/b/c"; assert_eq 125 "$RC" "missing directories without --mkdir"
	clr cp --mkdir "$T_TMP/bin" "$SID:/tmp/a/b/c"; assert_eq 0 "$RC" "cp --mkdir ($ERR)"
	assert_eq 755 "$("$CL" exec "$SID" -- stat -c %a /tmp/a/b)" "directory made by --mkdir"
	assert_eq piped "$("$CL" cp "$SID:/tmp/p" -)" "cp to stdout"
	clr cp "$SID:/tmp/missing" "$T_TMP/m"; assert_eq 125 "$RC" "missing source"
	[ ! -e "$T_TMP/m" ] || fail "a failed copy left a file"
	assert_eq "" "$(ls -A "$T_TMP" | grep cloister-cp)" "temporary files left"
	clr cp "$SID:/tmp" "$T_TMP/x"; assert_eq 125 "$RC" "directory source"
	clr cp "$T_TMP/d" "$SID:/tmp/x"; assert_eq 125 "$RC" "directory source in"
	clr cp "$T_TMP/bin" "$T_TMP/bin2"; assert_eq 125 "$RC" "no session side"
	clr cp "$SID:/a" "$SID:/b"; assert_eq 125 "$RC" "two session sides"
	clr cp "$T_TMP/bin" "$SID:relative"; assert_eq 125 "$RC" "relative path inside"
	"$CL" rm "$SID"
}

# Links the sandbox planted lead nowhere outside it: host paths resolve in
# the sandbox's root, magic links are refused, a final link is never
# written through, and the host side replaces (not follows) a planted link.
t_cp_never_follows_links_out() {
	mkdir -p "$T_TMP/w" "$T_TMP/host"
	echo host-secret >"$T_TMP/host/secret"
	rw_id_probe
	mk --rw "$T_TMP/w:/w" "${RW_ID[@]}"
	"$CL" exec "$SID" -- sh -c "ln -s $T_TMP/host/secret /tmp/abs; ln -s ../../../../../..$T_TMP/host/secret /tmp/rel;
		ln -s /proc/self/fd/1 /tmp/magic; ln -s /proc/1/root$T_TMP/host/secret /tmp/root1;
		ln -s $T_TMP/host /tmp/dirlink; ln -s $T_TMP/host/new /tmp/dangling; mkfifo /tmp/fifo;
		ln -s $T_TMP/host/victim /w/out; echo inside >/tmp/data" || fail "planting links"
	for l in abs rel magic root1 fifo; do
		clr cp "$SID:/tmp/$l" -
		assert_eq 125 "$RC" "cp out of link $l"
		assert_not_contains "$OUT" host-secret "cp out of $l"
	done
	clr cp "$T_TMP/host/secret" "$SID:/tmp/dangling"; assert_eq 125 "$RC" "write through a final link"
	assert_contains "$ERR" "symbolic link"
	clr cp "$T_TMP/host/secret" "$SID:/tmp/dirlink/new"; assert_eq 125 "$RC" "write below a dir link"
	# the link's target does not exist in the sandbox's root: nothing to make it in
	clr cp --mkdir "$T_TMP/host/secret" "$SID:/tmp/dirlink/sub/new"; assert_eq 125 "$RC" "--mkdir through a dir link"
	[ ! -e "$T_TMP/host/sub" ] || fail "cp --mkdir made a host directory through a link"
	[ ! -e "$T_TMP/host/new" ] || fail "a copy into the sandbox wrote a host file"
	# host side: the planted /w/out (our $T_TMP/w/out) is replaced
	clr cp "$SID:/tmp/data" "$T_TMP/w/out"; assert_eq 0 "$RC" "cp out over a planted link ($ERR)"
	[ ! -e "$T_TMP/host/victim" ] || fail "cp out followed a planted link"
	[ -f "$T_TMP/w/out" ] && [ ! -L "$T_TMP/w/out" ] || fail "destination is not a plain file"
	assert_eq inside "$(cat "$T_TMP/w/out")"
	"$CL" rm "$SID"
}

# One line per entry below $1: links with their target, directories with
# their mode, files with mode and a hash of the contents.
TREE_LIST='cd "$1" && stat -c "top %a" . && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
	if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
	elif [ -d "$p" ]; then echo "$p dir $(stat -c %a "$p")"
	else echo "$p file $(stat -c %a "$p") $(sha256sum <"$p" | cut -c1-16)"; fi; done'
host_tree() { sh -c "$TREE_LIST" _ "$1"; }
sess_tree() { "$CL" exec "$SID" -- sh -c "$TREE_LIST" _ "$1"; }
no_temp_left() {  # DIR...
	local d
	for d in "$@"; do assert_eq "" "$(ls -A "$d" | grep cloister-cp)" "temporary directories left in $d"; done
}

t_cp_r_in_and_out() {
	mk
	mkdir -p "$T_TMP/src/a/b" "$T_TMP/src/empty"
	echo one >"$T_TMP/src/f"; chmod 750 "$T_TMP/src/f"
	head -c 300000 /dev/urandom >"$T_TMP/src/a/b/big"
	ln -s ../f "$T_TMP/src/a/rel"; ln -s /nonexistent/abs "$T_TMP/src/abs"
	chmod 555 "$T_TMP/src/a"; chmod 710 "$T_TMP/src"
	clr cp -r "$T_TMP/src" "$SID:/tmp/"; assert_eq 0 "$RC" "cp -r in ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(sess_tree /tmp/src)" "the tree inside"
	clr cp -r "$SID:/tmp/src" "$T_TMP/back"; assert_eq 0 "$RC" "cp -r out ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(host_tree "$T_TMP/back")" "the tree copied back"
	# an existing directory of that name is replaced as a whole
	"$CL" exec "$SID" -- sh -c 'chmod 755 /tmp/src/a; rm /tmp/src/f; echo new >/tmp/src/a/g' || fail "changing the tree"
	clr cp -r "$SID:/tmp/src" "$T_TMP/"; assert_eq 0 "$RC" "cp -r out over a directory ($ERR)"
	assert_eq "$(sess_tree /tmp/src)" "$(host_tree "$T_TMP/src")" "the replaced tree"
	[ ! -e "$T_TMP/src/f" ] || fail "the old tree was merged, not replaced"
	echo again >"$T_TMP/src/h"
	clr cp -r "$T_TMP/src" "$SID:/tmp"; assert_eq 0 "$RC" "cp -r in over a directory ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(sess_tree /tmp/src)" "the replaced tree inside"
	clr cp -r --mkdir "$T_TMP/src" "$SID:/tmp/x/y/z"; assert_eq 0 "$RC" "cp -r --mkdir ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(sess_tree /tmp/x/y/z)" "a new name"
	no_temp_left "$T_TMP"
	assert_eq "" "$("$CL" exec "$SID" -- sh -c 'ls -A /tmp /tmp/x/y | grep cloister-cp')" "temporary directories left inside"
	clr cp "$T_TMP/src" "$SID:/tmp/n"; assert_eq 125 "$RC" "a directory without -r"
	assert_contains "$ERR" "cp -r"
	clr cp -r "$T_TMP/src/f" "$SID:/tmp/n" 2>/dev/null; assert_eq 125 "$RC" "-r of a file"
	clr cp -r "$SID:/tmp/src/h" "$T_TMP/n"; assert_eq 125 "$RC" "-r of a file out"
	clr cp -r - "$SID:/tmp/n"; assert_eq 125 "$RC" "-r from stdin"
	clr cp -r "$SID:/tmp/missing" "$T_TMP/n"; assert_eq 125 "$RC" "missing source"
	clr cp -r "$T_TMP/src" "$SID:/tmp/src/h"; assert_eq 125 "$RC" "over a file inside"
	assert_contains "$ERR" "not a directory"
	# the session fails before reading (more than a pipe's worth is
	# coming): its reason is shown, not our sender's broken pipe
	clr cp -r "$T_TMP/src" "$SID:/nonexistent/x"; assert_eq 125 "$RC" "into a missing directory"
	assert_contains "$ERR" "/nonexistent/x"
	assert_not_contains "$ERR" "Broken pipe"
	[ ! -e "$T_TMP/n" ] || fail "a failed copy left $T_TMP/n"
	no_temp_left "$T_TMP"
	"$CL" rm "$SID"
}

# The sandbox plants links, special files and a deep tree: links are
# copied as links (never followed, on either side), a link at a
# destination is not written through, devices and fifos refuse the copy,
# and no failed copy leaves anything.
t_cp_r_never_follows_links_out() {
	mkdir -p "$T_TMP/w" "$T_TMP/host/victim"
	echo host-secret >"$T_TMP/host/secret"
	rw_id_probe
	mk --rw "$T_TMP/w:/w" "${RW_ID[@]}"
	"$CL" exec "$SID" -- sh -c "mkdir -p /tmp/t/d; ln -s $T_TMP/host/secret /tmp/t/abs
		ln -s ../../../../../../..$T_TMP/host /tmp/t/rel; ln -s /proc/1/root$T_TMP/host /tmp/t/d/root1
		ln -s $T_TMP/host /tmp/dirlink; ln -s $T_TMP/host/victim /w/out
		mkdir /w/tree /w/special; ln -s $T_TMP/host /w/tree/hostdir; ln -s $T_TMP/host/secret /w/tree/secret
		mkfifo /w/special/fifo; mkdir /tmp/deep; cd /tmp/deep; for i in \$(seq 70); do mkdir d; cd d; done" ||
		fail "planting"
	clr cp -r "$SID:/tmp/t" "$T_TMP/o1"; assert_eq 0 "$RC" "cp -r out of a tree with links ($ERR)"
	assert_eq "$T_TMP/host/secret" "$(readlink "$T_TMP/o1/abs")" "an absolute link, as a link"
	assert_eq "/proc/1/root$T_TMP/host" "$(readlink "$T_TMP/o1/d/root1")" "a magic-ish link, as a link"
	assert_eq "" "$(grep -r host-secret "$T_TMP/o1")" "host data through a link"
	# the source itself a link to a host path: resolved in the sandbox's root
	clr cp -r "$SID:/tmp/dirlink" "$T_TMP/o2"; assert_eq 125 "$RC" "cp -r out of a link to a host dir"
	[ ! -e "$T_TMP/o2" ] || fail "copied through a link"
	clr cp -r "$T_TMP/o1" "$SID:/tmp/dirlink/x"; assert_eq 125 "$RC" "cp -r into a link to a host dir"
	clr cp -r "$T_TMP/o1" "$SID:/tmp/t/abs"; assert_eq 125 "$RC" "cp -r over a planted link inside"
	[ ! -e "$T_TMP/host/x" ] && [ -z "$(ls -A "$T_TMP/host/victim")" ] || fail "a copy in wrote a host directory"
	# host side: /w/out is the sandbox's link to a host directory
	clr cp -r "$SID:/tmp/t" "$T_TMP/w/out"; assert_eq 125 "$RC" "cp -r out over a planted link"
	assert_contains "$ERR" "not a directory"
	[ -z "$(ls -A "$T_TMP/host/victim")" ] || fail "cp -r out wrote through a planted link"
	# a host source the sandbox can write (--rw): its links stay links
	clr cp -r "$T_TMP/w/tree" "$SID:/tmp/"; assert_eq 0 "$RC" "cp -r in of a sandbox-written dir ($ERR)"
	clr cp -r "$SID:/tmp/tree" "$T_TMP/o5"; assert_eq 0 "$RC" "and out again ($ERR)"
	assert_eq "$T_TMP/host" "$(readlink "$T_TMP/o5/hostdir")" "a link to a host directory, as a link"
	assert_eq "" "$(grep -r host-secret "$T_TMP/o5")" "host data through a link"
	# special files and a tree deeper than the limit: refused, nothing left
	clr cp -r "$T_TMP/w/special" "$SID:/tmp/"; assert_eq 125 "$RC" "cp -r in of a fifo"
	assert_contains "$ERR" "not a regular file, directory or symbolic link"
	clr cp -r "$SID:/dev" "$T_TMP/o3"; assert_eq 125 "$RC" "cp -r out of device nodes"
	assert_contains "$ERR" "not a regular file, directory or symbolic link"
	clr cp -r "$SID:/tmp/deep" "$T_TMP/o4"; assert_eq 125 "$RC" "cp -r of a deep tree"
	assert_contains "$ERR" "deeper than"
	[ ! -e "$T_TMP/o3" ] && [ ! -e "$T_TMP/o4" ] && [ ! -e "$T_TMP/w/out/t" ] || fail "a failed copy left files"
	no_temp_left "$T_TMP" "$T_TMP/w"
	assert_eq "" "$("$CL" exec "$SID" -- sh -c 'ls -A /tmp | grep cloister-cp')" "temporary directories left inside"
	"$CL" rm "$SID"
}

run_tests
