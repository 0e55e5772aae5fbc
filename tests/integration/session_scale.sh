#!/bin/bash
# Sessions at host scale (issue 35): more sessions of one user than the
# host's stock fs.inotify.max_user_instances (128 on Debian), which one
# inotify instance per session server used to cap; each serves an exec,
# `ls` lists them all, and removing them leaves nothing behind. A kernel
# limit that stops a create is named in its error, with its value.
. "$(dirname "$0")/session_lib.bash"

N=200
# Commands in flight at once: creates, execs and removes run in parallel
# batches so the pass stays well under a minute on a small machine.
P=8

# Runs `cloister ARGS... ITEM` (ITEM in place of {}) for each line of
# stdin, P at a time; prints one line per failure.
each() {
	xargs -P "$P" -I{} sh -c 'e=$("$0" "$@" 2>&1 >/dev/null) || echo "$* failed ($?): $e"' "$CL" "$@"
}
secs() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

t_more_sessions_than_inotify_instances() {
	local lim m t0 t_all failed ids sups inits cgs id pid cg n_ls timing
	m=$(marker scale)
	lim=$(cat /proc/sys/fs/inotify/max_user_instances)
	if [ "$lim" -lt "$N" ]; then
		note "fs.inotify.max_user_instances = $lim < $N sessions"
	else
		note "premise does not hold: fs.inotify.max_user_instances = $lim >= $N (checked anyway)"
	fi
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	RUNDIR=$CLOISTER_RUNTIME_DIR
	trap rm_all EXIT
	t_all=$EPOCHREALTIME; t0=$t_all
	failed=$(seq 1 "$N" | each create --name "$m-{}")
	[ -z "$failed" ] || fail "$(echo "$failed" | wc -l) of $N creates failed, first: $(echo "$failed" | head -1)"
	timing="create $(secs "$t0") s"

	# ls: all of them, each running, with its supervisor and init
	"$CL" ls --json >"$T_TMP/ls.json" || fail "ls --json"
	ids=$(python3 -c 'import json,sys; [print(s["id"]) for s in json.load(open(sys.argv[1]))]' "$T_TMP/ls.json")
	assert_eq "$N" "$(echo "$ids" | grep -c .)" "sessions in ls --json"
	assert_eq "$N" "$(python3 -c 'import json,sys; print(sum(s["state"] == "running" for s in json.load(open(sys.argv[1]))))' "$T_TMP/ls.json")" "running sessions"
	n_ls=$("$CL" ls | grep -c "$m-")
	assert_eq "$N" "$n_ls" "sessions in ls"
	sups=$(python3 -c 'import json,sys; [print(s["supervisor_pid"]) for s in json.load(open(sys.argv[1]))]' "$T_TMP/ls.json")
	inits=$(python3 -c 'import json,sys; [print(s["init_pid"]) for s in json.load(open(sys.argv[1]))]' "$T_TMP/ls.json")
	# Their cgroups (root: one per session; a user gets none here), to
	# look for after rm.
	cgs=$(for pid in $inits; do sed -n 's/^[0-9]*:[^:]*:\(.*cloister.*\)/\1/p' "/proc/$pid/cgroup"; done | sort -u)
	! is_root || [ -n "$cgs" ] || note "no cloister cgroup seen as root"

	t0=$EPOCHREALTIME
	failed=$(echo "$ids" | each exec {} -- true)
	[ -z "$failed" ] || fail "$(echo "$failed" | wc -l) of $N execs failed, first: $(echo "$failed" | head -1)"
	timing="$timing, exec $(secs "$t0") s"

	t0=$EPOCHREALTIME
	failed=$(echo "$ids" | each rm {})
	[ -z "$failed" ] || fail "$(echo "$failed" | wc -l) of $N removals failed, first: $(echo "$failed" | head -1)"
	timing="$timing, rm $(secs "$t0") s"

	# rm returned for each: everything is gone already (no waiting)
	assert_eq "" "$(ls -A "$RUNDIR")" "state left in the runtime dir"
	assert_eq "[]" "$("$CL" ls --json)" "ls after removing all"
	assert_no_process "$m"
	for pid in $sups $inits; do
		gone_pid "$pid" || fail "process $pid left: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	done
	for cg in $cgs; do
		for d in /sys/fs/cgroup/*"$cg" /sys/fs/cgroup"$cg"; do
			[ ! -d "$d" ] || fail "cgroup $d left"
		done
	done
	! grep -qF "$T_TMP" /proc/self/mountinfo || fail "mounts left: $(grep -F "$T_TMP" /proc/self/mountinfo | head -3)"
	note "$N sessions: $timing; total $(secs "$t_all") s"
}

# When a kernel limit stops a create anyway, the error names it with its
# value (issue 35 item 2), and nothing is left behind.
t_fd_limit_is_named() {
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	OUT=$(prlimit --nofile=16:16 "$CL" create 2>"$T_TMP/err"); RC=$?; ERR=$(cat "$T_TMP/err")
	assert_eq 125 "$RC" "create with 16 fds ($OUT)"
	assert_contains "$ERR" "Too many open files (the open-file limit of the process: ulimit -n = 16)"
	assert_eq "" "$(ls -A "$CLOISTER_RUNTIME_DIR")" "state left"
}

# The user-namespace limit is set to 0 in a user namespace of the test's
# own (the limits are per namespace): the host's sysctls stay as they are.
t_namespace_limit_is_named() {
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	unshare -U -r true 2>/dev/null || skip "cannot make a user namespace here (unshare -U -r)"
	OUT=$(unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$0" create' \
		"$CL" 2>"$T_TMP/err"); RC=$?; ERR=$(cat "$T_TMP/err")
	assert_eq 125 "$RC" "create with user.max_user_namespaces = 0 ($OUT)"
	assert_contains "$ERR" "No space left on device (too many namespaces for this user: user.max_user_namespaces = 0"
	assert_eq "" "$(ls -A "$CLOISTER_RUNTIME_DIR" 2>/dev/null)" "state left"
}

run_tests
