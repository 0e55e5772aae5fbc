# Sourced by bench/run.sh (uses its group/compare/as_who/na_row): the S1
# row, `cloister exec` of /bin/true into a running session next to a fresh
# `cloister run` and Debian's bwrap with Smithers' argv, in one hyperfine
# call. The session is created before the timing and removed after it.
session_rows() {
	local who=user sid why
	want S1 || return 0
	why=$(who_missing $who)
	[ -z "$why" ] && { sid=$(as_who $who "$CL" create --idle-timeout 900 2>"$OUT/s1.err") ||
		why="cloister create failed: $(head -1 "$OUT/s1.err")"; }
	if [ -n "$why" ]; then
		for r in exec run bwrap; do na_row S1 s1.$r $who "S1 $r" "$why"; done
		return 0
	fi
	group S1 $who lat \
		"s1.exec|cloister exec SESSION -- /bin/true (running session)|$CL exec $sid -- /bin/true" \
		"s1.run|cloister run defaults$SCL -- /bin/true (fresh sandbox)|$CL run $SC -- /bin/true" \
		"s1.bwrap|Debian bwrap, Smithers' argv + sh -lc /bin/true|bwrap $SMITHERS"
	as_who $who "$CL" rm "$sid"
	compare "S1 cloister exec into a session / bwrap (Smithers' argv)" s1.exec.$who s1.bwrap.$who ratio "≤ 0.25×"
	compare "S1 cloister exec / fresh cloister run" s1.exec.$who s1.run.$who ratio "≤ 1×"
}
