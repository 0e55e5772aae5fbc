#!/bin/bash
# Resource limits on this host (cgroup v1/hybrid): OOM reporting, pids, cpu,
# peak memory, no leaked cgroup on any exit path, `cloister gc`. As root the
# limits must work; as an unprivileged user they must fail with one clear
# line and exit 125 (v1 cannot be delegated), never run unlimited.
source "$(dirname "$0")/../lib.sh"

RUN=(run --ro "$HELPERS:/h")

# Sandbox cgroup dirs that belong to the cloister with pid $1.
cg_dirs_of() {
	local d
	for d in /sys/fs/cgroup/*/cloister/"$1"-* /sys/fs/cgroup/cloister/"$1"-*; do
		[ -d "$d" ] && echo "$d"
	done
}
jget() {  # file key
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print("null" if v is None else (str(v).lower() if isinstance(v,bool) else v))' "$1" "$2"
}
# Runs cloister in the background so its pid is known: sets PID, RC, OUT, ERR.
clr_bg() {
	"$CL" "$@" >out 2>err & PID=$!
	wait $PID; RC=$?
	OUT=$(cat out); ERR=$(cat err)
}
# Some process is in the cgroup(s) matching the glob / none is in any dir.
procs_in() { local f; for f in $1/cgroup.procs; do grep -q . "$f" 2>/dev/null && return 0; done; return 1; }
no_procs_in() { local d; for d in "$@"; do grep -q . "$d/cgroup.procs" 2>/dev/null && return 1; done; return 0; }
# The unprivileged branch: the limit fails loudly, names itself, says why
# and what to do, and leaves no cgroup.
assert_limit_refused() {  # flag
	assert_eq 125 "$RC" "exit code"
	assert_contains "$ERR" "$1" "error names the limit"
	assert_contains "$ERR" "cannot create cgroup" "error says why"
	assert_contains "$ERR" "run as root" "error says what to do"
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c .)" "one line"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left"
}

t_oom_killed_reported() {
	clr_bg "${RUN[@]}" --json-status st.json --memory 32m -- /h/cg_hog mem 200
	if ! is_root; then assert_limit_refused --memory; return; fi
	assert_eq 137 "$RC" "exit code"
	assert_eq true "$(jget st.json oom_killed)" "oom_killed"
	assert_eq 137 "$(jget st.json exit_code)" "status exit_code"
	assert_eq 9 "$(jget st.json signal)" "signal"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left after OOM"
}

t_under_limit_survives() {
	clr_bg "${RUN[@]}" --json-status st.json --memory 96m --memory-swap 96m -- /h/cg_hog mem 16
	if ! is_root; then assert_limit_refused --memory; return; fi
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_contains "$OUT" "touched 16 MB"
	assert_eq false "$(jget st.json oom_killed)" "oom_killed"
}

t_peak_memory_reported() {
	clr_bg "${RUN[@]}" --json-status st.json --memory 128m -- /h/cg_hog mem 40
	if ! is_root; then assert_limit_refused --memory; return; fi
	assert_eq 0 "$RC" "exit code ($ERR)"
	local peak; peak=$(jget st.json memory_peak_bytes)
	[ "$peak" -ge $((40 << 20)) ] && [ "$peak" -le $((128 << 20)) ] ||
		fail "memory_peak_bytes $peak not within 40 MiB..128 MiB"
}

t_pids_stops_fork_bomb() {
	local m; m=$(marker bomb)
	clr_bg "${RUN[@]}" --timeout 30 --pids 16 -- /h/cg_hog forks 500 "$m"
	if ! is_root; then assert_limit_refused --pids; return; fi
	assert_eq 0 "$RC" "exit code ($ERR)"
	local ok failed
	read -r _ ok _ failed <<<"$OUT"
	[ "$ok" -lt 16 ] || fail "forked $ok processes despite --pids 16"
	[ "$failed" -gt 400 ] || fail "only $failed forks failed"
	# The host is unaffected: it still forks, and nothing of the bomb is left.
	/bin/true || fail "host cannot fork"
	assert_gone "$m"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left"
}

t_cpus_half_bounds_busy_loop() {
	clr_bg "${RUN[@]}" --json-status st.json --cpus 0.5 -- /h/cg_hog spin 2
	if ! is_root; then assert_limit_refused --cpus; return; fi
	assert_eq 0 "$RC" "exit code ($ERR)"
	python3 - st.json <<'PY' || fail "cpu usage out of band: $(cat st.json)"
import json, sys
s = json.load(open(sys.argv[1]))
cpu = s["user_ms"] + s["sys_ms"]
# A wide band: at most 0.7 of wall (unlimited would be ~1.0), and some cpu
# really was measured from the cgroup.
sys.exit(0 if 100 < cpu <= 0.7 * s["wall_ms"] else 1)
PY
}

t_no_limits_needs_no_cgroup() {
	clr_bg "${RUN[@]}" --json-status st.json -- /bin/echo plain
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq plain "$OUT"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup created without limit flags"
	assert_eq false "$(jget st.json oom_killed)" "oom_killed"
}

t_cgroup_exists_while_running_then_removed() {
	mkfifo gate
	"$CL" "${RUN[@]}" --memory 64m --pids 64 -- /bin/sh -c 'read x; : marker-exists' <gate >out 2>err &
	PID=$!
	exec 9>gate   # the sandbox runs until the test closes the gate
	local seen=""
	# pids is created last: wait for it so both are seen.
	has_pids() { seen=$(cg_dirs_of $PID); [[ $seen == */pids/* ]]; }
	is_root && { wait_until has_pids || fail "no pids cgroup appeared"; }
	exec 9>&-
	wait $PID; RC=$?
	if ! is_root; then ERR=$(cat err); assert_limit_refused --memory; return; fi
	assert_eq 0 "$RC" "exit code ($(cat err))"
	assert_contains "$seen" "/memory/cloister/$PID-" "memory cgroup while running"
	assert_contains "$seen" "/pids/cloister/$PID-" "pids cgroup while running"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left after normal exit"
}

# A process in the sandbox cgroup but outside its pid namespace survives the
# namespace teardown: only the cgroup cleanup (kill loop on v1) gets it.
t_stray_in_cgroup_killed() {
	mkfifo gate
	"$CL" "${RUN[@]}" --memory 64m -- /bin/sh -c 'read x || :' <gate >out 2>err &
	PID=$!
	exec 9>gate
	local d="" stray
	if ! is_root; then exec 9>&-; wait $PID; RC=$?; ERR=$(cat err); assert_limit_refused --memory; return; fi
	has_mem() { d=$(cg_dirs_of $PID | grep /memory/); [ -n "$d" ]; }
	wait_until has_mem || fail "no memory cgroup appeared"
	sleep 300 >/dev/null 2>&1 9>&- & stray=$!   # not holding the gate open
	echo $stray > "$d/cgroup.procs" || { kill $stray; fail "could not move the stray into $d"; }
	exec 9>&-
	wait $PID; RC=$?
	wait $stray; local src=$?
	assert_eq 0 "$RC" "exit code ($(cat err))"
	assert_eq 137 "$src" "stray killed by SIGKILL"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left"
}

# The sandbox sees its own cgroup as the root of every hierarchy it was
# placed in (v1: the child unshares a cgroup ns after the parent's "go").
t_cgroup_namespace_rooted_at_sandbox() {
	clr_bg "${RUN[@]}" --memory 64m --pids 64 -- /h/cg_hog cgroup
	if ! is_root; then assert_limit_refused --memory; return; fi
	assert_eq 0 "$RC" "exit code ($ERR)"
	printf '%s\n' "$OUT" | grep -qE '^[0-9]+:memory:/$' || fail "memory cgroup not / inside: $OUT"
	printf '%s\n' "$OUT" | grep -qE '^[0-9]+:pids:/$' || fail "pids cgroup not / inside: $OUT"
}

t_no_leak_after_timeout() {
	clr_bg "${RUN[@]}" --timeout 0.5 --memory 64m -- /bin/sleep 30
	if ! is_root; then assert_limit_refused --memory; return; fi
	assert_eq 124 "$RC" "exit code"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left after timeout"
}

t_no_leak_after_setup_failure() {
	# The child fails a mount step after the cgroup exists.
	clr_bg "${RUN[@]}" --memory 64m --ro /nonexistent-cloister-src:/x -- /bin/true
	assert_eq 125 "$RC" "exit code"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left after setup failure"
	# And a cgroup step itself fails: a parent that does not exist.
	clr_bg "${RUN[@]}" --memory 64m --cgroup-parent /no-such-parent-cloister -- /bin/true
	assert_eq 125 "$RC" "exit code"
	assert_contains "$ERR" "no-such-parent-cloister"
	assert_eq "" "$(cg_dirs_of "$PID")" "cgroup dirs left after cgroup failure"
}

# SIGKILL of cloister: the sandbox dies with it (parent-death signal) but
# nobody removes the cgroup; `cloister gc` (or the next run) does.
# Root branches: the run's cgroups go under a parent of this test's own
# (--cgroup-parent): any other root launch on the host sweeps dead runs'
# cgroups beside its own, so under the shared default parent a concurrent
# make check (or any root cloister user) could remove ours first.
own_parent() {  # -> PAR, made in the memory hierarchy; removed at exit
	PAR=/cltest-gc-$$-$RANDOM
	mkdir "/sys/fs/cgroup/memory$PAR" || fail "cannot make $PAR"
	trap 'rmdir /sys/fs/cgroup/memory$PAR/* /sys/fs/cgroup/memory$PAR 2>/dev/null' EXIT
}
par_dirs_of() { local d; for d in /sys/fs/cgroup/memory"$PAR"/cloister-"$1"-*; do [ -d "$d" ] && echo "$d"; done; }

t_sigkill_then_gc() {
	local m dirs
	m=$(marker gc)
	mkfifo gate
	if ! is_root; then
		"$CL" "${RUN[@]}" --memory 64m -- /bin/sh -c "read x; : $m" <gate >out 2>err &
		PID=$!
		exec 9>gate
		wait $PID; RC=$?; ERR=$(cat err); assert_limit_refused --memory
		clr gc; assert_eq 0 "$RC" "gc exit code"; assert_contains "$OUT" "cloister gc: removed"
		return
	fi
	own_parent
	"$CL" "${RUN[@]}" --memory 64m --cgroup-parent "$PAR" -- /bin/sh -c "read x; : $m" <gate >out 2>err &
	PID=$!
	exec 9>gate   # held open: the sandbox only ends by the kill below
	wait_until procs_in "/sys/fs/cgroup/memory$PAR/cloister-$PID-*" || fail "sandbox not in its cgroup"
	dirs=$(par_dirs_of $PID)
	[ -n "$dirs" ] || fail "no cgroup while running"
	kill -9 $PID; wait $PID 2>/dev/null
	wait_until no_procs_in $dirs || fail "sandbox processes outlived SIGKILL of cloister"
	assert_gone "$m"
	assert_eq "$dirs" "$(par_dirs_of $PID)" "cgroup left by the killed run (what gc is for)"
	clr gc --cgroup-parent "$PAR"
	assert_eq 0 "$RC" "gc exit code"
	assert_contains "$OUT" "removed /sys/fs/cgroup/memory$PAR/cloister-$PID-"
	assert_eq "" "$(par_dirs_of $PID)" "cgroup dirs left after gc"
}

t_sigkill_then_next_run_sweeps() {
	local m dirs pid1
	m=$(marker sweep)
	if ! is_root; then
		clr_bg "${RUN[@]}" --cpus 1 -- /bin/true; assert_limit_refused --cpus; return
	fi
	own_parent
	mkfifo gate
	"$CL" "${RUN[@]}" --memory 64m --cgroup-parent "$PAR" -- /bin/sh -c "read x; : $m" <gate >out 2>err &
	pid1=$!
	exec 9>gate
	wait_until procs_in "/sys/fs/cgroup/memory$PAR/cloister-$pid1-*" || fail "sandbox not in its cgroup"
	kill -9 $pid1; wait $pid1 2>/dev/null
	dirs=$(par_dirs_of $pid1)
	wait_until no_procs_in $dirs || fail "sandbox processes outlived SIGKILL of cloister"
	[ -n "$dirs" ] || fail "killed run left no cgroup to sweep (test cannot check anything)"
	clr_bg "${RUN[@]}" --memory 64m --cgroup-parent "$PAR" -- /bin/true
	assert_eq 0 "$RC" "next run ($ERR)"
	assert_eq "" "$(par_dirs_of $pid1)" "stale cgroup not swept by the next run"
}

t_cgroup_parent_used() {
	local par=/cltest-parent-$$ seen="" i
	if ! is_root; then
		clr_bg "${RUN[@]}" --memory 64m --cgroup-parent "$par" -- /bin/true
		assert_eq 125 "$RC" "exit code"; assert_contains "$ERR" "--memory"
		assert_contains "$ERR" "$par"
		return
	fi
	mkdir /sys/fs/cgroup/memory$par /sys/fs/cgroup/pids$par
	mkfifo gate
	"$CL" "${RUN[@]}" --memory 64m --pids 32 --cgroup-parent "$par" -- /bin/sh -c 'read x || :' <gate >out 2>err &
	PID=$!
	exec 9>gate
	has_both() { seen=$(ls -d /sys/fs/cgroup/*$par/cloister-$PID-* 2>/dev/null); [[ $seen == */pids/* ]]; }
	wait_until has_both
	exec 9>&-
	wait $PID; RC=$?
	local left; left=$(ls -d /sys/fs/cgroup/*$par/* 2>/dev/null | grep cloister-)
	rmdir /sys/fs/cgroup/memory$par /sys/fs/cgroup/pids$par
	assert_eq 0 "$RC" "exit code ($(cat err))"
	assert_contains "$seen" "/sys/fs/cgroup/memory$par/cloister-$PID-" "memory cgroup under the parent"
	assert_contains "$seen" "/sys/fs/cgroup/pids$par/cloister-$PID-" "pids cgroup under the parent"
	assert_eq "" "$left" "left under the parent"
}

# The control: the layout read from /proc/self/mountinfo (not through
# statfs, as cloister does), and what the caller may write there.
# Prints the expected detail prefix: "v2", "hybrid (v1 controllers: ...)",
# "v1 (v1 controllers: ...)" or "none".
host_cgroup_layout() {
	python3 - <<'P'
fs = {}
for l in open("/proc/self/mountinfo"):
    a, b = l.split(" - ")
    fs[a.split()[4]] = b.split()[0]      # mount point -> fs type (last wins)
root = "/sys/fs/cgroup"
if fs.get(root) == "cgroup2":
    print("v2")
else:
    mode = "hybrid" if fs.get(root + "/unified") == "cgroup2" else "v1"
    c = [x for x in ("memory", "cpu", "cpuacct", "pids", "freezer") if fs.get(root + "/" + x) == "cgroup"]
    if mode == "v1" and not ({"memory", "pids"} & set(c)):
        print("none")
    else:
        print("%s (v1 controllers: %s)" % (mode, " ".join(c) or "none"))
P
}
t_check_reports_cgroups() {
	local want; want=$(host_cgroup_layout)
	note "host cgroup layout: $want"
	clr check --json
	assert_eq 0 "$RC"
	local c; c=$(printf '%s' "$OUT" | python3 -c 'import json,sys; [print(p["ok"], p["detail"], p.get("hint") or "") for p in json.load(sys.stdin) if p["name"]=="cgroups"]')
	case $want in
	none)
		assert_contains "$c" "False no cgroup filesystem at /sys/fs/cgroup" ;;
	v2)
		assert_contains "$c" " v2 (controllers: "
		assert_contains "$c" "--memory "; assert_contains "$c" "--cpus "; assert_contains "$c" "--pids " ;;
	*)
		assert_contains "$c" " $want; limits:"
		# v1 hierarchies: root may write each one mounted, nobody else may.
		local f ok=True lim=""
		for f in memory:--memory cpu:--cpus pids:--pids; do
			if is_root && [ -w "/sys/fs/cgroup/${f%%:*}" ] && [[ "$want" == *" ${f%%:*}"[\ \)]* ]]; then
				lim="$lim, ${f#*:} yes"
			else
				lim="$lim, ${f#*:} no"; ok=False
			fi
		done
		assert_contains "$c" "limits: ${lim#, }"
		assert_contains "$c" "$ok "
		is_root || assert_contains "$c" "root-only" ;;
	esac
}

run_tests
