#!/bin/bash
# `cloister cp` attacked from inside the session (issue #29, class 4 and
# the cp part of class 7): links the sandbox plants in a --rw directory at
# a copy's host destination or source, fifos at either end, and a sparse
# file too big to copy. Each attack follows its control (the same copy
# with nothing planted). docs/security.md, "Copies (cloister cp)".
. "$(dirname "$0")/../integration/session_lib.bash"

# A session with $T_TMP/w writable inside as /w, and a host directory
# $T_TMP/host the sandbox cannot see, holding a secret.
mk_rw() {
	mkdir -p "$T_TMP/w" "$T_TMP/host"
	echo host-secret >"$T_TMP/host/secret"
	rw_id_probe
	mk --rw "$T_TMP/w:/w" "${RW_ID[@]}"
	"$CL" exec "$SID" -- sh -c 'echo inside >/tmp/data' || fail "writing /tmp/data"
}
in_sess() { "$CL" exec "$SID" -- sh -c "$1" || fail "in the session: $1"; }
# clr under a timeout: a copy that hangs is RC 124, not a hung suite.
clt() {
	local o e
	o=$(mktemp "$T_TMP/out.XXXXXX"); e=$(mktemp "$T_TMP/err.XXXXXX")
	timeout 60 "$CL" "$@" >"$o" 2>"$e"; RC=$?
	OUT=$(cat "$o"); ERR=$(cat "$e"); rm -f "$o" "$e"
}

# cp out to a name the sandbox turned into a link to a host directory:
# stat() followed it and the copy landed in that directory.
t_cp_out_link_at_destination() {
	mk_rw
	mkdir "$T_TMP/w/real"
	clr cp "$SID:/tmp/data" "$T_TMP/w/real"; assert_eq 0 "$RC" "control: cp into a directory ($ERR)"
	assert_eq inside "$(cat "$T_TMP/w/real/data")" "control: copied into the directory"
	in_sess "ln -s $T_TMP/host /w/out"
	clr cp "$SID:/tmp/data" "$T_TMP/w/out"; assert_eq 0 "$RC" "cp out over a planted dir link ($ERR)"
	[ ! -e "$T_TMP/host/data" ] || fail "cp out followed the planted link into a host directory"
	[ -f "$T_TMP/w/out" ] && [ ! -L "$T_TMP/w/out" ] || fail "the planted link is not replaced by the file"
	assert_eq inside "$(cat "$T_TMP/w/out")"
	assert_eq "" "$(ls -A "$T_TMP/w" "$T_TMP/host" | grep cloister-cp)" "temporary files left"
	"$CL" rm "$SID"
}

# cp in of a name the sandbox turned into a link to a host file (or, for
# -r, to a host directory): the host's file went into the session.
t_cp_in_link_at_source() {
	mk_rw
	echo plain >"$T_TMP/w/plain"
	clr cp "$T_TMP/w/plain" "$SID:/tmp/plain"; assert_eq 0 "$RC" "control: cp in ($ERR)"
	in_sess "ln -s $T_TMP/host/secret /w/src; ln -s $T_TMP/host /w/tree"
	clr cp "$T_TMP/w/src" "$SID:/tmp/got"
	assert_eq 125 "$RC" "cp in of a planted link"
	assert_contains "$ERR" "symbolic link"
	assert_contains "$ERR" "$T_TMP/w/src"
	assert_not_contains "$("$CL" exec "$SID" -- cat /tmp/got 2>&1)" host-secret "the host file went in"
	clr cp -r "$T_TMP/w/tree" "$SID:/tmp/tree"
	assert_eq 125 "$RC" "cp -r in of a planted dir link"
	assert_contains "$ERR" "symbolic link"
	assert_not_contains "$("$CL" exec "$SID" -- cat /tmp/tree/secret 2>&1)" host-secret "the host tree went in"
	"$CL" rm "$SID"
}

# A fifo (or device) where a regular file is expected: opening it blocked
# the copy until a peer that never comes. Each copy must fail at once
# naming the path; `timeout` keeps a regression from hanging the suite.
t_cp_fifo_at_either_end() {
	mk_rw
	echo x >"$T_TMP/file"
	clr cp "$T_TMP/file" "$SID:/tmp/f"; assert_eq 0 "$RC" "control: cp in ($ERR)"
	in_sess "mkfifo /tmp/fifo /w/fifo"
	clt cp "$T_TMP/file" "$SID:/tmp/fifo"
	assert_eq 125 "$RC" "cp in to a fifo in the session (124: it hung)"
	assert_contains "$ERR" "/tmp/fifo"
	assert_contains "$ERR" "not a regular file"
	clt cp "$T_TMP/w/fifo" "$SID:/tmp/g"
	assert_eq 125 "$RC" "cp in from a planted fifo (124: it hung)"
	assert_contains "$ERR" "$T_TMP/w/fifo"
	assert_contains "$ERR" "not a regular file"
	clt cp /dev/zero "$SID:/tmp/z"
	assert_eq 125 "$RC" "cp in from a device (124: it streamed without end)"
	assert_contains "$ERR" "not a regular file"
	# out onto a planted fifo: replaced, never opened
	clt cp "$SID:/tmp/data" "$T_TMP/w/fifo"
	assert_eq 0 "$RC" "cp out onto a planted fifo ($ERR)"
	[ -f "$T_TMP/w/fifo" ] || fail "the fifo is not replaced by the file"
	"$CL" rm "$SID"
}

# A 4 EiB sparse file costs the sandbox nothing and streamed without end;
# the copy stops at the limit of one cp (4 GiB), named in the error.
t_cp_out_size_bound() {
	mk
	in_sess "seq 1000 >/tmp/small; truncate -s 4E /tmp/huge"
	clr cp "$SID:/tmp/small" -; assert_eq 0 "$RC" "control: cp out to stdout ($ERR)"
	assert_eq "$(seq 1000)" "$OUT" "control: content"
	local n
	n=$({ timeout 120 "$CL" cp "$SID:/tmp/huge" - 2>"$T_TMP/err"; echo $? >"$T_TMP/rc"; } | wc -c)
	RC=$(cat "$T_TMP/rc")
	assert_eq 125 "$RC" "cp out of a 4 EiB file (124: it streamed without end)"
	assert_contains "$(cat "$T_TMP/err")" "4294967296 bytes"
	[ "$n" -le 4294967296 ] || fail "$n bytes passed the limit"
	clt cp "$SID:/tmp/huge" "$T_TMP/huge"
	assert_eq 125 "$RC" "cp out of a 4 EiB file to a file"
	assert_contains "$ERR" "4294967296 bytes"
	[ ! -e "$T_TMP/huge" ] || fail "a copy over the limit left its file"
	assert_eq "" "$(ls -A "$T_TMP" | grep cloister-cp)" "temporary files left"
	"$CL" rm "$SID"
}

run_tests
